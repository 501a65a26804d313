"""`make lint` type-checks every module: no mypy override silences one (the linters themselves run in `make lint`
only, not again here)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


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
