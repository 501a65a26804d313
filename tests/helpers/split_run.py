"""pytest over its test files in as many processes at once as there are cores (`make test-fast`).

Most unit tests run on one core, so one pytest process leaves the second of CI's two cores idle: the files are dealt
into one group per core (largest first, each to the group with the fewest bytes so far: file size stands for run
time), each group is one pytest process with the same options, and their outputs are printed one after the other
with a closing line for the whole run. The exit status is the worst of the groups' (a group with no test selected
is no failure). Usage: `python tests/helpers/split_run.py [pytest options] PATH...`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NO_TESTS = 5  # pytest's exit status when no test was collected or all were deselected


def files_under(paths: list[Path]) -> list[Path]:
    """The test files under `paths` (a file is itself), each once, in a stable order."""
    found = {f for p in paths for f in ([p] if p.is_file() else p.rglob("test_*.py"))}
    return sorted(found)


def deal(files: list[Path], n: int) -> list[list[Path]]:
    """`files` in `n` groups of about equal size (largest first to the smallest group); empty groups dropped."""
    groups: list[list[Path]] = [[] for _ in range(n)]
    sizes = [0] * n
    for f in sorted(files, key=lambda f: (-f.stat().st_size, str(f))):
        i = sizes.index(min(sizes))
        groups[i].append(f)
        sizes[i] += f.stat().st_size
    return [sorted(g) for g in groups if g]


def worst(codes: list[int]) -> int:
    """The run's exit status: 0 if every group passed or selected nothing, else the first failing group's."""
    return next((c for c in codes if c not in (0, NO_TESTS)), 0)


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv if not a.startswith("-") and Path(a).exists()]
    options = [a for a in argv if a.startswith("-") or not Path(a).exists()]
    groups = deal(files_under(paths or [ROOT / "tests"]), os.cpu_count() or 1)
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        logs = [Path(tmp) / f"group{i}.log" for i in range(len(groups))]
        procs = []
        for group, log in zip(groups, logs, strict=True):
            with open(log, "w") as fh:
                procs.append(subprocess.Popen([sys.executable, "-m", "pytest", *options, *map(str, group)], cwd=ROOT,
                                              stdout=fh, stderr=subprocess.STDOUT))  # fmt: skip
        codes = [p.wait() for p in procs]
        for i, (group, log) in enumerate(zip(groups, logs, strict=True)):
            print(f"===== group {i + 1} of {len(groups)}: {len(group)} test files, exit status {codes[i]} =====")
            print(log.read_text(), end="", flush=True)
    seconds = time.monotonic() - start
    print(f"wall time of the whole run: {int(seconds // 60)} min {seconds % 60:.0f} s ({len(groups)} pytest processes "
          f"at once, {os.cpu_count()} cores)")  # fmt: skip
    return worst(codes)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
