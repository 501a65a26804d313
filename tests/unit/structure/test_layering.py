"""The library is a staircase: the shared floor imports no stage, a stage imports only the floor and the stages before
it in the pipeline (the Snakefile's include order), and `demo` sits on top. import-linter checks it (the contract in
pyproject.toml, run by `make lint`); these tests keep the contract equal to the Snakefile's order, show that a
planted violation fails it, and find import circles (tools/layering.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.tools import layering

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = layering.ROOT
# the venv's (make setup installs it), else one on PATH
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
if not LINT_IMPORTS.exists() and shutil.which("lint-imports"):
    LINT_IMPORTS = Path(shutil.which("lint-imports"))
CONTRACT = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"][0]


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


def test_the_contracts_layers_are_the_snakefiles_order_with_demo_on_top() -> None:
    order = layering.stage_order()
    assert order[-1] == "demo" and order.index("videos") < order.index("frames") < order.index("training")
    assert set(order) == {p.stem for p in (ROOT / "workflow" / "rules").glob("*.smk")} - {"common"}
    layers = CONTRACT["layers"]
    assert layers[0] == "cli" and layers[1:-1] == order[::-1], (
        f"pyproject.toml's import-linter layers must be cli, then the stages latest first ({order[::-1]}), then the "
        f"floor; they are {layers}"
    )


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    copy.mkdir()
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    shutil.copytree(
        ROOT / "src" / "squidflow", copy / "src" / "squidflow", ignore=shutil.ignore_patterns("__pycache__")
    )
    return copy


def test_a_planted_layering_violation_fails_lint(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    # judgments reaching forward into training's internals, inside a function (imports there count too)
    scores = copy / "src" / "squidflow" / "judgments" / "scores.py"
    scores.write_text(
        scores.read_text() + "\n\ndef _planted():\n    from squidflow.training.pools import se_pool\n\n"
        "    return se_pool\n"
    )
    # and the floor importing a stage
    errors = copy / "src" / "squidflow" / "errors.py"
    errors.write_text(errors.read_text() + "\n\ndef _planted():\n    from squidflow import demo\n\n    return demo\n")
    res = _lint_imports(copy)
    assert res.returncode != 0 and "BROKEN" in res.stdout, res.stdout[-4000:]
    assert "squidflow.judgments.scores -> squidflow.training.pools" in res.stdout, res.stdout[-4000:]
    assert "squidflow.errors -> squidflow.demo" in res.stdout, res.stdout[-4000:]


def test_no_import_circles() -> None:
    """Two modules that import each other (at the top or inside a function) are one thing in two files, or a
    missing floor between them."""
    assert layering.cycles() == []


def test_a_planted_circle_is_found(tmp_path: Path) -> None:
    src = _copy(tmp_path) / "src" / "squidflow"
    (src / "judgments" / "ingest.py").write_text(
        (src / "judgments" / "ingest.py").read_text()
        + "\n\ndef _planted():\n    from squidflow.judgments import keywords\n"
    )
    assert layering.cycles(src) == [["squidflow.judgments.ingest", "squidflow.judgments.keywords"]]
