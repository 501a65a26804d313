"""Benchmark of reading an MTurk batch-results CSV: a million assignments (six images each, six million judgments).

squidflow reads a batch with polars (`read_mturk_batch`, squidflow.judgments.mturk_batch: every check a column
expression, the row-by-row reader only for rows with a problem or a shared judgment). Baseline in the same run:
the reader of squidflow 0.3.0 — Python's csv module and one Python loop per row (`read_mturk_batch_rows` of
benchmarks/mturk_rows.py, with the polars CSV path switched off) — on the same file, or on its first `--baseline-rows` rows
(then scaled linearly, and said so). Both must return the same judgments and problems. Target: < 30 s for 1,000,000
rows.

    python -m benchmarks.ingest [--rows 1000000] [--baseline-rows 1000000]

On a shared machine under load the times are indicative only; the ratio is measured in the same run.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

from benchmarks.mturk_rows import read_mturk_batch_rows
from squidflow.contracts import io as sio
from squidflow.judgments.ingest import read_mturk_batch


def batch(path: Path, rows: int, seed: int = 0) -> None:
    """`rows` assignments of six-image HITs, three workers per HIT (distinct), as MTurk writes them (every field
    quoted); a few rows carry a problem (an empty rating, a worker rating one HIT twice) for the row reader."""
    rng = np.random.default_rng(seed)
    hits = np.arange(rows) // 3
    workers = (hits * 7 + np.arange(rows) % 3) % 997
    cols = {"HITId": [f"3H{h:09d}" for h in hits], "WorkerId": [f"A{w:012d}" for w in workers],
            "AssignmentStatus": np.where(rng.random(rows) < 0.01, "Rejected", "Approved"),
            "Input.event_prompt": ["birthday party"] * rows, "Input.variant": np.where(hits % 2, "A", "B")}  # fmt: skip
    for i in range(1, 7):
        cols[f"Input.image_{i}_id"] = [f"vid{h % 20000}_{h * 6 + i}" for h in hits]
    for i in range(1, 7):
        cols[f"Answer.rating_{i}"] = rng.integers(0, 101, rows).astype(str)
    df = pl.DataFrame(cols)
    bad = rng.choice(rows, size=max(1, rows // 10000), replace=False)
    df = df.with_columns(pl.when(pl.int_range(pl.len()).is_in(bad)).then(pl.lit("")).otherwise(pl.col("Answer.rating_3"))
                         .alias("Answer.rating_3"))  # fmt: skip
    df.write_csv(path, quote_style="always")


def timed(fn):
    """(result, wall seconds, CPU seconds of this process, all threads): on a loaded machine the CPU time says what
    the reader costs, the wall time what a user waits."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--baseline-rows", type=int, default=None, help="rows the 0.3.0 reader reads (default: all)")
    args = ap.parse_args()
    base_rows = min(args.baseline_rows or args.rows, args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        full, part = Path(tmp) / "batch.csv", Path(tmp) / "baseline.csv"
        batch(full, args.rows)
        (new, problems, rejected), t_new, c_new = timed(lambda: read_mturk_batch(full, on_error="skip"))
        print(
            f"polars reader: {args.rows:,} rows ({full.stat().st_size / 1e6:.0f} MB) -> {len(new):,} judgments, "
            f"{len(problems)} bad rows, {rejected:,} rejected in {t_new:.1f} s ({c_new:.1f} s CPU; target < 30 s)"
        )
        if base_rows < args.rows:
            with open(full, encoding="utf-8") as src, open(part, "w", encoding="utf-8") as dst:
                for n, line in enumerate(src):
                    if n > base_rows:
                        break
                    dst.write(line)
        else:
            part = full
        fast, sio.FAST_CSV_BYTES = sio.FAST_CSV_BYTES, 1 << 62  # 0.3.0 read every CSV with Python's csv module
        try:
            (old, old_problems, old_rejected), t_old, c_old = timed(
                lambda: read_mturk_batch_rows(part, on_error="skip")
            )
        finally:
            sio.FAST_CSV_BYTES = fast
        if part is not full:
            (ref, ref_problems, ref_rejected), *_ = timed(lambda: read_mturk_batch(part, on_error="skip"))
        else:
            ref, ref_problems, ref_rejected = new, problems, rejected
        same = ref.equals(old) and ref_problems == old_problems and ref_rejected == old_rejected
        scale = args.rows / base_rows
        print(
            f"0.3.0 reader (csv module, a loop per row): {base_rows:,} rows in {t_old:.1f} s ({c_old:.1f} s CPU)"
            + (
                f", {t_old * scale:.0f} s ({c_old * scale:.0f} s CPU) scaled linearly to {args.rows:,}"
                if scale > 1
                else ""
            )
        )
        print(
            f"speed-up: {t_old * scale / t_new:.1f}x wall, {c_old * scale / c_new:.1f}x CPU; same judgments and "
            f"problems: {same}"
        )
        if not same:
            raise SystemExit("the two readers disagree")


if __name__ == "__main__":
    main()
