"""The small demo on S3 for real (issue 49): moto's S3 API server on 127.0.0.1 (a real HTTP server, started and
stopped here; not a mock of boto3), a bucket, and the run through profiles/s3 (`--default-storage-provider s3
--shared-fs-usage none`) with an executor whose jobs each run in a fresh scratch folder of their own
(snakemake-executor-plugin-cluster-generic with tests/helpers/scratch_executor/: no job sees the run's working
directory, only what it downloads from the bucket). The run is killed in the middle of the frames stage and run
again; the bucket is then downloaded and every result compared with the local run's (tools/compare_results.py), and
a second run has nothing to do (S3 keeps no modification times: profiles/s3's rerun triggers). The rerun is what
needs squidflow.runtime.s3_plugin: a frame shard folder the killed run had not reached is asked about while the DAG is
built, and the plugin as it ships keeps that first "missing" after the job uploaded it (docs/upstream.md).

Not on the Slurm test cluster: snakemake-executor-plugin-slurm 2.8.0 submits every job with `sbatch -D <the
submitting Snakemake's working directory>` and `--output` under its .snakemake/slurm_logs/ (its submit_string), so
its jobs need that folder on the node: a shared filesystem. On the one-node test cluster that folder is always
there, so a Slurm run could not show that nothing is read from it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from helpers import moto_s3
from helpers.runs import cores
from helpers.storage_run import ROOT, left_in_workdir, planned_jobs, storage_command
from helpers.tools import compare_results

pytestmark = pytest.mark.slow

BUCKET = "squidflow-test"
PREFIX = f"s3://{BUCKET}/run"
EXECUTOR = ROOT / "tests" / "helpers" / "scratch_executor"
RUN_TIMEOUT = 3600


@pytest.fixture(scope="module")
def s3_server():
    """moto's S3 server with the run's bucket (tests/helpers/moto_s3.py), its boto3 client and the environment a run
    needs to reach it."""
    try:
        import snakemake_executor_plugin_cluster_generic  # noqa: F401
        import snakemake_storage_plugin_s3  # noqa: F401
    except ImportError as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true: a Snakemake plugin is missing ({exc})", pytrace=False)
        pytest.skip(f"a Snakemake plugin is missing ({exc}): `make setup` installs requirements.lock")
    with moto_s3.s3_server() as s3:
        client = s3.client()
        client.create_bucket(Bucket=BUCKET)
        yield client, s3.env


def _keys(client, prefix: str = "run/") -> list[str]:
    keys = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        keys += [o["Key"] for o in page.get("Contents", [])]
    return keys


class S3Run:
    def __init__(self, base: Path, env: dict[str, str]):
        self.workdir = base / "work"
        self.scratch = base  # the jobs' scratch folders: beside the working directory (submit.sh says why)
        self.workdir.mkdir()
        self.killed: set[str] = set()  # the jobs this test killed with the run (stop_leftover_jobs)
        venv_bin = str(Path(sys.executable).parent)
        self.env = {
            **os.environ,
            **env,
            "PYTHONHASHSEED": "0",
            "PATH": venv_bin + os.pathsep + os.environ.get("PATH", ""),
            "SQUIDFLOW_SCRATCH_ROOT": str(self.scratch),
        }

    def command(self, *args: str) -> list[str]:
        # as on Slurm, the short rules of a stage run as one job (profiles/slurm's groups): each job of the executor
        # starts a Snakemake of its own
        groups = yaml.safe_load((ROOT / "profiles" / "slurm" / "config.yaml").read_text())["groups"]
        return storage_command(
            "s3",
            PREFIX,
            "--profile",
            str(ROOT / "profiles" / "s3"),
            "--executor",
            "cluster-generic",
            "--cluster-generic-submit-cmd",
            str(EXECUTOR / "submit.sh"),
            "--cluster-generic-status-cmd",
            str(EXECUTOR / "status.sh"),
            "--jobs",
            str(cores()),
            "--local-cores",
            str(cores()),
            # what the job uploaded is read back at once (moto answers as S3 does: strongly consistent)
            "--latency-wait",
            "5",
            # status.sh reads a file: asked every second, not every 10 s (Snakemake's default, meant for a cluster's
            # queue), the next job starts as soon as one ends; with one job at a time (`cores()` on a shared machine)
            # the default's wait was most of this run's time
            "--seconds-between-status-checks",
            "1",
            "--groups",
            *(f"{rule}={group}" for rule, group in groups.items()),
            *args,
        )

    def run(self, *args: str, timeout: int = RUN_TIMEOUT) -> subprocess.CompletedProcess:
        return subprocess.run(
            self.command(*args), cwd=self.workdir, env=self.env, capture_output=True, text=True, timeout=timeout
        )

    def start(self) -> subprocess.Popen:
        log = open(self.workdir.parent / "killed_run.log", "w")  # noqa: SIM115 - closed with the process
        return subprocess.Popen(
            self.command(), cwd=self.workdir, env=self.env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip

    def stop_leftover_jobs(self) -> None:
        """The jobs a killed run left running (each in a session of its own, submit.sh): stopped, by their ids. Their
        scratch folders stay, as a lost node's would (`killed`: not counted as left behind by a finished job)."""
        for pid_file in self.scratch.glob("*.pid"):
            if pid_file.with_suffix(".rc").exists():
                continue
            self.killed.add(pid_file.stem)
            try:
                os.killpg(int(pid_file.read_text().strip()), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass


@pytest.fixture(scope="module")
def s3_run(s3_server, tmp_path_factory: pytest.TempPathFactory, shared_data: Path):
    client, env = s3_server
    run = S3Run(tmp_path_factory.mktemp("s3_run"), env)
    # 1. killed in the middle of the frames stage: once a frame shard is in the bucket, before selection
    proc = run.start()
    deadline = time.monotonic() + RUN_TIMEOUT
    killed_at = None
    while time.monotonic() < deadline and proc.poll() is None:
        keys = _keys(client, "run/results/")
        if any(k.startswith("run/results/frames/shard") for k in keys):
            killed_at = sorted(k for k in keys if k.startswith("run/results/frames/"))
            break
        time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    run.stop_leftover_jobs()
    assert killed_at is not None, (run.workdir.parent / "killed_run.log").read_text()[-5000:]
    assert not any(k.startswith("run/results/dataset/") for k in _keys(client)), "killed after the frames stage"
    # 2. run again, as a user would after a kill (the lock the killed Snakemake left is removed first)
    unlock = run.run("--unlock", timeout=600)
    assert unlock.returncode == 0, unlock.stderr[-3000:]
    res = run.run()
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-8000:]
    # 3. the bucket, downloaded
    downloaded = run.workdir.parent / "bucket"
    for key in _keys(client):
        dest = downloaded / key.removeprefix("run/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        client.download_file(BUCKET, key, str(dest))
    return run, res, downloaded, killed_at


def test_results_after_a_kill_and_a_rerun_equal_the_local_runs(s3_run, small_workflow):
    run, _, downloaded, _ = s3_run
    problems = compare_results.compare(small_workflow.directory, downloaded)
    assert not problems, "\n".join(problems[:40])


def test_the_working_directory_keeps_only_snakemakes_state(s3_run):
    run, *_ = s3_run
    assert left_in_workdir(run.workdir) == []
    left = [p.name for p in run.scratch.glob("job.*") if p.is_dir() and p.name not in run.killed]
    assert not left, f"a finished job's scratch folder was left behind: {left}"


def test_a_second_run_has_nothing_to_do(s3_run):
    run, *_ = s3_run
    res = run.run("--dry-run", timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    assert planned_jobs(res) == "", planned_jobs(res)


def test_the_acquisition_journal_survives_on_s3(s3_run):
    _, _, downloaded, _ = s3_run
    journal = downloaded / "results" / "videos" / "status" / "local.g0.journal.jsonl"
    lines = journal.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 24 and all('"status": "ok"' in line for line in lines)


def test_credentials_reach_no_file_and_no_log(s3_run):
    run, res, downloaded, _ = s3_run
    secret = run.env["AWS_SECRET_ACCESS_KEY"]  # must never be written to a file or a log
    assert secret not in res.stdout + res.stderr
    for folder in (run.workdir, downloaded, *run.scratch.glob("job.*")):
        for path in folder.rglob("*") if folder.is_dir() else [folder]:
            if path.is_file() and path.stat().st_size < 50_000_000:
                assert secret.encode() not in path.read_bytes(), path
