"""No function in the library longer than the limit (80 lines, its `def` line to its last line, docstring included).

    python tools/function_length.py [--limit 80] [--root .] [src/squidflow]

ruff has no rule for a function's length in lines: its PLR0915 (too many statements, also in `make lint`) counts
statements, and one 81-line statement (a long literal, a call with many arguments) passes it. This reads every
function and method with ast and prints `file:line: name is N lines (limit L)` for each one over the limit; the exit
status is 1 if there is one. `make lint` runs it.

There is no list of exceptions: the last functions over the limit were split in issue 60 (the dataset card became a
Jinja2 template), and a new one is split along its seams, not listed.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 80


def functions(path: Path, root: Path) -> Iterator[tuple[str, int, int]]:
    """(`path::qualified.name`, first line, length in lines) of every function and method in a file."""
    rel = path.resolve().relative_to(root.resolve()).as_posix()

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, int, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    yield f"{rel}::{name}", child.lineno, (child.end_lineno or child.lineno) - child.lineno + 1
                yield from walk(child, f"{name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(ast.parse(path.read_text(), filename=str(path)), "")


def check(paths: list[Path], root: Path, limit: int) -> list[str]:
    """One line per function over `limit`."""
    problems = []
    for top in paths:
        for path in sorted(top.rglob("*.py")) if top.is_dir() else [top]:
            for key, line, length in functions(path, root):
                if length <= limit:
                    continue
                rel, name = key.split("::")
                problems.append(f"{rel}:{line}: {name} is {length} lines (limit {limit}): split it")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, default=[Path("src/squidflow")])
    parser.add_argument("--limit", type=int, default=LIMIT)
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the paths in the output are relative to it")
    args = parser.parse_args(argv)
    problems = check([args.root / p for p in args.paths], args.root, args.limit)
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
