"""The workflow as users run it: lint, dry runs of every config, bad configs, and the small demo end to end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from squidflow import schemas
from squidflow.io import read_parquet

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
CONFIGS = sorted((ROOT / "config").glob("*.yaml"))


def snakemake(*args: str, cwd: Path = ROOT, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def test_lint_is_clean() -> None:
    res = snakemake("--lint")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Congratulations, your workflow is in a good condition!" in res.stdout + res.stderr, res.stdout + res.stderr


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.name)
def test_dry_run_of_every_config(config: Path, tmp_path: Path) -> None:
    res = snakemake("-n", "--configfile", str(config), "--directory", str(tmp_path), "--cores", "2")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]


def test_invalid_value_fails_naming_the_key(tmp_path: Path) -> None:
    res = snakemake("-n", "--directory", str(tmp_path), "--configfile", str(ROOT / "config" / "config.yaml"),
                    "--config", 'demo={"videos_per_event": -1}')
    assert res.returncode != 0
    assert "demo.videos_per_event" in res.stdout + res.stderr


@pytest.mark.slow
def test_small_demo_end_to_end(tmp_path: Path) -> None:
    """Every stage of the demo on a small corpus, into a temporary directory; a second run has nothing to do."""
    args = ["--directory", str(tmp_path), "--configfile", str(ROOT / "config" / "config.yaml"),
            str(ROOT / "tests" / "configs" / "small.yaml"), "--cores", "2"]
    res = snakemake(*args, timeout=1800)
    assert res.returncode == 0, res.stdout[-5000:] + res.stderr[-5000:]
    results = tmp_path / "results"
    videos = read_parquet(results / "videos" / "videos.parquet", schemas.VIDEOS)
    assert videos.height == 24 and (videos["status"] == "ok").all()
    for f in [
        "dataset/frames.parquet", "judgments/judgments.parquet", "judgments/image_scores.parquet",
        "tables/table7_agreement.csv", "figures/fig3_judgments.png", "comparison/sets.parquet",
        "tables/table1_training.md", "tables/table3_calibration.md", "tables/table9_kl.md",
    ]:
        assert (results / f).exists(), f"missing {f}"
    frames = read_parquet(results / "dataset" / "frames.parquet", schemas.FRAMES)
    assert frames.group_by("video_id").len()["len"].max() <= 6
    assert all((tmp_path / p).exists() for p in frames["image_path"])
    table3 = pl.read_csv(results / "tables" / "table3_calibration.csv")
    assert set(table3["method"]) == {"BL", "MC", "LS", "BM", "FL", "RS"}
    again = snakemake(*args, "-n")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr, again.stdout[-2000:]
