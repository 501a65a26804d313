"""Takedowns that propagate (issue 48, acceptance): a copy of the shared small run gets one of its videos in a
`takedown:` list and is run again. Afterwards no file under results/ but the takedown log names that video or holds a
frame of it (ids in names, text and Parquet cells; the sha256 of every JPEG it had), the published version is raised,
the card counts the removal by reason and its images right, and every other image's published row is as it was.

results/videos/demo/ is the demo *source* (rule make_demo_videos' synthetic videos, catalog and ground truth: what a
researcher's own folder is to a `local` source): a takedown leaves a source's own files alone and takes the video out
of everything squidflow made from it."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest
from helpers.runs import cores

TEXT = {".csv", ".md", ".json", ".jsonl", ".txt", ".tsv", ".html", ".yaml", ".yml", ".tex", ".rst", ".vtt", ".srt"}
IMAGES = {".jpg", ".jpeg", ".png"}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def published_images(folder: Path) -> pl.DataFrame:
    return pl.concat([pl.read_parquet(p) for p in sorted((folder / "data" / "images").glob("*.parquet"))])


def mentions(path: Path, video_id: str) -> bool:
    """Whether a file names the video in its text or in any text cell of its Parquet columns."""
    if path.suffix in TEXT:
        return video_id in path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".parquet":
        table = pq.read_table(path)
        texty = [
            f.name for f in table.schema if "string" in str(f.type) or "list" in str(f.type) or "struct" in str(f.type)
        ]
        return any(video_id in str(v) for name in texty for v in table.column(name).to_pylist())
    return False


@pytest.mark.slow
def test_a_takedown_removes_the_video_from_everything_the_run_made(small_workflow, tmp_path):
    copy = type(small_workflow)(tmp_path / "run", small_workflow.configfiles)
    shutil.copytree(small_workflow.directory, copy.directory, symlinks=True)
    results = copy.results
    (results / ".squidflow-shared-run-done").unlink(missing_ok=True)
    frames = pl.read_parquet(results / "dataset" / "frames.parquet")
    video = sorted(frames["video_id"].unique().to_list())[0]
    theirs = {sha256(p) for p in results.rglob("*") if p.suffix in IMAGES and video in p.name}
    theirs |= {
        sha256(Path(copy.directory / p) if not Path(p).is_absolute() else Path(p))
        for p in frames.filter(pl.col("video_id") == video)["image_path"].to_list()
    }
    assert theirs
    [publish] = [p.parent for p in (results / "publish").glob("*/croissant.json")]  # beside it: methods/ (issue 58)
    before = published_images(publish)
    others_before = before.filter(pl.col("video_id") != video).sort("image_id")
    removed_images = before.height - others_before.height
    assert removed_images > 0
    version_before = json.loads((publish / "croissant.json").read_text())["version"]

    issued = {
        p: p.read_bytes()
        for p in (results / "annotation").rglob("*")
        if p.name in ("hits_A.csv", "hits_B.csv", "chosen.csv") or p.parent.name == "issued"
    }
    assert len(issued) >= 5  # round 1's HITs, round 2's HITs and chosen images, their records
    (copy.directory / "takedown.csv").write_text(f"video_id,requested,reason\n{video},2026-11-20,privacy\n")
    overlay = copy.directory / "takedown.yaml"
    overlay.write_text("takedown: takedown.csv\n")
    rerun = type(copy)(copy.directory, (*copy.configfiles, overlay))
    res = rerun.snakemake("--cores", str(cores()), timeout=2400, env={"PYTHONHASHSEED": "0"})
    assert res.returncode == 0, res.stdout[-5000:] + res.stderr[-5000:]

    for path, data in issued.items():  # a takedown never changes a task issued (issue 58)
        assert path.read_bytes() == data, f"{path} was rewritten by the takedown"
    log = results / "videos" / "takedown_log.csv"
    assert video in log.read_text()
    offenders = []
    for path in sorted(p for p in results.rglob("*") if p.is_file()):
        rel = path.relative_to(results)
        # the issued task records keep the ids they were issued with (answers match them), never pixels (issue 58)
        if path == log or rel.as_posix().startswith(("videos/demo/", "annotation/")):
            if rel.as_posix().startswith("annotation/") and path.suffix in IMAGES:
                offenders.append(f"{rel}: an image in the issued task records")
            continue
        if video in rel.as_posix() or mentions(path, video):
            offenders.append(f"{rel}: names {video}")
        elif path.suffix in IMAGES and sha256(path) in theirs:
            offenders.append(f"{rel}: holds a frame of {video}")
    assert not offenders, "\n".join(offenders)

    meta = json.loads((publish / "croissant.json").read_text())
    assert version_before == "1.0.0" and meta["version"] == "1.0.1"
    card = (publish / "README.md").read_text(encoding="utf-8")
    assert "Version 1.0.1 (from 1.0.0): 1 video removed on request" in card and "| privacy | 1 |" in card
    after = published_images(publish)
    assert after.height == before.height - removed_images
    assert f"| `images` | {after.height:,} |" in card
    licences = after.group_by("license").len()
    for licence, n in licences.iter_rows():
        assert f"| {licence} | {n:,} |" in card
    # every other image's row (its pixels included) is as it was: same split, same frame, same bytes
    assert after.sort("image_id").to_dicts() == others_before.to_dicts()
