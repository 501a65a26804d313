"""`make lint`'s formatter and type checker guard the code: an unformatted file fails `ruff format --check`, a type
error fails mypy, each run as `make lint` runs it (the project's pyproject.toml) on a copy in a temporary folder.
A planted layering violation failing import-linter is in test_layering.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _tool(name: str) -> Path:
    """The venv's `name` (make setup installs it from requirements.lock), else one on PATH."""
    path = Path(sys.executable).with_name(name)
    if path.exists():
        return path
    if shutil.which(name):
        return Path(shutil.which(name))
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true: {name} is missing from {path.parent}: make setup installs it (requirements.lock)")
    pytest.skip(f"{name} is not installed in {path.parent} (make setup installs it)")


def _copy(tmp_path: Path, module: str) -> Path:
    """A tree with the project's pyproject.toml and a package `squidflow` holding only `planted.py` = `module`."""
    copy = tmp_path / "repo"
    (copy / "src" / "squidflow").mkdir(parents=True)
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    (copy / "src" / "squidflow" / "__init__.py").write_text('"""A planted package."""\n')
    (copy / "src" / "squidflow" / "planted.py").write_text(module)
    return copy


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=600)


GOOD = '''"""A planted module."""


def twice(n: int) -> int:
    return 2 * n
'''


def test_an_unformatted_file_fails_ruff_format(tmp_path: Path) -> None:
    ruff = _tool("ruff")
    assert _run([str(ruff), "format", "--check", "src"], _copy(tmp_path / "good", GOOD)).returncode == 0
    bad = _copy(tmp_path / "bad", GOOD.replace("return 2 * n", "return  2*n"))
    res = _run([str(ruff), "format", "--check", "src"], bad)
    assert res.returncode == 1 and "src/squidflow/planted.py" in res.stdout, res.stdout + res.stderr


def test_a_type_error_fails_mypy(tmp_path: Path) -> None:
    mypy = _tool("mypy")
    # mypy reads the copy's pyproject.toml ([tool.mypy]: files = ["src/squidflow"]), as `make lint` runs it
    good = _run([str(mypy), "--cache-dir", str(tmp_path / "cache")], _copy(tmp_path / "good", GOOD))
    assert good.returncode == 0, good.stdout + good.stderr
    bad = _copy(tmp_path / "bad", GOOD + "\n\ndef label(n: int) -> str:\n    return twice(n)\n")
    res = _run([str(mypy), "--cache-dir", str(tmp_path / "cache")], bad)
    assert res.returncode == 1, res.stdout + res.stderr
    assert 'src/squidflow/planted.py:9: error: Incompatible return value type (got "int", expected "str")' in (
        res.stdout
    ), res.stdout


def test_mypy_ignores_no_module() -> None:
    """Every module of src/squidflow is type-checked: no `[[tool.mypy.overrides]]` silences a module's errors (the
    list of 60 modules that did, from when mypy joined `make lint`, is gone; issue 45)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    silenced = [o["module"] for o in mypy.get("overrides", []) if o.get("ignore_errors")]
    assert not silenced, f"mypy ignores the errors of {silenced}; fix them instead"
