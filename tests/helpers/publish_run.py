"""A small finished run for the publish stage, made by hand (real JPEGs, three annotators in variants A and B, one
excluded, a keyword task) and the run settings the publish tests use: shared by tests/unit/publish/test_publish.py and
the fuzzing of `squidflow publish check` in tests/robustness/test_fuzz_readers.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
from PIL import Image

from squidflow.config.validation import load_config
from squidflow.contracts import schemas
from squidflow.judgments.agreement import agreement_table
from squidflow.judgments.scores import image_scores
from squidflow.publish.dataset import RunSettings, RunTables

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DEFAULTS = load_config(ROOT / "config" / "config.yaml", check_paths=False)
INTERVALS = dict(SCHEMA_DEFAULTS["intervals"])


def annotator_report(annotators, excluded=()) -> pl.DataFrame:
    ids = sorted(set(annotators))
    return pl.DataFrame(
        {
            "annotator": ids,
            "n_judgments": [1] * len(ids),
            "flags": [[] for _ in ids],
            "excluded": [a in excluded for a in ids],
        },
        schema=dict(schemas.ANNOTATOR_REPORT.columns),
    )


def settings(**publish) -> RunSettings:
    cfg = {**SCHEMA_DEFAULTS["publish"], **publish}
    return RunSettings(
        publish=cfg,
        demo=publish.pop("_demo", True),
        judgment_source="simulated",
        platform="label_studio",
        sources=["demo"],
        intervals=INTERVALS,
        frames={"n": 36, "k": 2, "backbone": "efficientnet_lite0"},
    )


def small_run(tmp: Path) -> RunTables:
    """Two demo videos, two frames each (real JPEGs), rated by three annotators in variants A and B; one annotator
    excluded by the quality step; a keyword task."""
    rng = np.random.default_rng(0)
    frames, videos, judgments, keywords = [], [], [], []
    (tmp / "images").mkdir(parents=True)
    for v, (event, split) in enumerate([("wedding", "train"), ("parade", "test")]):
        vid = f"{event}_00"
        videos.append(
            {
                "video_id": vid,
                "event": event,
                "source": "demo",
                "path": str(tmp / f"{vid}.mp4"),
                "status": "ok",
                "language": "en",
                "query": None,
                "url": None,
                "webpage_url": None,
                "license": None,
            }
        )
        (tmp / f"{vid}.mp4").write_bytes(b"video")
        for f in range(2):
            path = tmp / "images" / f"{vid}_{f * 10}.jpg"
            Image.fromarray(rng.integers(0, 255, (12, 16, 3), dtype=np.uint8)).save(path, quality=90)
            frames.append(
                {
                    "image_id": f"{vid}_{f * 10}",
                    "video_id": vid,
                    "event": event,
                    "frame_index": f * 10,
                    "pts_s": f * 0.4,
                    "cluster": f,
                    "distance": 0.1,
                    "image_path": str(path),
                    "split": split,
                }
            )
            for variant, prompt in (("A", event), ("B", "protest")):
                for k, ann in enumerate(["W1", "W2", "W3"]):
                    judgments.append(
                        {
                            "video_id": vid,
                            "frame_index": f * 10,
                            "event_prompt": prompt,
                            "variant": variant,
                            "annotator": ann,
                            "position": k,
                            "hit": f"{variant}-{v}",
                            "rating": int(rng.integers(0, 101)),
                            "round": 1,
                            "source": "simulated",
                        }
                    )
            keywords.append(
                {
                    "video_id": vid,
                    "frame_index": f * 10,
                    "annotator": "W4",
                    "hit": "K-0",
                    "position": 1,
                    "keyword": "flowers",
                    "normalised": "flowers",
                    "round": 1,
                    "source": "simulated",
                }
            )
    j = pl.DataFrame(judgments, schema=dict(schemas.JUDGMENTS.columns))
    report = annotator_report(j["annotator"], excluded={"W3"})
    full_videos = pl.DataFrame(
        [{c: v.get(c) for c in schemas.VIDEOS.columns} for v in videos], schema=dict(schemas.VIDEOS.columns)
    )
    return RunTables(
        judgments=j,
        annotator_report=report,
        scores=image_scores(j, ["W3"]),
        table7=agreement_table(j),
        frames=pl.DataFrame(frames, schema=dict(schemas.FRAMES.columns)),
        videos=full_videos,
        keywords=pl.DataFrame(keywords, schema=dict(schemas.KEYWORD_JUDGMENTS.columns)),
        dropped_md="# Dropped videos\n\n0 of 2 videos dropped.\n",
        task_pages={
            "rating": "<details><summary><strong>Instructions</strong></summary>\n<p>Rate <b>each</b> image.</p>"
        },
    )
