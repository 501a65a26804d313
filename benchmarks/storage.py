"""Issue 49's figure: the small DAG (config/config.yaml + tests/configs/small.yaml) on S3-compatible object storage
against the same DAG on the local filesystem, measured in the same run, one after the other.

- `local`: `snakemake --profile profiles/default --cores N` into a fresh folder, wall seconds;
- `s3`: the same command with `--default-storage-provider s3 --default-storage-prefix s3://<bucket>/run
  --shared-fs-usage none` (local executor) into another fresh folder, every file of the run going through
  Snakemake's S3 storage plugin to a real S3 API on 127.0.0.1 (moto in server mode, tests/helpers/moto_s3.py; the
  endpoint and throw-away keys in the environment only), wall seconds, the objects the bucket holds afterwards and
  the requests the server answered, by kind (HEAD object: an existence check or a modification time; GET list: a
  listing; GET/PUT object: a download/upload), counted from moto's request log (tests/helpers/moto_s3.py);
- `s3 / local`: their ratio (issue 61's goal: <= 1.3; 1.78 when issue 49 measured it). It is what a run of many
  small jobs pays for object storage (every job downloads its inputs and uploads its outputs, every existence check
  is a request), for a cloud user to plan with. A real object store is farther away than 127.0.0.1; the ratio is a
  lower bound.

Where the S3 run fails (a rule that reads or writes a file it does not declare), one line says so with the end of
Snakemake's output, and the figure is left out (the exit status stays 0, so `make bench` goes on).

    .venv/bin/python -m benchmarks.storage [--cores 2] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks.startup import env_for

ROOT = Path(__file__).resolve().parents[1]

SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
SMALL = (ROOT / "config" / "config.yaml", ROOT / "tests" / "configs" / "small.yaml")
BUCKET = "squidflow-bench"
STORAGE = ("--default-storage-provider", "s3", "--default-storage-prefix", f"s3://{BUCKET}/run",
           "--shared-fs-usage", "none")  # fmt: skip


def run_small(
    directory: Path, cores: int, env: dict[str, str], *extra: str
) -> tuple[float, subprocess.CompletedProcess]:
    """Wall seconds of the small DAG from nothing into `directory`, and the finished process."""
    cmd = [SNAKEMAKE, "--profile", "profiles/default", "--cores", str(cores), "--directory", str(directory),
           "--configfile", *map(str, SMALL), *extra]  # fmt: skip
    t0 = time.monotonic()
    res = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    return time.monotonic() - t0, res


def why_failed(output: str) -> str:
    """The first error Snakemake printed (its line and the next), else the end of its output, each line cut short."""
    lines = output.splitlines()
    at = next((i for i, line in enumerate(lines) if "Error" in line or "Exception" in line), None)
    shown = lines[at : at + 2] if at is not None else lines[-5:]
    return " / ".join(line.strip()[:300] for line in shown)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--keep", type=Path, help="keep the two runs' folders under this folder")
    args = ap.parse_args()

    from tests.helpers.moto_s3 import s3_server, why_unavailable

    why = why_unavailable()
    if why:
        print(f"small DAG on S3: left out: {why}")
        return
    base = args.keep or Path(tempfile.mkdtemp(prefix="squidflow-storage-"))
    base.mkdir(parents=True, exist_ok=True)
    for side in ("local", "s3"):
        shutil.rmtree(base / side, ignore_errors=True)
        (base / side).mkdir()
    failed = None
    requests: Counter = Counter()
    try:
        local_s, res = run_small(base / "local", args.cores, env_for(ROOT))
        if res.returncode != 0:
            raise SystemExit(f"the local run of the small DAG failed:\n{res.stdout[-3000:]}")
        print(f"local  {local_s:6.0f} s", flush=True)
        with s3_server() as s3:
            s3.client().create_bucket(Bucket=BUCKET)
            s3_s, res = run_small(base / "s3", args.cores, {**env_for(ROOT), **s3.env}, *STORAGE)
            objects = sum(1 for _ in s3.client().get_paginator("list_objects_v2").paginate(Bucket=BUCKET)
                          for _ in _.get("Contents", []))  # fmt: skip
            if res.returncode != 0:
                why = why_failed(res.stdout).replace(s3.endpoint, "<endpoint>")
                failed = f"the S3 run failed after {s3_s:.0f} s ({objects} objects in the bucket): {why}"
            else:
                print(f"s3     {s3_s:6.0f} s  ({objects} objects in s3://{BUCKET}/run)", flush=True)
            requests = s3.requests
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)

    print(
        f"\nissue 49: the small DAG on S3 (moto on 127.0.0.1, --shared-fs-usage none, local executor) against the "
        f"local filesystem, --cores {args.cores}, one after the other (load on the machine: {os.getloadavg()[0]:.1f})"
    )
    print(f"{'figure':34s} {'local':>8s} {'s3':>8s} {'s3/local':>9s}  goal")
    if failed:
        print(f"{'small DAG (wall)':34s} {local_s:6.0f} s {'-':>8s} {'-':>9s}  no goal")
        print(f"\nsmall DAG on S3: NO FIGURE: {failed}")
        return
    print(f"{'small DAG (wall)':34s} {local_s:6.0f} s {s3_s:6.0f} s {s3_s / local_s:9.2f}  <= 1.3 (issue 61)")
    kinds = ", ".join(f"{kind} {n}" for kind, n in requests.most_common())
    print(f"requests to the S3 server in the S3 run (moto's request log): {requests.total()} ({kinds})")


if __name__ == "__main__":
    main()
