"""The small demo on object storage through Snakemake's `fs` storage plugin (issue 49): every job gets local copies of
its declared inputs and sends its declared outputs to a prefix folder of its own, with no shared filesystem
(`--shared-fs-usage none`). A job that read or wrote anything its rule does not declare would fail here or leave it
in the working directory; the run's results equal the local run's, and a second run has nothing to do (no
modification times on object storage: profiles/s3's rerun triggers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.storage_run import left_in_workdir, planned_jobs, run_on_storage
from helpers.tools import compare_results

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def fs_run(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("storage_fs")
    workdir, prefix = base / "work", base / "storage"
    prefix.mkdir()
    res = run_on_storage(workdir, "fs", str(prefix), "--cores", "2")
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-6000:]
    return workdir, prefix


def test_the_working_directory_keeps_only_snakemakes_state(fs_run):
    workdir, prefix = fs_run
    assert left_in_workdir(workdir) == [], "files no rule declares were written beside the run"
    assert (prefix / "results" / "videos" / "videos.parquet").is_file()


def test_results_on_storage_equal_the_local_runs(fs_run, small_workflow):
    _, prefix = fs_run
    problems = compare_results.compare(small_workflow.directory, prefix)
    assert not problems, "\n".join(problems[:40])


def test_the_acquisition_journal_is_on_storage(fs_run):
    """What was probed, its outcome and why, for every video: the declared journal beside each status table."""
    _, prefix = fs_run
    journals = sorted((prefix / "results" / "videos" / "status").glob("*.journal.jsonl"))
    assert journals, "no acquisition journal on storage"
    lines = [line for j in journals for line in j.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 24  # the small demo's videos, each once
    assert all('"status": "ok"' in line and '"path": "results/videos/demo/' in line for line in lines)


def test_a_second_run_has_nothing_to_do(fs_run):
    workdir, prefix = fs_run
    res = run_on_storage(workdir, "fs", str(prefix), "--cores", "2", "--dry-run")
    assert res.returncode == 0, res.stderr[-3000:]
    assert planned_jobs(res) == "", planned_jobs(res)
