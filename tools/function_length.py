"""No function in the library longer than the limit (80 lines, its `def` line to its last line, docstring included).

    python tools/function_length.py [--limit 80] [--todo tools/long_functions.txt] [--root .] [src/squidflow]

ruff has no rule for a function's length in lines: its PLR0915 (too many statements, also in `make lint`) counts
statements, and one 81-line statement (a long literal, a call with many arguments) passes it. This reads every
function and method with ast and prints `file:line: name is N lines (limit L)` for each one over the limit; the exit
status is 1 if there is one. `make lint` runs it.

The to-do file names the functions still over the limit that are to be split (`path::qualified.name`, one a line,
`#` comments), so that lint passes while they wait. It only shrinks: an entry whose function is now within the limit,
or gone, fails too, so that it is taken off the list the day its function is split.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 80
TODO = ROOT / "tools" / "long_functions.txt"


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


def read_todo(path: Path) -> set[str]:
    if not path.exists():
        return set()
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return {line for line in lines if line}


def check(paths: list[Path], root: Path, limit: int, todo: set[str]) -> list[str]:
    """One line per function over `limit` that is not on the to-do list, and per to-do entry no longer over it."""
    problems, over = [], set()
    for top in paths:
        for path in sorted(top.rglob("*.py")) if top.is_dir() else [top]:
            for key, line, length in functions(path, root):
                if length <= limit:
                    continue
                over.add(key)
                if key not in todo:
                    rel, name = key.split("::")
                    problems.append(f"{rel}:{line}: {name} is {length} lines (limit {limit}): split it")
    for key in sorted(todo - over):
        problems.append(f"{key}: on the to-do list but no longer over {limit} lines: take it off the list")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, default=[Path("src/squidflow")])
    parser.add_argument("--limit", type=int, default=LIMIT)
    parser.add_argument("--todo", type=Path, default=TODO, help="functions still over the limit (it only shrinks)")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the paths in the output are relative to it")
    args = parser.parse_args(argv)
    problems = check([args.root / p for p in args.paths], args.root, args.limit, read_todo(args.todo))
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
