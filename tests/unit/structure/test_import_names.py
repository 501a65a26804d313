"""Every `from squidflow... import name` in the library, the scripts and the benchmarks names something that exists,
including the imports inside functions, which run only when their command or branch does (a module moved into a
subpackage left `squidflow label-studio push` importing `server` from its sibling `tasks`: only the Label Studio
server test, minutes into a whole run, saw it). Read from the source text, so nothing heavy is imported."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from helpers.tools import layering

ROOT = layering.ROOT

SRC = ROOT / "src"
FOLDERS = ("src/squidflow", "scripts", "benchmarks", "tests")


def module_file(module: str) -> Path | None:
    """The file of a squidflow module or package, None when there is none."""
    base = SRC.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@functools.cache  # a module is imported from by many files: parsed once per session
def defined_names(path: Path) -> frozenset[str]:
    """What `from <module> import X` can take from the module at `path`: its top-level definitions, assignments and
    imports (any of them, a conditional one included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return frozenset(names)


def unresolved(source: str, where: str) -> list[str]:
    """Every `from squidflow.X import Y` in `source` whose module or name does not exist, as 'where:line: text'."""
    problems = []
    for node in ast.walk(ast.parse(source)):
        if not (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.split(".")[0] == "squidflow"
        ):
            continue
        path = module_file(node.module)
        if path is None:
            problems.append(f"{where}:{node.lineno}: no module {node.module}")
            continue
        names = defined_names(path)
        for alias in node.names:
            if alias.name != "*" and alias.name not in names and module_file(f"{node.module}.{alias.name}") is None:
                problems.append(f"{where}:{node.lineno}: {node.module} has no {alias.name}")
    return problems


def test_every_squidflow_import_names_a_module_and_a_name_that_exist():
    problems = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            problems += unresolved(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert not problems, "imports of names that do not exist:\n" + "\n".join(problems)


def test_the_check_catches_a_name_imported_from_the_wrong_module():
    planted = "def run():\n    from squidflow.judgments.label_studio.tasks import server\n"
    assert unresolved(planted, "planted.py") == ["planted.py:2: squidflow.judgments.label_studio.tasks has no server"]
    assert unresolved("from squidflow.judgments.label_studio import server\n", "fixed.py") == []
    assert unresolved("from squidflow.nowhere import x\n", "gone.py") == ["gone.py:1: no module squidflow.nowhere"]
