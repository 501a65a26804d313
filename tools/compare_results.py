"""Compare the result files of two workflow runs (for example the same demo at two commits, same seeds).

    python tools/compare_results.py RUN_A RUN_B [--tolerance 0]

Parquet files are compared as tables (same columns, same rows in the same order; floats within --tolerance), and
CSV, Markdown, LaTeX and JSON files as text. Logs, benchmarks, caches and timing files are skipped. Exit status 0
when every result file of A exists in B and is the same, 1 otherwise, with one line per difference.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import polars as pl
from polars.testing import assert_frame_equal

SKIP_PARTS = {"benchmarks", "cache", "downloads", "logs", ".snakemake"}
TEXT = {".csv", ".md", ".tex", ".json", ".txt", ".html"}
# Lines that record when or how long, not what.
VOLATILE = ("train.log", "run_summary.html")


def result_files(run: Path) -> list[Path]:
    base = run / "results"
    return sorted(
        p.relative_to(run)
        for p in base.rglob("*")
        if p.is_file()
        and not SKIP_PARTS & set(p.relative_to(run).parts)
        and p.name not in VOLATILE
        and (p.suffix in TEXT or p.suffix == ".parquet")
    )


def _sorted(df: pl.DataFrame) -> pl.DataFrame:
    sortable = [c for c, t in df.schema.items() if not isinstance(t, (pl.List, pl.Array, pl.Struct))]
    return df.sort(sortable) if sortable else df


# The published card and Croissant file say when: datePublished, and the collection timeframe from the videos' file
# times (the demo makes its videos at run time), and so does the report's page of the published dataset, which renders
# them. Their times are left out; every other byte is compared.
PUBLISHED_TIMES = re.compile(rb"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\+00:00|Z)?")


def _text(path: Path) -> bytes:
    data = path.read_bytes()
    published = "publish" in path.parts or path.name == "published_dataset.html"
    return PUBLISHED_TIMES.sub(b"<time>", data) if published else data


def compare(a: Path, b: Path, tolerance: float = 0.0, *, ignore_row_order: bool = False) -> list[str]:
    problems = []
    files_a, files_b = result_files(a), set(result_files(b))
    for rel in files_a:
        if rel not in files_b:
            problems.append(f"{rel}: only in {a}")
            continue
        if rel.suffix == ".parquet":
            try:
                fa, fb = pl.read_parquet(a / rel), pl.read_parquet(b / rel)
                if ignore_row_order:
                    fa, fb = _sorted(fa), _sorted(fb)
                assert_frame_equal(fa, fb, check_exact=tolerance == 0, abs_tol=tolerance, rel_tol=0)
            except AssertionError as exc:
                problems.append(f"{rel}: {str(exc).splitlines()[0]}")
        elif _text(a / rel) != _text(b / rel):
            problems.append(f"{rel}: text differs")
    problems += [f"{rel}: only in {b}" for rel in sorted(files_b - set(files_a))]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_a", type=Path)
    parser.add_argument("run_b", type=Path)
    parser.add_argument("--tolerance", type=float, default=0.0, help="absolute tolerance for floats in Parquet")
    parser.add_argument("--ignore-row-order", action="store_true", help="compare Parquet tables as sets of rows")
    args = parser.parse_args(argv)
    problems = compare(args.run_a, args.run_b, args.tolerance, ignore_row_order=args.ignore_row_order)
    n = len(result_files(args.run_a))
    for line in problems:
        print(line)
    print(f"{n} result files compared, {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
