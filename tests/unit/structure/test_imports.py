"""Every job pays start-up only for what it uses: a rule's script, with the imports it makes before it calls the
library, loads exactly the heavy libraries its rule computes with (the table below), no more and no fewer. Stage
modules import torch, torchvision, timm, scipy.stats, sklearn, matplotlib, sentence-transformers, faiss,
label-studio-sdk, crowd-kit where they are used, inside the function; a module-level import of one of them in a
module many scripts import makes every such job pay for it (torch ~2-5 CPU s, torchvision ~4-10 with torch's
compiler stack, scipy.stats ~1). A failure names the module and the chain of imports that pulled it in.
(tests/helpers/script_imports.py runs the imports, forks of one process for the scripts and a fresh interpreter
for the planted case; benchmarks/startup.py measures their CPU seconds.)
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.script_imports import HEAVY, ROOT, run_imports, run_imports_of, scripts

TORCH_VISION = frozenset({"torch", "torchvision", "torch._dynamo"})  # torchvision's import pulls in torch._dynamo

# The heavy modules a rule's script imports before its library call: the rules that compute with torch import it
# to set its threads; `train` builds torchvision's augmentations; the crowd models work on pandas frames. Every
# other job imports its heavy libraries inside the library function that uses them (or not at all).
NEEDS: dict[str, frozenset[str]] = {
    "comparison_embed": frozenset({"torch"}),
    "comparison_sbert": frozenset({"torch"}),
    "crowd_aggregation": frozenset({"pandas"}),
    "crowd_comparison": frozenset({"pandas"}),
    "featurize": frozenset({"torch"}),
    "litmus_train_guesser": frozenset({"torch"}),
    "publish_dataset": frozenset({"pandas"}),  # the `datasets` features it writes the shards with import pandas
    "train": TORCH_VISION,
    "zero_shot_predictions": frozenset({"torch"}),
}


def _chain(script: str, chain: list[str]) -> str:
    return " -> ".join(f"scripts/{script}.py" if m == "__main__" else m for m in chain)


def check(
    script: Path, needs: frozenset[str], env: dict[str, str] | None = None, found: dict[str, list[str]] | None = None
) -> list[str]:
    """What is wrong with `script`'s heavy imports (`found`, else run here) against `needs`, one line per module."""
    found = run_imports(script, env) if found is None else found
    problems = [f"scripts/{script.name} imports {m}, which rule {script.stem} does not need: "
                f"{_chain(script.stem, found[m])}" for m in sorted(set(found) - needs)]  # fmt: skip
    problems += [f"scripts/{script.name} no longer imports {m} before its library call: update NEEDS in "
                 f"tests/unit/structure/test_imports.py" for m in sorted(needs - set(found))]  # fmt: skip
    return problems


def test_the_table_names_every_script_and_only_heavy_modules() -> None:
    names = {p.stem for p in scripts()}
    assert set(NEEDS) <= names, f"NEEDS names scripts that do not exist: {sorted(set(NEEDS) - names)}"
    assert all(needs <= set(HEAVY) for needs in NEEDS.values())


@pytest.fixture(scope="module")
def imported() -> dict[str, dict[str, list[str]]]:
    """Every script's heavy imports, each in a fork of one interpreter that imported only light modules, as many at
    once as there are cores."""
    return run_imports_of(scripts())


@pytest.mark.parametrize("script", scripts(), ids=lambda p: p.stem)
def test_a_script_imports_the_heavy_modules_its_rule_needs(script: Path, imported: dict) -> None:
    problems = check(script, NEEDS.get(script.stem, frozenset()), found=imported[script.stem])
    assert not problems, "\n".join(problems)


def test_a_planted_heavy_import_is_named_with_its_chain(tmp_path: Path) -> None:
    """A library module that imports scipy.stats at its top, imported by a script through another module: the
    failure names scipy.stats and the whole chain."""
    (tmp_path / "planted_floor.py").write_text("import scipy.stats\n")
    (tmp_path / "planted_stage.py").write_text("import planted_floor\n")
    script = tmp_path / "planted_rule.py"
    script.write_text('"""Rule planted_rule."""\n\nfrom squidflow.runtime.logs import setup\n\nlog = setup(snakemake)\n\n'
                      "import polars as pl\n\nimport planted_stage\n\nprint(pl)\n")  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT / "src")])}
    problems = check(script, frozenset({"torch"}), env)
    assert any("imports scipy.stats, which rule planted_rule does not need: scripts/planted_rule.py -> "
               "planted_stage -> planted_floor -> scipy.stats" in p for p in problems), problems  # fmt: skip
    assert any("no longer imports torch" in p for p in problems), problems
    # the forks that check the real scripts find the same module and chain
    assert run_imports_of([script], env) == {"planted_rule": run_imports(script, env)}
