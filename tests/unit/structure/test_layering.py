"""The library is a staircase: the shared floor imports no stage and has its own floors down to `errors`, a stage
imports only the floor and the stages before it in the pipeline (the Snakefile's include order), and `demo` sits on
top; no two modules or packages import each other. import-linter checks it (the contracts in pyproject.toml, run by
`make lint`); these tests keep the contract equal to the Snakefile's order and show that a planted wrong-way import
or import circle, inside a function, fails it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.tools import layering

ROOT = layering.ROOT
# the venv's (make setup installs it), else one on PATH
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
if not LINT_IMPORTS.exists() and shutil.which("lint-imports"):
    LINT_IMPORTS = Path(shutil.which("lint-imports"))


def _lint_imports(root: Path) -> subprocess.CompletedProcess:
    """`lint-imports` as `make lint` runs it, on the library under `root`."""
    if not LINT_IMPORTS.exists():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true: {LINT_IMPORTS} is missing: make setup installs import-linter (requirements.lock)")
        pytest.skip(f"import-linter is not installed in {LINT_IMPORTS.parent} (make setup installs it)")
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", str(root / "pyproject.toml")],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(root / "src")},  # the copy's library, not the installed one
    )


def test_the_contracts_layers_are_the_snakefiles_order_with_demo_on_top_and_the_floor_below() -> None:
    order = layering.stage_order()
    assert order[-1] == "demo" and order.index("videos") < order.index("frames") < order.index("training")
    assert set(order) == {p.stem for p in (ROOT / "workflow" / "rules").glob("*.smk")} - {"common"}
    layers = layering.layers()
    assert layers[0] == "cli" and layers[1 : 1 + len(order)] == order[::-1], (
        f"pyproject.toml's import-linter layers must be cli, then the stages latest first ({order[::-1]}), then the "
        f"floor's; they are {layers}"
    )
    floor = layering.floor_layers()
    assert len(floor) > 1 and floor[-1] == ["errors"], f"the floor's layers, errors at the bottom: {floor}"


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    copy.mkdir()
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    shutil.copytree(
        ROOT / "src" / "squidflow", copy / "src" / "squidflow", ignore=shutil.ignore_patterns("__pycache__")
    )
    return copy


def _plant(module: Path, imported: str) -> None:
    """`module` imports `imported` inside a function (imports there count too)."""
    module.write_text(module.read_text() + f"\n\ndef _planted():\n    import {imported}\n\n    return {imported}\n")


def test_a_planted_layering_violation_fails_lint(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    src = copy / "src" / "squidflow"
    _plant(src / "judgments" / "scores.py", "squidflow.training.pools")  # a stage reaching forward
    _plant(src / "errors.py", "squidflow.demo")  # the floor importing a stage
    _plant(src / "contracts" / "paths.py", "squidflow.config.validation")  # upward within the floor
    res = _lint_imports(copy)
    assert res.returncode != 0 and "BROKEN" in res.stdout, res.stdout[-4000:]
    for edge in (
        "squidflow.judgments.scores -> squidflow.training.pools",
        "squidflow.errors -> squidflow.demo",
        "squidflow.contracts.paths -> squidflow.config.validation",
    ):
        assert edge in res.stdout, res.stdout[-4000:]


def test_a_planted_circle_fails_lint(tmp_path: Path) -> None:
    """keywords imports ingest at its top; ingest importing keywords back, inside a function, closes a circle."""
    copy = _copy(tmp_path)
    _plant(copy / "src" / "squidflow" / "judgments" / "ingest.py", "squidflow.judgments.keywords")
    res = _lint_imports(copy)
    assert res.returncode != 0 and "No import circles BROKEN" in res.stdout, res.stdout[-4000:]
    assert "No cycles are allowed in squidflow.judgments" in res.stdout, res.stdout[-4000:]
