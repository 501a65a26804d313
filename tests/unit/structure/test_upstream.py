"""Where squidflow touches the engine's non-public names or replaces its behaviour: only in the modules that
docs/upstream.md declares, each on the dependency versions squidflow.runtime.upstream.TESTED names, which pyproject.toml's
bounds repeat.

A place is: a private attribute (`_name`, not `__dunder__`) read from a Snakemake object or module (`workflow._x`,
`snakemake.<...>._x`, a name imported from `snakemake` or one of its plugins), an assignment to an attribute of such
a module or class (`plugin.query_job_status = ...`), `setattr` on one, or an assignment to `sys.argv` (Snakemake's
log header quotes it after the Snakefile is read). Searched in the library, the scripts, the rules (`Snakefile`,
`workflow/**/*.smk`, read as Python where they are Python), the benchmarks and the tests."""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "upstream.md"
# module -> what it changes (docs/upstream.md has a section for each)
DECLARED = {
    "src/squidflow/runtime/slurm_plugin.py": "the Slurm executor plugin's status query (`CANCELLED by <uid>`)",
    "src/squidflow/report/script_data.py": "Snakemake's report renderers (the script data made inert)",
    "src/squidflow/runtime/s3_plugin.py": "the S3 storage plugin's folder check, HEAD answers, bucket check and "
    "inventory (one listing per folder)",
    "src/squidflow/runtime/input_sizes.py": "Snakemake's scheduler asks an input's size once, not in every round",
    "src/squidflow/runtime/command_line.py": "the command line Snakemake's log header quotes (`sys.argv` redacted)",
}
# What the library and the rules read from Snakemake beyond its documented interface, or add to it (docs/upstream.md,
# sections 5-9): each in the one file that declares it (pattern -> that file), nowhere else.
READS = {
    r"\bdag_settings\b": "src/squidflow/runtime/targets.py",
    r"\bsnakemake\.cli\b": "src/squidflow/runtime/command_line.py",
    r"\bexecutor_plugin\b": "src/squidflow/runtime/slurm.py",
    r"\batexit\b": "src/squidflow/runtime/slurm.py",
    r"\bis_producer\b": "src/squidflow/runtime/targets.py",
    r'config\["_squidflow"\]': "workflow/rules/common.smk",
}
ENGINE_PACKAGES = ("snakemake", "snakemake_executor_plugin_", "snakemake_interface_")
ENGINE_NAMES = {"workflow", "snakemake"}  # the Snakefile's `workflow`, the scripts' injected `snakemake`
SMK_PRIVATE = re.compile(
    r"\b(?:workflow|snakemake)(?:\.\w+)*\._(?!_)\w+|\bsetattr\(\s*(?:workflow|snakemake)\b|\bsys\.argv\s*(?:\[[^\]]*\])?\s*="
)


def _engine_names(tree: ast.AST) -> set[str]:
    """The names a module binds to the engine: `workflow`, `snakemake`, what it imports from Snakemake or its plugins
    (`import snakemake_executor_plugin_slurm as plugin`, `from snakemake.report.html_reporter import data`), and every
    name given one of them or an object reached from one (`plugin = snakemake_executor_plugin_slurm`, `with
    SnakemakeApi() as api`, `workflow_api = api.workflow(...)`, `for rule in workflow.rules`): issue 55's
    `workflow_api._workflow` went through two such names."""
    names = set(ENGINE_NAMES)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name.startswith(ENGINE_PACKAGES)}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(ENGINE_PACKAGES):
            names |= {a.asname or a.name for a in node.names}
    bindings = []  # (what is bound, where it comes from)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            bindings += [(t, node.value) for t in node.targets]
        elif isinstance(node, (ast.For, ast.comprehension)):
            bindings.append((node.target, node.iter))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            bindings.append((node.optional_vars, node.context_expr))
    while True:  # until no binding adds a name: a name may come from one bound later in the file
        added = {
            n.id
            for target, value in bindings
            if _root(value) in names
            for n in ast.walk(target)
            if isinstance(n, ast.Name)
        } - names
        if not added:
            return names
        names |= added


def _is_argv(node: ast.AST) -> bool:
    """`sys.argv` or `sys.argv[...]` as an assignment target."""
    node = node.value if isinstance(node, ast.Subscript) else node
    return isinstance(node, ast.Attribute) and node.attr == "argv" and _root(node.value) == "sys"


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def places(source: str, filename: str = "<planted>") -> list[str]:
    """Every place in `source` that touches the engine's private names or replaces its attributes."""
    try:
        tree = ast.parse(source, filename)
    except SyntaxError:  # a rules file: Snakemake's grammar, not Python's
        return [
            f"{filename}:{source[: m.start()].count(chr(10)) + 1}: {m.group(0)}" for m in SMK_PRIVATE.finditer(source)
        ]
    engine = _engine_names(tree)
    found = []
    for node in ast.walk(tree):
        where = f"{filename}:{getattr(node, 'lineno', 0)}"
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and _root(node.value) in engine
        ):
            found.append(f"{where}: private {ast.unparse(node)}")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [
                f"{where}: assigns {ast.unparse(t)}"
                for t in targets
                if (isinstance(t, ast.Attribute) and _root(t.value) in engine - ENGINE_NAMES) or _is_argv(t)
            ]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and node.args
            and _root(node.args[0]) in engine
        ):
            found.append(f"{where}: setattr on {ast.unparse(node.args[0])}")
    return found


def searched(root: Path) -> list[Path]:
    files = [root / "Snakefile", *(root / "workflow").rglob("*.smk")]
    for folder in ("src", "scripts", "benchmarks", "tests"):
        files += (root / folder).rglob("*.py")
    # scripts/squidflow links to src/squidflow: each file once, where it lives
    return sorted(
        f for f in files if f.is_file() and not any((root / p).is_symlink() for p in f.relative_to(root).parents)
    )


def check(root: Path) -> list[str]:
    """What the suite fails on in the tree at `root`: places outside DECLARED, and declared modules touching nothing."""
    by_file = {str(f.relative_to(root)): places(f.read_text(), str(f.relative_to(root))) for f in searched(root)}
    undeclared = [p for f, found in by_file.items() if f not in DECLARED for p in found]
    problems = [f"undeclared: {p}" for p in undeclared]
    return problems + [f"declared but touching nothing any more: {f}" for f in DECLARED if not by_file.get(f)]


def reads(root: Path) -> list[str]:
    """The declared reads (READS) found outside their file, and a declared file that no longer holds its read. The
    tests are not searched for these: a test of a declared read names what it reads."""
    texts = {str(f.relative_to(root)): f.read_text() for f in searched(root) if f.relative_to(root).parts[0] != "tests"}
    problems = []
    for pattern, home in READS.items():
        holders = {name for name, text in texts.items() if re.search(pattern, text)}
        problems += [f"{name}: reads {pattern!r}, declared only in {home}" for name in sorted(holders - {home})]
        if home not in holders:
            problems.append(f"{home}: declared to read {pattern!r}, no longer does: take it out of READS and the doc")
    return problems


def test_what_is_read_beyond_the_documented_interface_stays_where_it_is_declared() -> None:
    problems = reads(ROOT)
    assert not problems, (
        "Snakemake read beyond its documented interface outside the declared file: use the declared helper "
        "(squidflow.runtime.command_line, squidflow.runtime.targets), or declare it in docs/upstream.md and READS:\n"
        + "\n".join(problems)
    )
    doc = DOC.read_text()
    for home in set(READS.values()):
        assert f"`{home}`" in doc, f"docs/upstream.md: a section for {home}"


def test_a_declared_read_spreading_to_another_file_fails(tree_copy: Path) -> None:
    where = tree_copy / "src/squidflow/runtime/logs.py"
    original = where.read_text()
    try:
        where.write_text(original + "\n\ndef executor(workflow):\n    return workflow.executor_plugin\n")
        problems = reads(tree_copy)
    finally:
        where.write_text(original)
    assert len(problems) == 1 and problems[0].startswith("src/squidflow/runtime/logs.py: reads "), problems
    assert "executor_plugin" in problems[0] and "declared only in src/squidflow/runtime/slurm.py" in problems[0]


def test_only_the_declared_modules_touch_the_engines_private_names_or_replace_its_behaviour() -> None:
    problems = check(ROOT)
    assert not problems, (
        "the engine's non-public names or behaviour touched outside the declared modules: use a "
        "public interface, or declare the place in docs/upstream.md and DECLARED here (and take "
        "a declaration out when its module no longer needs it):\n" + "\n".join(problems)
    )


@pytest.mark.parametrize(
    ("where", "planted"),
    [
        ("src/squidflow/runtime/targets.py", "def f(workflow):\n    return workflow._something\n"),
        ("src/squidflow/runtime/targets.py", "import snakemake\nx = snakemake.report.html_reporter._render\n"),
        (
            "src/squidflow/runtime/targets.py",
            "from snakemake.report.html_reporter import data\nsetattr(data, 'render_results', str)\n",
        ),
        (
            "src/squidflow/runtime/slurm.py",
            "import snakemake_executor_plugin_slurm as p\np.Executor.run_jobs = print\n",
        ),
        ("scripts/run_summary.py", "rules = snakemake._workflow.rules\n"),
        ("workflow/targets.smk", "_rules = workflow._workflow.rules\n"),
        ("workflow/rules/report.smk", "rule a:\n    output: 'x'\n    run:\n        print(workflow._something)\n"),
        ("src/squidflow/runtime/targets.py", "import sys\nsys.argv[:] = ['snakemake']\n"),
        ("workflow/rules/report.smk", "sys.argv[:] = [a for a in sys.argv]\n"),
        (  # issue 55: what test_report_rules did before it read the Snakefile's own `workflow`
            "tests/unit/report/test_report_rules.py",
            "from snakemake.api import SnakemakeApi\n\n\ndef walk():\n    with SnakemakeApi() as api:\n"
            "        workflow_api = api.workflow(snakefile='Snakefile')\n        return workflow_api._workflow.rules\n",
        ),
        (
            "tests/helpers/runs.py",
            "def rules(workflow):\n    for rule in workflow.rules:\n        rule._set_params()\n",
        ),
    ],
)
def test_a_planted_private_access_outside_the_declared_modules_fails(tree_copy: Path, where: str, planted: str) -> None:
    """The check above, on a copy of the tree with one planted place in a module nobody declared."""
    original = (tree_copy / where).read_text()
    try:
        (tree_copy / where).write_text(original + "\n" + planted)
        problems = check(tree_copy)
    finally:
        (tree_copy / where).write_text(original)
    assert problems and all(p.startswith(f"undeclared: {where}:") for p in problems), problems


@pytest.fixture(scope="module")
def tree_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("tree")
    shutil.copy(ROOT / "Snakefile", copy / "Snakefile")
    for folder in ("src", "scripts", "benchmarks", "workflow", "tests"):
        shutil.copytree(ROOT / folder, copy / folder, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    assert check(copy) == []
    return copy


def test_an_alias_of_an_engine_module_is_counted() -> None:
    planted = "def f(p=None):\n    import snakemake_executor_plugin_slurm\n    p = snakemake_executor_plugin_slurm\n    p.run = print\n"
    assert places(planted) == ["<planted>:4: assigns p.run"]


def test_public_names_are_not_counted() -> None:
    assert not places("def f(workflow):\n    return [r.name for r in workflow.rules], workflow.__class__\n")
    assert not places("class A:\n    def f(self):\n        return self._x\n")  # squidflow's own private names


def _bounds() -> dict[str, str]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    out = {}
    for dep in deps:
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)\s*(.*)", dep)
        out[m.group(1).lower()] = m.group(2)
    return out


# `tests/x.py`, `tests/x.py::test_y` (the name may wrap to the next line) or `::test_y` (of the file named last)
NAMED_TEST = re.compile(r"`(tests/[\w/.-]+\.py)?(?:::\s*(\w+))?`")


def missing_tests(doc: str, root: Path) -> list[str]:
    """The tests `doc` names that the tree at `root` does not have: a declaration is kept honest by its test, so a
    test that moved or was renamed must take the doc with it."""
    missing, last = [], None
    for m in NAMED_TEST.finditer(doc):
        path, name = m.group(1) or last, m.group(2)
        if path is None or not (m.group(1) or name):
            continue
        last = path
        source = (root / path).read_text() if (root / path).is_file() else None
        if source is None:
            missing.append(f"{path}: no such file")
        elif name and not re.search(rf"^\s*(?:async )?def {name}\(", source, re.M):
            missing.append(f"{path}::{name}: no such test")
    return list(dict.fromkeys(missing))


def test_every_test_the_declarations_name_exists() -> None:
    missing = missing_tests(DOC.read_text(), ROOT)
    assert not missing, "docs/upstream.md names tests that are not there:\n" + "\n".join(missing)


def test_a_declaration_naming_a_moved_or_renamed_test_is_found() -> None:
    doc = (
        "- **Test**: `tests/unit/structure/test_upstream.py::test_public_names_are_not_counted` and `::\n"
        "  test_a_declared_test_that_was_renamed`, and `tests/integration/test_slurm.py` (a real cluster)."
    )
    assert missing_tests(doc, ROOT) == [
        "tests/unit/structure/test_upstream.py::test_a_declared_test_that_was_renamed: no such test",
        "tests/integration/test_slurm.py: no such file",
    ]


def test_every_patched_dependency_is_bounded_at_its_newest_tested_version_and_documented() -> None:
    from squidflow.runtime.upstream import TESTED

    bounds = _bounds()
    doc = DOC.read_text()
    for dist, (_low, high) in TESTED.items():
        assert f"<={high}" in bounds.get(dist, ""), (
            f"pyproject.toml: bound {dist} at its newest tested version: "
            f"'{dist}>=...,<={high}' (it says {bounds.get(dist)!r})"
        )
        assert f"`{dist}`" in doc and high in doc, f"docs/upstream.md: name {dist} and the version tested ({high})"
    for module, what in DECLARED.items():
        assert f"`{module}`" in doc, f"docs/upstream.md: a section for {module} ({what})"


def test_outside_the_tested_versions_the_report_is_snakemakes_own_and_a_warning_says_so_once(monkeypatch) -> None:
    """The Slurm plugin's side is tested in tests/unit/floor/test_slurm_profile.py."""
    from snakemake.report.html_reporter import data

    from squidflow.report.script_data import escape_report_scripts
    from squidflow.runtime import upstream

    monkeypatch.setattr(upstream, "_warned", set())
    before = data.render_results
    said: list[str] = []
    monkeypatch.setattr(upstream.log, "warning", said.append)
    assert escape_report_scripts(version="10.0.0") == [] and escape_report_scripts(version="10.1.0") == []
    assert data.render_results is before
    assert len(said) == 1 and "snakemake 10.0.0 is outside" in said[0] and "9.27.1" in said[0], said
