"""The frames stage as users run it: demo videos -> manifest -> frames, features, six images per video; a rerun
does nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import yaml

from squidflow import schemas
from squidflow.io import read_parquet

ROOT = Path(__file__).resolve().parents[2]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
TARGETS = ["results/dataset/frames.parquet", "results/features/efficientnet_lite0.parquet",
           "results/videos/videos_checked.parquet"]


@pytest.mark.slow
def test_frames_stage_on_a_tiny_demo(tmp_path: Path) -> None:
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(yaml.safe_dump({
        "demo": {"events": ["birthday_party", "wedding", "parade", "protest"], "videos_per_event": 2, "seconds": 3,
                 "width": 160, "height": 120, "fps": 15, "seed": 2},
        "frames": {"n": 12, "shards": 2},
    }))
    args = ["--directory", str(tmp_path / "work"), "--configfile", str(ROOT / "config" / "config.yaml"), str(cfg),
            "--cores", "2", *TARGETS]
    res = subprocess.run([SNAKEMAKE, *args], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-4000:]
    work = tmp_path / "work"
    frames = read_parquet(work / TARGETS[0], schemas.FRAMES)
    features = read_parquet(work / TARGETS[1], schemas.FEATURES)
    videos = read_parquet(work / TARGETS[2], schemas.VIDEOS)
    ok = videos.filter(pl.col("status") == "ok")["video_id"].to_list()
    assert len(ok) == 8
    per_video = dict(frames.group_by("video_id").len().iter_rows())
    assert per_video == {v: 6 for v in ok}
    assert frames["image_id"].to_list() == [f"{v}_{i}" for v, i in frames.select("video_id", "frame_index").rows()]
    for path in frames["image_path"]:
        assert (work / path).is_file() and path.startswith("results/dataset/images/")
    assert features.height >= 8 * 6 and features["feature"].dtype.size == 2560
    assert set(frames["split"]) <= {"train", "val", "test"}
    assert frames.group_by("video_id").agg(pl.col("split").n_unique())["split"].max() == 1
    # every chosen frame is one of the featurized frames
    assert frames.join(features, on=["video_id", "frame_index"], how="anti").is_empty()
    rerun = subprocess.run([SNAKEMAKE, "-n", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0 and "Nothing to be done" in rerun.stdout + rerun.stderr, rerun.stdout[-3000:]
