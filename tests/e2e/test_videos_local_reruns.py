"""Real folders, real reruns (issue 25), as whole runs of the videos stage on a local source: a fixed file is picked
up without a flag, `retry_failed` checks an unchanged failure again, and a kill -9 during the re-check recovers to the
manifest of a clean run. Each runs Snakemake several times (minutes on 2 cores), so they are in the e2e tier; the
stage's functions on hand-made files are tests/unit/videos/test_videos_local.py."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import polars as pl
import pytest
import yaml
from helpers import runs
from helpers.faults import tried
from helpers.runs import in_folder
from helpers.videotools import make_mp4

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet


def run_local(work: Path, *extra: str, popen: bool = False, slow_probes: Path | None = None):
    """The videos stage on the folder's local source (config.yaml in `work`), waited for or started (`popen`)."""
    env = {}
    if slow_probes is not None:  # every Python the run starts (its jobs included) loads the folder's sitecustomize
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(slow_probes), os.environ.get("PYTHONPATH")]))
    args = in_folder(work, work / "config.yaml", cores_=2) + list(extra)
    if popen:
        return runs.start(*args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    return runs.snakemake(*args, env=env, timeout=600)


def local_work(work: Path) -> Path:
    work.mkdir(parents=True, exist_ok=True)
    cfg = {"stages": ["videos"], "sources": [{"type": "local", "root": "lib"}]}
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    return work


def manifest_of(work: Path) -> pl.DataFrame:
    return read_parquet(work / "results/videos/videos.parquet", schemas.VIDEOS).sort("video_id")


# --- finding 1: a fixed file is picked up ----------------------------------------------------------------------------
@pytest.mark.slow  # runs Snakemake jobs
def test_a_replaced_local_file_is_checked_again_without_a_flag_and_its_facts_are_the_new_files(tmp_path):
    work = local_work(tmp_path / "work")
    make_mp4(work / "lib" / "wedding" / "good.mp4", seconds=1.0)
    make_mp4(work / "lib" / "wedding" / "resized.mp4", seconds=1.0)
    (work / "lib" / "parade").mkdir()
    (work / "lib" / "parade" / "broken.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42 not a video at all")
    first = run_local(work)
    assert first.returncode == 0, first.stderr[-3000:]
    m = manifest_of(work)
    assert dict(zip(m["video_id"], m["status"], strict=True)) == {"broken": "corrupt", "good": "ok", "resized": "ok"}
    assert "dropped" in first.stderr and "dropped_videos.md" in first.stderr  # one console line at the end

    # the broken file is replaced by a good one, the other in place by a longer one with another size: no flag
    make_mp4(work / "lib" / "parade" / "broken.mp4", seconds=1.0)
    make_mp4(work / "lib" / "wedding" / "resized.mp4", seconds=2.0, size="160x120")
    second = run_local(work)
    assert second.returncode == 0, second.stderr[-3000:]
    m = manifest_of(work).to_dicts()
    by_id = {r["video_id"]: r for r in m}
    assert by_id["broken"]["status"] == "ok" and by_id["broken"]["reason"] is None
    assert (by_id["resized"]["width"], by_id["resized"]["n_frames"]) == (160, 50)  # the new file's facts
    assert by_id["resized"]["duration_s"] == pytest.approx(2.0, abs=0.05)
    probed = [json.loads(line)["video_id"] for line in (work / "results/videos/journal_local/local.jsonl").open()]
    assert sorted(probed) == ["broken", "broken", "good", "resized", "resized"]  # the unchanged file: probed once

    # nothing changed: nothing to do
    third = run_local(work)
    assert third.returncode == 0 and "Nothing to be done" in third.stdout + third.stderr
    tried(
        "a corrupt local video replaced by a good one, another replaced in place, no flag",
        "checked again: ok, facts of the new files; unchanged files not probed again",
    )


@pytest.mark.slow  # runs Snakemake jobs
def test_retry_failed_checks_an_unchanged_local_failure_again(tmp_path):
    """A file fixed without changing its size or modification time (restored from a copy with `cp -p`, say) is
    not seen by the fingerprint; `retry_failed` checks the local failures again, once per invocation."""
    work = local_work(tmp_path / "work")
    good = make_mp4(tmp_path / "good.mp4")
    target = work / "lib" / "fire" / "v.mp4"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"\x00" * good.stat().st_size)  # same size, not a video
    st = good.stat()
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert run_local(work).returncode == 0
    assert manifest_of(work)["status"].to_list() == ["corrupt"]
    shutil.copyfile(good, target)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size and mtime: the same fingerprint
    assert run_local(work).returncode == 0
    assert manifest_of(work)["status"].to_list() == ["corrupt"]
    retry = run_local(work, "--config", "retry_failed=true")
    assert retry.returncode == 0, retry.stderr[-3000:]
    assert manifest_of(work)["status"].to_list() == ["ok"]
    assert (work / "results/videos/status/local.g1.parquet").exists()
    calm = run_local(work)
    assert calm.returncode == 0 and "Nothing to be done" in calm.stdout + calm.stderr
    tried(
        "a local failure fixed without changing size or mtime, then retry_failed",
        "checked again: ok, once per invocation",
    )


def slow_probe_site(folder: Path, *, seconds: float) -> Path:
    """A folder whose sitecustomize makes every probe of a local file take `seconds` longer (squidflow itself is
    unchanged): put on PYTHONPATH, it reaches the jobs Snakemake starts."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(
        "import time\n"
        "import squidflow.videos.manifest as m\n"
        "_probe = m.probe_existing\n"
        "def probe_existing(*args, **kwargs):\n"
        f"    time.sleep({seconds})\n"
        "    return _probe(*args, **kwargs)\n"
        "m.probe_existing = probe_existing\n"
    )
    return folder


@pytest.mark.slow  # runs Snakemake jobs
def test_kill_during_the_recheck_of_a_replaced_file_then_rerun_equals_a_clean_run(tmp_path):
    files = {f"e{i % 2}/v{i}.mp4": 1.0 + (i % 3) * 0.2 for i in range(12)}
    clean, killed = local_work(tmp_path / "clean"), local_work(tmp_path / "killed")
    for path, seconds in files.items():
        make_mp4(killed / "lib" / path, seconds=seconds)
    assert run_local(killed).returncode == 0
    # replace every file (and break one), then kill -9 the run while the local check is under way
    for path, seconds in files.items():
        make_mp4(killed / "lib" / path, seconds=seconds + 0.4, pattern="smptebars")
    (killed / "lib" / "e0/v0.mp4").write_bytes(b"")
    journal = killed / "results/videos/journal_local/local.jsonl"
    lines_before = len(journal.read_text().splitlines())
    # a probe takes ~2 ms, so the whole check can end between two looks at the journal: here each probe of the
    # killed run takes 0.25 s more, so the kill lands in the middle of the check on any machine
    proc = run_local(killed, popen=True, slow_probes=slow_probe_site(tmp_path / "slow", seconds=0.25))
    deadline = time.time() + 120
    while time.time() < deadline and len(journal.read_text().splitlines()) < lines_before + 3:
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert len(journal.read_text().splitlines()) < lines_before + len(files), "the check finished before the kill"
    assert run_local(killed, "--unlock").returncode == 0  # what Snakemake asks for after a kill
    rerun = run_local(killed, "--rerun-incomplete")
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    # a clean run on the same files
    shutil.copytree(killed / "lib", clean / "lib")
    assert run_local(clean).returncode == 0
    a, b = manifest_of(killed), manifest_of(clean)
    cols = ["video_id", "event", "status", "reason", "duration_s", "fps", "n_frames", "width", "height", "path"]
    assert a.select(cols).equals(b.select(cols))
    assert a.filter(pl.col("video_id") == "v0")["reason"].to_list() == ["empty_file"]
    assert (a.filter(pl.col("video_id") == "v3")["duration_s"].item()) == pytest.approx(1.4, abs=0.05)
    tried(
        "kill -9 during the re-check of replaced local files, then a rerun", "recovered: same manifest as a clean run"
    )
