"""The small demo (tests/configs/small.yaml) run on object storage through a Snakemake storage plugin, for
tests/e2e/test_s3.py (S3 on a moto server): every job reads and writes only what its rule declares, so the working directory keeps nothing but
Snakemake's own state."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .runs import ROOT, SMALL_CONFIGS, SNAKEMAKE

# S3 keeps no modification times (snakemake issues 752, 1710): the runs decide what to rerun from what Snakemake
# records of each job, as profiles/s3 says.
RERUN_TRIGGERS = ("--rerun-triggers", "code", "params", "software-env", "input")
# What Snakemake itself keeps in a working directory: its state folder (metadata, locks, logs, the storage plugin's
# local copies under .snakemake/storage/).
SNAKEMAKE_STATE = {".snakemake"}


def storage_command(provider: str, prefix: str, *args: str) -> list[str]:
    """snakemake for the small demo on `provider` under `prefix`, without a shared filesystem; run it in the working
    directory (cwd)."""
    return [
        SNAKEMAKE,
        "--snakefile",
        str(ROOT / "Snakefile"),
        "--configfile",
        *map(str, SMALL_CONFIGS),
        "--default-storage-provider",
        provider,
        "--default-storage-prefix",
        prefix,
        "--shared-fs-usage",
        "none",
        *RERUN_TRIGGERS,
        *args,
    ]


def run_on_storage(
    workdir: Path, provider: str, prefix: str, *args: str, env: dict[str, str] | None = None, timeout: int = 3600
) -> subprocess.CompletedProcess:
    workdir.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        storage_command(provider, prefix, *args),
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONHASHSEED": "0", **(env or {})},
    )


def left_in_workdir(workdir: Path) -> list[str]:
    """What a run left in its working directory besides Snakemake's own state (should be nothing)."""
    return sorted(p.name for p in workdir.iterdir() if p.name not in SNAKEMAKE_STATE)


def planned_jobs(res: subprocess.CompletedProcess) -> str:
    """The job table of a dry run's output ('' when it has nothing to do)."""
    out = res.stdout + res.stderr
    return "" if "Nothing to be done" in out else out[out.find("Job stats") :][:3000]
