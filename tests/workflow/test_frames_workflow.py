"""The frames stage as users run it: demo videos -> manifest -> frames, features, six images per video; a rerun
does nothing. Read from the shared small run (tests/conftest.py: small_workflow), which builds these targets."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from helpers.runs import planned_jobs

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet

RULES = Path(__file__).resolve().parents[2] / "workflow" / "rules"
TARGETS = [
    "results/dataset/frames.parquet",
    "results/features/efficientnet_lite0.parquet",
    "results/videos/videos_checked.parquet",
]


@pytest.mark.slow
def test_frames_stage_on_the_small_demo(small_workflow, tmp_path: Path) -> None:
    work = small_workflow.directory
    frames = read_parquet(work / TARGETS[0], schemas.FRAMES)
    features = read_parquet(work / TARGETS[1], schemas.FEATURES)
    videos = read_parquet(work / TARGETS[2], schemas.VIDEOS)
    ok = videos.filter(pl.col("status") == "ok")["video_id"].to_list()
    assert len(ok) == 24  # tests/configs/small.yaml: 4 events x 6 videos
    per_video = dict(frames.group_by("video_id").len().iter_rows())
    assert per_video == {v: 6 for v in ok}
    assert frames["image_id"].to_list() == [f"{v}_{i}" for v, i in frames.select("video_id", "frame_index").rows()]
    for path in frames["image_path"]:
        assert (work / path).is_file() and path.startswith("results/dataset/images/")
    assert features.height >= 24 * 6 and features["feature"].dtype.size == 2560
    assert set(frames["split"]) <= {"train", "val", "test"}
    assert frames.group_by("video_id").agg(pl.col("split").n_unique())["split"].max() == 1
    # every chosen frame is one of the featurized frames
    assert frames.join(features, on=["video_id", "frame_index"], how="anti").is_empty()
    rerun = small_workflow.snakemake("-n", *TARGETS, timeout=300)
    assert rerun.returncode == 0 and "Nothing to be done" in rerun.stdout + rerun.stderr, rerun.stdout[-3000:]
    # the three targets alone, in an empty folder: the plan is the demo's videos and the frames stage, nothing else
    alone = replace(small_workflow, directory=tmp_path).snakemake("-n", "--cores", "2", *TARGETS, timeout=300)
    assert alone.returncode == 0, alone.stdout[-3000:] + alone.stderr[-3000:]
    stage_rules = {
        r
        for smk in ("demo", "videos", "frames")
        for r in re.findall(r"^(?:rule|checkpoint) (\w+):", (RULES / f"{smk}.smk").read_text(), re.M)
    }
    planned = set(planned_jobs(alone.stdout))
    assert "extract_frames" in planned and planned <= stage_rules, sorted(planned - stage_rules)
