"""Whole-DAG wall time with training batched per experiment against one job per method, measured in the same run.

A training job used to train one run: a new Python process that imports torch and timm (most of a small run's CPU)
for a few seconds of training. `training.runs_per_job: experiment` (the default) trains every run of one experiment
in one process; `seeds` trains every seed of one method per job (paper scale on many GPUs). This benchmark runs the
same DAG both ways,
one after the other, each in a fresh temporary folder with `profiles/default` and `--cores N`, and prints per DAG:
the wall seconds, the CPU seconds of all jobs (user + system of Snakemake and its children), the start-up share of
the jobs' CPU time (the per-rule start-up of benchmarks/startup.py times the jobs with benchmark records, over their
CPU time), each as batched / one-job-per-method. Then it compares the two runs' results (tools/compare_results.py):
batching must change no result byte.

The DAGs: `small` (config/config.yaml + tests/configs/small.yaml, what the tests run) and `demo` (config/config.yaml,
what `make demo` runs; that figure is from a filled clone, not from `make setup` on a fresh one). On a machine with
other work the seconds move; the ratio of the two paths, run back to back, moves less.

    .venv/bin/python -m benchmarks.small_dag [--dags small demo] [--cores 2] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.dag import run_dag, startup_share

ROOT = Path(__file__).resolve().parents[1]

DAGS = {
    "small": (ROOT / "config" / "config.yaml", ROOT / "tests" / "configs" / "small.yaml"),
    "demo": (ROOT / "config" / "config.yaml",),
}
PATHS = {"one job per method": "seeds", "batched": "experiment"}  # training.runs_per_job


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dags", nargs="+", choices=sorted(DAGS), default=["small", "demo"])
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--keep", type=Path, help="keep the runs under this folder (<dag>/<seeds|experiment>) to inspect")
    args = ap.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="squidflow-small-dag-"))
    rows = []
    try:
        for dag in args.dags:
            figures = {}
            for label, mode in PATHS.items():
                directory = base / dag / mode
                shutil.rmtree(directory, ignore_errors=True)
                directory.mkdir(parents=True)
                wall, cpu = run_dag(
                    ROOT, directory, DAGS[dag], args.cores, "--config", f'training={{"runs_per_job": "{mode}"}}'
                )
                share = startup_share(ROOT, directory)
                figures[label] = (wall, cpu, share)
                print(
                    f"{dag:6s} {label:16s} wall {wall:6.0f} s  CPU {cpu:6.0f} s  start-up {100 * share:4.1f}% of "
                    "the recorded jobs' CPU",
                    flush=True,
                )
            diff = subprocess.run(
                [
                    sys.executable,
                    str(ROOT / "tools" / "compare_results.py"),
                    str(base / dag / "seeds"),
                    str(base / dag / "experiment"),
                ],
                cwd=ROOT,
                capture_output=True,
                text=True,
            )
            rows.append((dag, figures, diff.returncode, (diff.stdout + diff.stderr).strip().splitlines()[-1:]))
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    print(
        f"\nbatched / one job per method, --cores {args.cores}, profiles/default (load on the machine: "
        f"{os.getloadavg()[0]:.1f})"
    )
    print(f"{'DAG':6s} {'wall':>16s} {'CPU':>16s} {'start-up share':>20s}  results")
    for dag, f, rc, last in rows:
        (w0, c0, s0), (w1, c1, s1) = f["one job per method"], f["batched"]
        print(
            f"{dag:6s} {w1:5.0f}/{w0:4.0f} = {w1 / w0:4.2f} {c1:5.0f}/{c0:4.0f} = {c1 / c0:4.2f} "
            f"{100 * s1:6.1f}%/{100 * s0:4.1f}% = {s1 / s0:4.2f}  "
            f"{'identical' if rc == 0 else 'DIFFER'}: {' '.join(last)}"
        )


if __name__ == "__main__":
    main()
