"""Which squidflow made a result: the release version (one number, `pyproject.toml`'s) and the commit.

The version is written once, in `pyproject.toml`. An installed squidflow (a wheel, `pip install .`) reads it from its
package metadata; a checkout reads `pyproject.toml` itself, so a run from a clone names the version of the files it
runs even when the installed metadata is older (an editable install records the version it was installed with).
`describe(root)` adds the commit: `git describe` of the workflow's checkout (`v0.4.0` on a release tag,
`v0.4.0-4-g1a2b3c4` four commits after it, `-dirty` with local changes), or just the version outside a checkout
(a wheel, a module fetched by Snakemake).
"""

from __future__ import annotations

import re
import subprocess
from importlib import metadata
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent
CHECKOUT_PYPROJECT = PACKAGE_ROOT.parents[1] / "pyproject.toml"  # src/squidflow/ -> the checkout's root


def _pyproject_version(path: Path) -> str | None:
    """`[project] version` of squidflow's pyproject.toml; None when `path` is not squidflow's."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    try:
        import tomllib  # Python 3.11+
    except ImportError:  # Python 3.10: the two lines we need, without a TOML parser
        project = text.split("[project]", 1)[-1].split("\n[", 1)[0]
        name = re.search(r'^name\s*=\s*"([^"]+)"', project, re.MULTILINE)
        version = re.search(r'^version\s*=\s*"([^"]+)"', project, re.MULTILINE)
        fields = {"name": name and name.group(1), "version": version and version.group(1)}
    else:
        fields = tomllib.loads(text).get("project", {})
    return fields.get("version") if fields.get("name") == "squidflow" else None


def package_version() -> str:
    """The version of this squidflow: the checkout's pyproject.toml, else the installed package's metadata."""
    found = _pyproject_version(CHECKOUT_PYPROJECT)
    if found:
        return found
    try:
        return metadata.version("squidflow")
    except metadata.PackageNotFoundError:
        return "0+unknown"  # neither installed nor in a checkout (a copy of src/ on its own)


__version__ = package_version()
# The checkout this library runs from (None when installed: a wheel has no workflow beside it)
CHECKOUT: Path | None = CHECKOUT_PYPROJECT.parent if _pyproject_version(CHECKOUT_PYPROJECT) else None


def git_describe(root: str | Path) -> str:
    """`git describe --tags --always --dirty` of the checkout at `root`; '' outside a git checkout or without git."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "describe", "--tags", "--always", "--dirty"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def describe(root: str | Path | None = None) -> str:
    """What made a result, for people: `squidflow 0.4.0 (v0.4.0-4-g1a2b3c4-dirty)` in a checkout, `squidflow 0.4.0`
    elsewhere. `root` is the workflow's folder (default: this library's checkout)."""
    root = root if root is not None else CHECKOUT
    described = git_describe(root) if root is not None else ""
    return f"squidflow {__version__}" + (f" ({described})" if described else "")
