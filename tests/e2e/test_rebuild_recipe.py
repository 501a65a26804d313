"""The card's rebuild recipe for reference-mode images, followed literally (issue 47, deliverable 5).

A run of your own videos (a local folder: mp4, mkv, webm, names with spaces) makes its frames; the publish stage's
library publishes them by reference (no pixels). Then, from the published folder alone: the videos are served by a
loopback HTTP server (a copy of the folder, `http.server` on 127.0.0.1 in a thread), the card's config is taken from
the card's own text (only its two placeholders filled: this folder and the server's address), the card's command is
run as printed in a folder that looks like a fresh clone, and every published image comes back, pixel for pixel, at
the path the card names. Slow: the workflow runs twice (videos + frames, each with the image backbone)."""

from __future__ import annotations

import functools
import http.server
import os
import re
import shlex
import subprocess
import threading
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from helpers.publish_run import INTERVALS, SCHEMA_DEFAULTS, annotator_report
from helpers.runs import clone_like, cores, snakemake
from helpers.videotools import make_clip
from PIL import Image

from squidflow.config.validation import load_config
from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet
from squidflow.judgments.agreement import agreement_table
from squidflow.judgments.scores import image_scores
from squidflow.publish import card
from squidflow.publish.dataset import RunSettings, RunTables, publish

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
CLIPS = {"concert": [("stage a.mp4", 0), ("crowd.mkv", 60)], "market": [("fruit stand.webm", 180)]}
# VP9: a video fetched from a URL is remuxed into MP4 (squidflow.videos.download), which cannot hold VP8 (make_clip's
# WebM default): a VP8 WebM served by URL ends `corrupt` ("cannot remux to MP4"), a limit of acquisition, not of the
# recipe
VP9 = ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-pix_fmt", "yuv420p"]
RUN = {"stages": ["videos", "frames"], "frames": {"n": 6, "shards": 1}, "selection": {"k": 2}}


def run_in(directory: Path, configfile: Path, *targets: str) -> None:
    snakemake("--directory", directory, "--configfile", configfile, "--cores", str(cores()), *targets, check=True)


def ratings(frames: pl.DataFrame) -> pl.DataFrame:
    """Three raters per image in variants A and B (hand-made: the recipe is about the images, not the ratings)."""
    rng = np.random.default_rng(0)
    rows = [
        {"video_id": r["video_id"], "frame_index": r["frame_index"], "event_prompt": r["event"] if v == "A" else "a parade",
         "variant": v, "annotator": f"{v}{k}", "position": k, "hit": f"{v}-0", "rating": int(rng.integers(0, 101)),
         "round": 1, "source": "mturk", "source_file": "batch.csv", "wave": "first"}
        for r in frames.iter_rows(named=True)
        for v in ("A", "B")
        for k in range(3)
    ]  # fmt: skip
    return pl.DataFrame(rows, schema=dict(schemas.JUDGMENTS.columns))


def published_by_reference(work: Path, config: Path, folder: Path) -> None:
    """The run's own frames and manifest published by the publish stage's library, `publish.images: reference`, with
    the frame settings the rule passes from the run's config (workflow/rules/inputs/publish.smk,
    get_publish_frames_settings)."""
    frames = read_parquet(work / "results/dataset/frames.parquet", schemas.FRAMES)
    videos = read_parquet(work / "results/videos/videos_checked.parquet", schemas.VIDEOS)
    judgments = ratings(frames)
    defaults = SCHEMA_DEFAULTS
    run = load_config(config, check_paths=False)  # the schema's defaults under the run's own config, as Snakemake
    pixels = {k: run["frames"][k] for k in ("decoder", "letterbox", "letterbox_below", "letterbox_to")}
    pixels |= {k: run["selection"][k] for k in ("image_format", "image_quality")}
    publish(
        folder,
        RunTables(
            judgments=judgments,
            annotator_report=annotator_report(judgments["annotator"]),
            scores=image_scores(judgments, []),
            table7=agreement_table(judgments),
            frames=frames,
            videos=videos,
        ),
        RunSettings(
            publish={**defaults["publish"], "name": "my-events", "license": "cc-by-4.0", "images": "reference",
                     "citation": "@misc{myevents, title={My events}}"},
            demo=False,
            judgment_source="mturk",
            platform="mturk",
            sources=["local"],
            intervals=INTERVALS,
            frames={"n": RUN["frames"]["n"], "k": RUN["selection"]["k"], "backbone": "efficientnet_lite0", **pixels},
        ),
    )  # fmt: skip


def fenced(text: str, lang: str) -> str:
    blocks = re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1, f"the card's Images section should hold one {lang} block:\n{text}"
    return blocks[0]


@pytest.fixture
def served(tmp_path):
    """http://127.0.0.1:<port>/ serving the folder tmp_path/served (a thread of this process, stopped after)."""
    root = tmp_path / "served"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


def test_the_cards_recipe_rebuilds_every_published_image_pixel_for_pixel(tmp_path, served):
    videos = tmp_path / "my videos"
    for event, clips in CLIPS.items():
        for name, hue in clips:
            encode = VP9 if name.endswith(".webm") else None
            make_clip(videos / event / name, size="96x72", rate=12, seconds=3, hue=hue, encode=encode)
    work = tmp_path / "made"
    work.mkdir()
    config = work / "mine.yaml"
    config.write_text(yaml.safe_dump({**RUN, "sources": [{"type": "local", "root": str(videos)}]}))
    run_in(work, config, "results/dataset/frames.parquet")
    folder = tmp_path / "published" / "my-events"
    published_by_reference(work, config, folder)

    # what the folder says: sources relative to the videos' folder, never a path of the machine that made it
    images = pl.concat([pl.read_parquet(p) for p in sorted((folder / "data" / "images").glob("*.parquet"))])
    assert images.height == pl.read_parquet(work / "results/dataset/frames.parquet").height > 0
    sources = set(images["source"])
    assert sources == {"concert/stage a.mp4", "concert/crowd.mkv", "market/fruit stand.webm"}, sources
    assert not any(str(tmp_path) in s or s.startswith("/") for s in sources)
    text = (folder / "README.md").read_text(encoding="utf-8")
    assert str(tmp_path) not in text and str(tmp_path) not in (folder / "rebuild" / "videos.csv").read_text()
    section = text[text.index("## Images") : text.index("## Licences and terms")]

    # followed literally: a copy of the videos folder served on loopback, the card's config with its placeholders
    # filled, the card's command as printed, in a fresh clone
    root, url = served
    for event, clips in CLIPS.items():
        (root / event).mkdir()
        for name, _ in clips:
            (root / event / name).write_bytes((videos / event / name).read_bytes())
    snippet = fenced(section, "yaml")
    assert card.DATASET_PLACEHOLDER in snippet and card.VIDEOS_PLACEHOLDER in snippet
    clone = clone_like(tmp_path, leave_out=("rebuild", "rebuild.yaml"))
    filled = snippet.replace(card.DATASET_PLACEHOLDER, str(folder)).replace(card.VIDEOS_PLACEHOLDER, url)
    (clone / "rebuild.yaml").write_text(filled, encoding="utf-8")
    [command] = [ln for ln in fenced(section, "bash").splitlines() if ln.strip()]
    res = subprocess.run(
        shlex.split(command),
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=1800,
        # offline, without the public-data mirror (issue 58): only the loopback server answers; a SQUID-E release file
        # fetched for another dataset would fail here
        env={
            **{k: v for k, v in os.environ.items() if k != "SQUIDFLOW_DATA"},
            **dict.fromkeys(("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"), "http://127.0.0.1:9"),
            **dict.fromkeys(("NO_PROXY", "no_proxy"), "127.0.0.1,localhost"),
        },
    )
    assert res.returncode == 0, command + "\n" + res.stdout[-4000:] + res.stderr[-4000:]
    assert not (clone / "rebuild/results/downloads").exists() or not any(
        "huj" in p.name for p in (clone / "rebuild/results/downloads").rglob("*")
    )

    # every published image at the path the card names, pixel for pixel the frame the dataset was made from
    named = re.search(r"is then (\S+<video_id>/<frame_index>\.jpg)", section).group(1)
    original = {r["image_id"]: r["image_path"] for r in pl.read_parquet(work / "results/dataset/frames.parquet").iter_rows(named=True)}  # fmt: skip
    for r in images.iter_rows(named=True):
        rebuilt = clone / named.replace("<video_id>", r["video_id"]).replace("<frame_index>", str(r["frame_index"]))
        assert rebuilt.exists(), f"{r['image_id']}: no {rebuilt}"
        with Image.open(rebuilt) as a, Image.open(work / original[r["image_id"]]) as b:
            assert np.array_equal(np.asarray(a), np.asarray(b)), f"{r['image_id']}: pixels differ"
        assert rebuilt.read_bytes() == (work / original[r["image_id"]]).read_bytes(), f"{r['image_id']}: bytes differ"
    rebuilt_frames = pl.read_parquet(clone / "rebuild/results/dataset/frames.parquet")
    assert sorted(rebuilt_frames["image_id"]) == sorted(images["image_id"])
