"""A tier's test durations per test file: read to start the heaviest files first (tests/conftest.py), and kept in the
repository so that a fresh clone (CI) does so too.

    .venv/bin/python -m tests.helpers.durations test e2e

Each tier's run writes every test's duration to .test-cache/durations-<tier>.txt (git-ignored), and its next run
starts the files that took longest first (tests/conftest.py). A fresh clone has no .test-cache, and without this
file it would start them in the order of their names: in the e2e tier the two longest journeys (Slurm and S3) came
last and left one worker a long tail. This sums the cache's file by test file into tests/durations-<tier>.txt, which
conftest reads where the cache has none. A stale copy only orders less well, and a test file it does not list counts
as the heaviest, so a new test needs no edit here; refresh it after a whole run of the tier on a quiet machine.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def per_file(text: str) -> Counter[str]:
    """Seconds per test file, from a durations file's `   12.34s path::test` lines."""
    seconds: Counter[str] = Counter()
    for line in text.splitlines():
        value, _, nodeid = line.strip().partition("s ")
        try:
            seconds[nodeid.split("::")[0]] += float(value)
        except ValueError:
            continue
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tiers", nargs="+", help="test, e2e: the tiers whose .test-cache durations to keep")
    args = parser.parse_args(argv)
    for tier in args.tiers:
        source = ROOT / ".test-cache" / f"durations-{tier}.txt"
        if not source.exists():
            parser.error(f"{source} is missing: run `make test` (tier test) or `make test-e2e` (tier e2e) first")
        seconds = per_file(source.read_text())
        dest = ROOT / "tests" / f"durations-{tier}.txt"
        dest.write_text("".join(f"{s:9.2f}s {name}\n" for name, s in seconds.most_common()))
        print(f"{dest.relative_to(ROOT)}: {len(seconds)} test files, {sum(seconds.values()) / 60:.1f} min in all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
