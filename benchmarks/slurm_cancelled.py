"""What squidflow's one kept change to the Slurm executor plugin gains (squidflow.runtime.slurm_plugin.patch_plugin_states,
docs/upstream.md), measured on the local Slurm test cluster (tests/helpers/slurm_cluster.py).

A one-rule workflow (`sleep 600`) is submitted with `--executor slurm`; once its job runs it is cancelled with
`scancel`, and the seconds from the cancel to the submitting Snakemake's exit are measured: with the plugin as it
ships, and with squidflow's fix installed by the workflow's `onstart` (as workflow/checks.smk does). The plugin as it
ships (2.8.0) reads `sacct`'s `CANCELLED by <uid>` as no failed state and waits; the wait is cut at --give-up
seconds and reported as such. Needs root and Debian's Slurm (`make test-tools`).

    .venv/bin/python -m benchmarks.slurm_cancelled [--give-up 180]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SNAKEFILE = """
onstart:
    if {patched}:
        from squidflow.runtime.slurm_plugin import patch_plugin_states
        print("squidflow fix installed:", patch_plugin_states(), flush=True)

rule all:
    output: "done.txt"
    resources: runtime=20, mem_mb=500
    shell: "sleep 600; touch {{output}}"
"""


def cancelled_run(cluster, folder: Path, patched: bool, give_up: float) -> tuple[float | None, str]:
    """Seconds from `scancel` to the submitting Snakemake's exit (None: still waiting after `give_up` s)."""
    folder.mkdir(parents=True)
    (folder / "Snakefile").write_text(SNAKEFILE.format(patched=patched))
    env = cluster.profile_env()
    cmd = [
        str(Path(sys.executable).with_name("snakemake")),
        "--executor",
        "slurm",
        "--jobs",
        "1",
        "--slurm-init-seconds-before-status-checks",
        "1",
        "--default-resources",
        f"slurm_account={cluster.account}",
        f"slurm_partition={cluster.partition}",
    ]
    proc = subprocess.Popen(
        cmd, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 300
        while not any(row["State"] == "RUNNING" for row in cluster.queue()):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the job never ran:\n{proc.communicate()[0][-3000:]}")
            time.sleep(0.5)
        cluster.cmd("scancel", cluster.queue()[0]["JobID"])
        t0 = time.monotonic()
        try:
            proc.wait(timeout=give_up)
            return time.monotonic() - t0, proc.communicate()[0]
        except subprocess.TimeoutExpired:
            return None, ""
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        cluster.cancel_all()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--give-up", type=float, default=180.0, help="seconds to wait for Snakemake to end")
    args = ap.parse_args()
    from tests.helpers.slurm_cluster import start_cluster, why_unavailable

    reason = why_unavailable()
    if reason:
        print(f"slurm_cancelled: left out: {reason}")
        return
    from importlib.metadata import version

    cluster = start_cluster(gpus=0)
    base = Path(tempfile.mkdtemp(prefix="squidflow-cancelled-"))
    try:
        results = {
            name: cancelled_run(cluster, base / name, patched, args.give_up)
            for name, patched in (("plugin as it ships", False), ("with squidflow's fix", True))
        }
    finally:
        cluster.stop()
        shutil.rmtree(cluster.root, ignore_errors=True)
        shutil.rmtree(base, ignore_errors=True)
    print(
        f"a running job cancelled with scancel: seconds until the submitting Snakemake ends "
        f"(snakemake-executor-plugin-slurm {version('snakemake-executor-plugin-slurm')}, "
        f"load {os.getloadavg()[0]:.1f})"
    )
    for name, (seconds, out) in results.items():
        said = "reported failed" if "Error in rule all" in out else ""
        shown = f"{seconds:6.1f} s {said}" if seconds is not None else f"still waiting after {args.give_up:.0f} s"
        print(f"  {name:24s} {shown}")


if __name__ == "__main__":
    main()
