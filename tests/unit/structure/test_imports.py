"""Every job pays start-up only for what it uses: a rule's script, with the imports it makes before it calls the
library, loads no heavy library (torch, torchvision, timm, scipy.stats, sklearn, matplotlib, sentence-transformers,
faiss, label-studio-sdk, crowd-kit, pandas, ...) except those its rule computes with. A rule computes with what its
script imports itself (`import torch`, to set its threads) and with what the stage module whose function it calls
imports at its top (squidflow.judgments.crowd works on pandas frames for crowd-kit). Anything else is a heavy import
pulled in by a module the script needs for something lighter (a config class, a schema, the floor), which makes
every such job pay for it (torch ~2-5 CPU s, torchvision ~4-10 with torch's compiler stack, scipy.stats ~1): import it
inside the function that uses it. A failure names the module and the chain of imports that pulled it in. No table
to edit: what a script may load follows from its own imports and calls.
(tests/helpers/script_imports.py runs the imports, forks of one process for the scripts and a fresh interpreter
for the planted case; benchmarks/startup.py measures their CPU seconds.)
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest
from helpers.script_imports import HEAVY, ROOT, run_imports, run_imports_of, scripts
from helpers.tools import layering


def _stages() -> tuple[str, ...]:
    """The library's stage packages (the Snakefile's, as pyproject.toml's import-linter layers name them; the shared
    floor below them is what every script imports, never a rule's computation)."""
    return tuple(f"squidflow.{name}" for name in layering.stage_order())


def called_stage_modules(script: Path) -> set[str]:
    """The stage modules whose functions `script` calls (`from squidflow.judgments.crowd import crowd_tables`, then
    `crowd_tables(...)`; or `from squidflow.judgments import crowd`, then `crowd.crowd_tables(...)`)."""
    tree = ast.parse(script.read_text())
    bound: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(_stages()):
            for a in node.names:
                bound[a.asname or a.name] = node.module
                bound.setdefault(f"{a.asname or a.name}.", f"{node.module}.{a.name}")  # a module imported by name
    called = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in bound:
                called.add(bound[f.id])
            elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f"{f.value.id}." in bound:
                called.add(bound[f"{f.value.id}."])
    return called


def _chain(script: str, chain: list[str]) -> str:
    return " -> ".join(f"scripts/{script}.py" if m == "__main__" else m for m in chain)


def check(script: Path, env: dict[str, str] | None = None, found: dict[str, list[str]] | None = None) -> list[str]:
    """The heavy modules `script`'s imports load (`found`, else run here) that its rule does not compute with, one
    line per module, with the chain that pulled each in."""
    found = run_imports(script, env) if found is None else found
    called = called_stage_modules(script)
    problems = []
    for module, chain in sorted(found.items()):
        first = chain[1] if len(chain) > 1 else chain[0]  # what the script itself imported
        if first.split(".")[0] in {h.split(".")[0] for h in HEAVY} or first in called:
            continue
        problems.append(
            f"scripts/{script.name} imports {module} before its library call, which rule {script.stem} does not "
            f"compute with: {_chain(script.stem, chain)} (import it inside the function that uses it)"
        )
    return problems


@pytest.fixture(scope="module")
def imported() -> dict[str, dict[str, list[str]]]:
    """Every script's heavy imports, each in a fork of one interpreter that imported only light modules, as many at
    once as there are cores."""
    return run_imports_of(scripts())


@pytest.mark.parametrize("script", scripts(), ids=lambda p: p.stem)
def test_a_script_imports_only_the_heavy_modules_its_rule_computes_with(script: Path, imported: dict) -> None:
    problems = check(script, found=imported[script.stem])
    assert not problems, "\n".join(problems)


def test_what_a_rule_computes_with_is_read_from_its_script() -> None:
    crowd = ROOT / "scripts" / "crowd_aggregation.py"
    assert called_stage_modules(crowd) == {"squidflow.judgments.crowd"}
    # the floor is never a rule's computation: io.write_parquet's module is not counted
    assert not any(m.startswith("squidflow.contracts") for m in called_stage_modules(crowd))


def test_a_planted_heavy_import_is_named_with_its_chain(tmp_path: Path) -> None:
    """A library module that imports scipy.stats at its top, imported by a script through another module: the
    failure names scipy.stats and the whole chain."""
    (tmp_path / "planted_floor.py").write_text("import scipy.stats\n")
    (tmp_path / "planted_stage.py").write_text("import planted_floor\n")
    script = tmp_path / "planted_rule.py"
    script.write_text('"""Rule planted_rule."""\n\nfrom squidflow.runtime.logs import setup\n\nlog = setup(snakemake)\n\n'
                      "import polars as pl\n\nimport planted_stage\n\nprint(pl)\n")  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}  # the planted modules
    problems = check(script, env)
    assert any("imports scipy.stats before its library call, which rule planted_rule does not compute with: "
               "scripts/planted_rule.py -> planted_stage -> planted_floor -> scipy.stats" in p
               for p in problems), problems  # fmt: skip
    # the forks that check the real scripts find the same module and chain
    assert run_imports_of([script], env) == {"planted_rule": run_imports(script, env)}


def test_a_heavy_module_the_script_imports_itself_is_its_rules_computation(tmp_path: Path) -> None:
    script = tmp_path / "planted_direct.py"
    script.write_text('"""Rule planted_direct."""\n\nimport scipy.stats\n\nprint(scipy.stats.norm)\n')
    env = dict(os.environ)
    assert check(script, env) == []
