"""`make lint` fails on a function over 80 lines in the library (tools/function_length.py, the project's own rule:
ruff counts statements, not lines): a planted 81-line function in a copy of src/squidflow fails it, naming the file,
the line and the length, while the same function at 80 lines passes; and a to-do entry whose function was split
fails too, so that the list of functions still to split only shrinks."""

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


def _lint(tree: Path, todo: Path | None = None) -> subprocess.CompletedProcess:
    """The checker as `make lint` runs it (the project's to-do list unless `todo`), on the copy's src/squidflow."""
    args = [sys.executable, str(TOOL), "--root", str(tree)]
    if todo is not None:
        args += ["--todo", str(todo)]
    return subprocess.run(args, cwd=tree, capture_output=True, text=True, timeout=120)


def _copy(tmp_path: Path, planted: str, *, library: bool = True) -> Path:
    """A tree whose src/squidflow is a copy of the library (else empty) with `planted` as planted.py."""
    tree = tmp_path / "repo"
    if library:
        shutil.copytree(
            ROOT / "src" / "squidflow", tree / "src" / "squidflow", ignore=shutil.ignore_patterns("__pycache__")
        )
    else:
        (tree / "src" / "squidflow").mkdir(parents=True)
    (tree / "src" / "squidflow" / "planted.py").write_text(planted)
    return tree


def test_a_planted_81_line_function_fails_and_80_lines_pass(tmp_path: Path) -> None:
    assert _planted(81).count("\n") - 3 == 81  # the docstring and two blank lines, then the function
    ok = _lint(_copy(tmp_path / "ok", _planted(80)))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = _lint(_copy(tmp_path / "bad", _planted(81)))
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert bad.stdout.splitlines() == ["src/squidflow/planted.py:4: planted is 81 lines (limit 80): split it"]


def test_a_to_do_entry_whose_function_is_short_fails(tmp_path: Path) -> None:
    todo = tmp_path / "long_functions.txt"
    todo.write_text("# still to split\nsrc/squidflow/planted.py::planted\n")
    tree = _copy(tmp_path, _planted(81), library=False)
    assert _lint(tree, todo).returncode == 0
    (tree / "src" / "squidflow" / "planted.py").write_text(_planted(40))
    res = _lint(tree, todo)
    assert res.returncode == 1 and "src/squidflow/planted.py::planted: on the to-do list" in res.stdout, res.stdout
