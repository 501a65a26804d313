"""Synthetic inputs for the training stage's tests: what the frames and judgments stages hand over, made small.

Each event has its own base colour, and an image's ambiguity mixes in a random colour, so a model can learn the
events and the mean human judgment falls as the ambiguity rises (variant B judgments of the target prompt are high
for target frames and low for the similar event's frames), like the real artifacts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
from PIL import Image

from squidflow.contracts import io, schemas

EVENTS = ["birthday_party", "wedding", "parade", "protest"]
COLOURS = {
    "birthday_party": (220, 60, 60),
    "wedding": (240, 240, 240),
    "parade": (60, 60, 220),
    "protest": (60, 200, 60),
}


def _image(rng: np.random.Generator, event: str, ambiguity: float, size=(120, 160)) -> Image.Image:
    base = np.array(COLOURS[event]) * (1 - ambiguity) + rng.uniform(0, 255, 3) * ambiguity
    return Image.fromarray(np.clip(base + rng.normal(0, 30, (*size, 3)), 0, 255).astype(np.uint8))


def _complete(rows: list[dict], schema: schemas.Schema) -> pl.DataFrame:
    """The rows, with every other column of the artifact's schema as nulls (columns other stages add later)."""
    df = pl.DataFrame(rows)
    return df.with_columns([pl.lit(None, dtype=t).alias(c) for c, t in schema.columns.items() if c not in df.columns])


def make_inputs(
    workdir: Path, *, videos_per_event: int = 3, frames_per_video: int = 6, sd_per_event: int = 30, seed: int = 0
) -> Path:
    """Write results/dataset/frames.parquet (+ JPEGs), results/judgments/{image_scores,judgments,annotator_report}.parquet
    and a standard-data folder <workdir>/standard/<event>/*.jpg under `workdir`; return the standard-data folder."""
    rng = np.random.default_rng(seed)
    frames, scores = [], []
    splits = ["train", "val", "test"]
    for event in EVENTS:
        for v in range(videos_per_event):
            video_id = f"{event}-{v}"
            for f in range(frames_per_video):
                path = workdir / "results" / "dataset" / "images" / video_id / f"{f}.jpg"
                path.parent.mkdir(parents=True, exist_ok=True)
                ambiguity = f / frames_per_video
                _image(rng, event, ambiguity).save(path)
                frames.append(
                    {
                        "image_id": f"{video_id}_{f}",
                        "video_id": video_id,
                        "event": event,
                        "frame_index": f,
                        "pts_s": f / 25,
                        "cluster": f,
                        "distance": 0.0,
                        "image_path": str(path),
                        "split": splits[v % 3],
                    }
                )
                own = 100 * (1 - ambiguity)
                scores.append(
                    {
                        "video_id": video_id,
                        "frame_index": f,
                        "event_prompt": event.replace("_", " "),
                        "variant": "A",
                        "people_mean": own,
                        "people_std": 10.0,
                        "n": 3,
                    }
                )
                if event in ("birthday_party", "wedding"):
                    target = own if event == "birthday_party" else 40 * ambiguity
                    scores.append(
                        {
                            "video_id": video_id,
                            "frame_index": f,
                            "event_prompt": "birthday party",
                            "variant": "B",
                            "people_mean": target,
                            "people_std": 10.0,
                            "n": 3,
                        }
                    )
    standard = workdir / "standard"
    for event in EVENTS:
        (standard / event).mkdir(parents=True, exist_ok=True)
        for i in range(sd_per_event):
            _image(rng, event, 0.05).save(standard / event / f"{i}.jpg")
    io.write_parquet(
        _complete(frames, schemas.FRAMES), workdir / "results" / "dataset" / "frames.parquet", schemas.FRAMES
    )
    io.write_parquet(
        _complete(scores, schemas.IMAGE_SCORES),
        workdir / "results" / "judgments" / "image_scores.parquet",
        schemas.IMAGE_SCORES,
    )
    # the judgments behind the scores (three annotators per image and prompt) and a quality report excluding nobody
    judgments = [
        {
            "video_id": r["video_id"],
            "frame_index": r["frame_index"],
            "event_prompt": r["event_prompt"],
            "variant": r["variant"],
            "annotator": f"w{k}",
            "position": k,
            "hit": f"{r['variant']}-{r['video_id']}",
            "rating": int(round(r["people_mean"])),
            "round": 1,
            "source": "simulated",
        }
        for r in scores
        for k in range(3)
    ]
    io.write_parquet(
        pl.DataFrame(judgments), workdir / "results" / "judgments" / "judgments.parquet", schemas.JUDGMENTS
    )
    report = pl.DataFrame(
        {
            "annotator": ["w0", "w1", "w2"],
            "n_judgments": [len(scores)] * 3,
            "flags": [[], [], []],
            "excluded": [False] * 3,
        }
    )
    io.write_parquet(report, workdir / "results" / "judgments" / "annotator_report.parquet", schemas.ANNOTATOR_REPORT)
    return standard
