"""No library code that only the tests use (issue 60, item 5): every function, class and method of src/squidflow is
used by the workflow, the command, the scripts, the benchmarks or the tools, or is documented for readers to call
(its dotted name in README.md, docs/*.md or config/README.md). A function that only tests use goes with its tests:
a test helper lives in tests/helpers/.

A use is a name read in Python (a call, an attribute, an import, a dotted string such as an entry point) outside the
definition's own lines, or the name written in a rules file, a template or a configuration file (text: a comment
counts, so the check errs toward keeping). A method that overrides one of a base class from outside squidflow (a
crowd-kit model's private step) is that base class's to call, and is not counted as unused."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PYTHON = ("src", "scripts", "benchmarks", "tools", "workflow")  # where a Python use counts
TEXT = ("Snakefile", "Makefile", "pyproject.toml", "workflow/**/*", "src/squidflow/**/*", ".ci/*", "profiles/**/*",
        "envs/**/*", "containers/**/*")  # fmt: skip
DOCS = ("README.md", "docs/*.md", "config/README.md")


def _files(root: Path, patterns: tuple[str, ...]) -> list[Path]:
    """Each file once, where it lives (scripts/squidflow links to src/squidflow)."""
    found = {p for pattern in patterns for p in root.glob(pattern)}
    return sorted(
        p for p in found if p.is_file() and not any((root / q).is_symlink() for q in p.relative_to(root).parents)
    )


def _read(path: Path) -> str:
    """The file's text; nothing for a binary file (an image, a compiled module)."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return ""


def _uses(tree: ast.AST) -> list[tuple[str, int]]:
    """(name, line) of every name the module reads: names, attributes, imported names, dotted strings' parts."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.append((node.id, node.lineno))
        elif isinstance(node, ast.Attribute):
            out.append((node.attr, node.lineno))
        elif isinstance(node, ast.alias):
            out.append((node.name.rsplit(".", 1)[-1], node.lineno))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"[\w.:]+", node.value):
            out += [(part, node.lineno) for part in re.split(r"[.:]", node.value)]
    return out


def _definitions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    """The module's functions and classes, and its classes' methods (dunder methods are Python's to call)."""
    defs = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defs.append(node)
        if isinstance(node, ast.ClassDef):
            defs += [
                n
                for n in node.body
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and not n.name.startswith("__")
            ]
    return defs


def _external_overrides(tree: ast.Module) -> set[ast.AST]:
    """The methods of the module's classes that override a method of a base class imported from outside squidflow
    (`from crowdkit.aggregation import GLAD as CrowdKitGLAD; class GLAD(CrowdKitGLAD): def _e_step...`): the base
    class calls them. A base that cannot be imported here exempts nothing."""
    imported = {
        alias.asname or alias.name: (node.module, alias.name)
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] != "squidflow"
        for alias in node.names
    }
    found: set[ast.AST] = set()
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        bases = []
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id in imported:
                module, name = imported[base.id]
                try:
                    bases.append(getattr(importlib.import_module(module), name))
                except (ImportError, AttributeError):
                    continue
        found |= {
            n
            for n in node.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(hasattr(b, n.name) for b in bases)
        }
    return found


def unused(root: Path = ROOT) -> list[str]:
    """`path:line name` of each definition under src/squidflow that nothing but the tests uses and no doc names; a
    use inside such a definition does not count, so a chain of them is found at once."""
    trees = {p: ast.parse(_read(p)) for p in _files(root, tuple(f"{d}/**/*.py" for d in PYTHON))}
    uses: dict[str, list[tuple[Path, int]]] = {}
    for path, tree in trees.items():
        for name, line in _uses(tree):
            uses.setdefault(name, []).append((path, line))
    texts = [p for p in _files(root, TEXT) if p.suffix not in (".py", ".pyc")]
    words = {w for p in texts for w in re.findall(r"\w+", _read(p))}
    documented = {w for p in _files(root, DOCS) for w in re.findall(r"squidflow(?:\.\w+)+", _read(p))}
    candidates = []  # defined in the library, written in no rules, template or configuration file, named in no doc
    for path, tree in trees.items():
        rel = path.relative_to(root)
        if rel.parts[:2] != ("src", "squidflow"):
            continue
        module = ".".join(rel.with_suffix("").parts[1:]).removesuffix(".__init__")
        overrides = _external_overrides(tree)
        candidates += [
            (path, d)
            for d in _definitions(tree)
            if d.name not in words and f"{module}.{d.name}" not in documented and d not in overrides
        ]
    dead: list[tuple[Path, ast.AST]] = []
    while True:
        spans = [(p, d.lineno, d.end_lineno) for p, d in dead]
        more = [
            (path, d)
            for path, d in candidates
            if (path, d) not in dead
            and not any(
                not any(p == q and a <= line <= b for q, a, b in [*spans, (path, d.lineno, d.end_lineno)])
                for p, line in uses.get(d.name, [])
            )
        ]
        if not more:
            return sorted(f"{p.relative_to(root)}:{d.lineno} {d.name}" for p, d in dead)
        dead += more


def test_no_library_code_is_used_only_by_the_tests() -> None:
    found = unused()
    assert not found, (
        "used by nothing but the tests: delete it with its tests (a helper the tests need goes to tests/helpers/), "
        "or use it, or document it for readers in README.md or docs/ as squidflow.<module>.<name>:\n" + "\n".join(found)
    )


def test_a_function_only_a_test_calls_is_found_and_a_used_or_documented_one_is_not(tmp_path: Path) -> None:
    library = tmp_path / "src" / "squidflow"
    (library / "templates").mkdir(parents=True)
    (library / "tables.py").write_text(
        "from json import JSONEncoder\n\n\n"
        "def by_rule():\n    return 1\n\n\n"
        "def by_script():\n    return 2\n\n\n"
        "def documented():\n    return 3\n\n\n"
        "def only_tested():\n    return only_its_caller()\n\n\n"
        "def only_its_caller():\n    return 4\n\n\n"
        "class Facts:\n    def by_template(self):\n        return 5\n\n    def only_tested_too(self):\n        return 6\n\n\n"
        "class Encoder(JSONEncoder):\n    def default(self, o):\n        return 7\n\n    def only_tested_three(self):\n"
        "        return 8\n"
    )
    (library / "templates" / "card.md.j2").write_text("{{ facts.by_template() }}\n")
    (tmp_path / "workflow" / "rules").mkdir(parents=True)
    (tmp_path / "workflow" / "rules" / "tables.smk").write_text("from squidflow.tables import by_rule\n")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "table.py").write_text(
        "from squidflow import tables\n\ntables.by_script(), tables.Facts(), tables.Encoder()\n"
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "reference.md").write_text("Call `squidflow.tables.documented` yourself.\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_tables.py").write_text(
        "from squidflow.tables import Facts, only_tested\n\nonly_tested()\nFacts().only_tested_too()\n"
    )
    assert unused(tmp_path) == [
        "src/squidflow/tables.py:16 only_tested",
        "src/squidflow/tables.py:20 only_its_caller",
        "src/squidflow/tables.py:28 only_tested_too",
        "src/squidflow/tables.py:36 only_tested_three",  # `default` overrides JSONEncoder's: JSONEncoder calls it
    ]
