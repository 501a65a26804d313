"""Where a job sees the workflow's files (squidflow.paths): on a shared filesystem where the rules name them, on object
storage under Snakemake's local copies; tables record the workflow's paths either way."""

from __future__ import annotations

import subprocess
import sys

import pytest

from squidflow import paths

LOCAL = ".snakemake/storage/s3/bucket/logs/run"  # a prefix that itself holds a `logs` folder


@pytest.fixture
def restore_root():
    yield
    paths.set_job_root("logs/x/y.log")


@pytest.mark.parametrize(
    ("log", "root"),
    [
        ("logs/extract_frames/shard0.log", "."),
        ("logs/train/classification/SD/BL/seed0.log", "."),
        (f"{LOCAL}/logs/extract_frames/shard0.log", LOCAL),
        (
            ".snakemake/storage/fs/tmp/store/logs/train/classification/SD/BL/seed0.log",
            ".snakemake/storage/fs/tmp/store",
        ),
    ],
)
def test_the_root_is_what_comes_before_the_rules_log_folder(log, root):
    assert paths.job_root_of(log) == root


def test_paths_map_to_the_local_copies_and_back(restore_root):
    paths.set_job_root(f"{LOCAL}/logs/select_frames/select_frames.log")
    local = paths.job_file("results/frames/shard0/v/3.jpg")
    assert local == f"{LOCAL}/results/frames/shard0/v/3.jpg"
    assert paths.recorded_path(local) == "results/frames/shard0/v/3.jpg"
    assert paths.job_file(local) == local  # a declared input as Snakemake hands it over: mapped once only
    for untouched in ("/data/videos/a.mp4", "https://example.org/a.csv", "s3://bucket/a.mp4"):
        assert paths.job_file(untouched) == untouched
        assert paths.recorded_path(untouched) == untouched
    assert paths.recorded_path("elsewhere/file.txt") == "elsewhere/file.txt"  # not under the local copies


def test_on_a_shared_filesystem_nothing_changes(restore_root):
    paths.set_job_root("logs/select_frames/select_frames.log")
    assert paths.job_file("results/a.parquet") == "results/a.parquet"
    assert paths.recorded_path("results/a.parquet") == "results/a.parquet"


def test_the_scripts_logging_setup_sets_the_root(tmp_path):
    """In a process of its own, as a job's script: logs.setup(snakemake) takes the root from the job's log."""
    code = (
        "import types\n"
        "from squidflow.logs import setup\n"
        "from squidflow.paths import job_file\n"
        f"setup(types.SimpleNamespace(log=[{str(tmp_path / 'store' / 'logs' / 'rule' / 'job.log')!r}], rule='rule', output=[]))\n"
        "print(job_file('results/a'))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == str(tmp_path / "store" / "results" / "a")
