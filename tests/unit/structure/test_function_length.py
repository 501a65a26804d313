"""`make lint` fails on a function over 80 lines in the library (tools/function_length.py, the project's own rule:
ruff counts statements, not lines): a planted 81-line function in a copy of src/squidflow fails it, naming the file,
the line and the length, while the same function at 80 lines passes. There is no list of exceptions."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TOOL = ROOT / "tools" / "function_length.py"


def _planted(lines: int) -> str:
    """A module with one function of exactly `lines` lines, its `def` line included."""
    body = "".join(f"    total += {i}\n" for i in range(lines - 3))
    return f'"""A planted module."""\n\n\ndef planted() -> int:\n    total = 0\n{body}    return total\n'


def _lint(tree: Path) -> subprocess.CompletedProcess:
    """The checker as `make lint` runs it, on the copy's src/squidflow."""
    args = [sys.executable, str(TOOL), "--root", str(tree)]
    return subprocess.run(args, cwd=tree, capture_output=True, text=True, timeout=120)


def _copy(tmp_path: Path, planted: str) -> Path:
    """A tree whose src/squidflow is a copy of the library with `planted` as planted.py."""
    tree = tmp_path / "repo"
    shutil.copytree(
        ROOT / "src" / "squidflow", tree / "src" / "squidflow", ignore=shutil.ignore_patterns("__pycache__")
    )
    (tree / "src" / "squidflow" / "planted.py").write_text(planted)
    return tree


def test_a_planted_81_line_function_fails_and_80_lines_pass(tmp_path: Path) -> None:
    assert _planted(81).count("\n") - 3 == 81  # the docstring and two blank lines, then the function
    ok = _lint(_copy(tmp_path / "ok", _planted(80)))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = _lint(_copy(tmp_path / "bad", _planted(81)))
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert bad.stdout.splitlines() == ["src/squidflow/planted.py:4: planted is 81 lines (limit 80): split it"]
