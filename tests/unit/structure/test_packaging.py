"""How squidflow is shipped: one version everywhere and the container recipe kept equal to the env files (the wheel in
an empty virtualenv is tests/e2e/test_wheel.py; snakefmt-clean rules are `make lint`'s)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

import squidflow
from squidflow.report.summary import write_run_summary
from squidflow.version import describe, git_describe

ROOT = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
ENV = {**os.environ}


# ---------------------------------------------------------------------------------------------- one version
def test_one_version_in_pyproject_library_cli_and_changelog():
    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.MULTILINE).group(1)
    assert squidflow.__version__ == version
    out = subprocess.run(
        [sys.executable, "-m", "squidflow.cli", "--version"], capture_output=True, text=True, env=ENV, cwd=ROOT
    )
    assert out.returncode == 0 and out.stdout.strip() == f"squidflow {version}", out.stdout + out.stderr
    assert re.search(rf"^## \[{re.escape(version)}\]", (ROOT / "CHANGELOG.md").read_text(), re.MULTILINE), (
        f"CHANGELOG.md has no section '## [{version}]': add one for the version in pyproject.toml"
    )


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t.invalid", *args],
        check=True,
        capture_output=True,
    )


def test_describe_names_the_release_tag_and_the_commits_after_it(tmp_path):
    repo = tmp_path / "squidflow"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "a.txt").write_text("a\n")
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-q", "-m", "a")
    _git(repo, "tag", "v0.3.0")
    assert git_describe(repo) == "v0.3.0"
    assert describe(repo) == f"squidflow {squidflow.__version__} (v0.3.0)"
    (repo / "a.txt").write_text("b\n")
    assert git_describe(repo) == "v0.3.0-dirty"
    _git(repo, "commit", "-q", "-am", "b")
    assert re.fullmatch(r"v0\.3\.0-1-g[0-9a-f]{7,}", git_describe(repo))
    assert git_describe(tmp_path / "not-a-checkout") == ""
    assert describe(tmp_path / "not-a-checkout") == f"squidflow {squidflow.__version__}"

    # the run summary names the version and commit of the workflow folder it is given
    out = tmp_path / "summary.html"
    write_run_summary(out, configfiles=[], stages=["videos"], repo=repo, metadata_dir=tmp_path / "none")
    assert re.search(
        rf"made by <code>squidflow {re.escape(squidflow.__version__)} \(v0\.3\.0-1-g[0-9a-f]+\)</code>", out.read_text()
    )


def test_workflow_catalog_file_has_the_catalogs_keys():
    """.snakemake-workflow-catalog.yml in the catalog's documented shape (usage: mandatory-flags, software-stack-
    deployment with conda, apptainer, apptainer+conda, report), each deployment mode a boolean."""
    usage = yaml.safe_load((ROOT / ".snakemake-workflow-catalog.yml").read_text())["usage"]
    assert set(usage) == {"mandatory-flags", "software-stack-deployment"}
    assert set(usage["mandatory-flags"]) == {"desc", "flags"}
    modes = usage["software-stack-deployment"]
    assert set(modes) == {"conda", "apptainer", "apptainer+conda", "report"}
    assert all(isinstance(v, bool) for v in modes.values())
    assert modes["report"] and modes["conda"]


# ---------------------------------------------------------------------------------------------- container recipe
def containerize(cwd: Path = ROOT) -> str:
    """`snakemake --containerize` as `make container` runs it (containers/no-conda stands in where conda is not
    installed: Snakemake asks conda only for the platform name)."""
    path = os.environ["PATH"]
    if shutil.which("conda") is None:
        path = f"{ROOT / 'containers' / 'no-conda'}{os.pathsep}{path}"
    res = subprocess.run(
        [str(BIN / "snakemake"), "--containerize"],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**ENV, "PATH": path},
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout


def test_container_recipe_is_snakemakes_containerize_output():
    recipe = (ROOT / "containers" / "Dockerfile").read_text()
    assert recipe == containerize(), "containers/Dockerfile is out of date: run `make container`"
    envs = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "envs").glob("*.yaml"))
    copied = sorted(re.findall(r"^COPY (\S+) ", recipe, re.MULTILINE))
    assert copied == envs, "every env file is built into the image"
