"""How squidflow is shipped: one version everywhere, snakefmt-clean rules, the container recipe kept equal to the
env files, and the library installable on its own (a wheel in an empty virtualenv)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.checkout import copy_checkout

import squidflow
from squidflow.report.summary import write_run_summary
from squidflow.version import describe, git_describe

ROOT = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


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


# ---------------------------------------------------------------------------------------------- snakefmt
def _lint_snakefmt_command() -> list[str]:
    """The snakefmt line of the Makefile's lint target, as `make lint` runs it."""
    recipe = re.search(r"^lint:.*\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert recipe, "the Makefile has no lint target"
    line = next((ln.strip() for ln in recipe.group(1).splitlines() if "snakefmt" in ln), None)
    assert line and "--check" in line, "make lint does not run snakefmt --check"
    return line.replace("$(BIN)/", f"{BIN}/").split()


def test_rules_are_snakefmt_clean():
    """`make fmt` formats Snakefile and workflow/; this fails, naming the files, until it has been run."""
    res = subprocess.run(_lint_snakefmt_command(), cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, "run `make fmt`:\n" + res.stdout + res.stderr


def test_make_lint_fails_on_a_misformatted_rule(tmp_path):
    copy = tmp_path / "squidflow"  # what snakefmt reads: the rules and its settings in pyproject.toml
    shutil.copytree(ROOT / "workflow", copy / "workflow", symlinks=True)
    for name in ("Snakefile", "pyproject.toml"):
        shutil.copy2(ROOT / name, copy / name)
    formatted = subprocess.run(
        [str(BIN / "snakefmt"), "Snakefile", "workflow/"], cwd=copy, capture_output=True, text=True
    )
    assert formatted.returncode == 0, formatted.stderr
    check = _lint_snakefmt_command()
    assert subprocess.run(check, cwd=copy, capture_output=True, text=True).returncode == 0
    rules = copy / "workflow" / "rules" / "judgments.smk"
    rules.write_text(
        rules.read_text() + '\n\nrule badly_formatted:\n    output: "results/x.txt"\n    shell:   "touch {output}"\n'
    )
    res = subprocess.run(check, cwd=copy, capture_output=True, text=True)
    assert res.returncode == 1 and "1 file(s) would be changed" in res.stderr, res.stdout + res.stderr


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


# ---------------------------------------------------------------------------------------------- the library alone
def _lock_pins(*names: str) -> list[str]:
    wanted = {n.lower().replace("_", "-") for n in names}
    return [
        line
        for line in (ROOT / "requirements.lock").read_text().splitlines()
        if line.split("==")[0].lower().replace("_", "-") in wanted
    ]


@pytest.mark.slow
def test_wheel_installs_into_an_empty_virtualenv_and_checks_a_config(tmp_path):
    """`python -m build` (an sdist, then the wheel from it), installed with --no-deps into a virtualenv without
    squidflow's other dependencies: `squidflow check-config` needs PyYAML and jsonschema only."""
    source = copy_checkout(tmp_path / "source")
    dist = tmp_path / "dist"
    res = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(source)], capture_output=True, text=True, timeout=600
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    wheel = next(dist.glob("squidflow-*.whl"))
    assert wheel.name.startswith(f"squidflow-{squidflow.__version__}-")

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # nothing of the checkout on the path
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    res = subprocess.run([*pip, "--no-deps", str(wheel)], capture_output=True, text=True, env=env)
    assert res.returncode == 0 and (venv / "bin" / "squidflow").exists(), res.stdout + res.stderr
    deps = _lock_pins(
        "PyYAML", "jsonschema", "jsonschema-specifications", "referencing", "rpds-py", "attrs", "typing-extensions"
    )
    res = subprocess.run([*pip, *deps], capture_output=True, text=True, timeout=600, env=env)
    assert res.returncode == 0, res.stdout + res.stderr

    # a user's folder outside the checkout, with a copy of its config/ (as snakedeploy makes)
    user = tmp_path / "user"
    shutil.copytree(ROOT / "config", user / "config")
    squidflow_cmd = str(venv / "bin" / "squidflow")
    res = subprocess.run([squidflow_cmd, "--version"], cwd=user, capture_output=True, text=True, env=env)
    assert res.stdout.strip() == f"squidflow {squidflow.__version__}", res.stdout + res.stderr
    # every subcommand is there and answers --help (each imports its heavy libraries only when it runs)
    commands = (
        re.search(
            r"\{([a-z,-]+)\}",
            subprocess.run([squidflow_cmd, "--help"], cwd=user, capture_output=True, text=True, env=env).stdout,
        )
        .group(1)
        .split(",")
    )
    assert {"check-config", "evaluate", "label-studio"} <= set(commands), commands
    for command in commands:
        res = subprocess.run([squidflow_cmd, command, "--help"], cwd=user, capture_output=True, text=True, env=env)
        assert res.returncode == 0 and "usage: squidflow" in res.stdout, (command, res.stdout + res.stderr)
    res = subprocess.run(
        [squidflow_cmd, "check-config", "config/config.yaml"], cwd=user, capture_output=True, text=True, env=env
    )
    assert res.returncode == 0 and "config/config.yaml: valid" in res.stdout, res.stdout + res.stderr
    # the schema the installed command reads is the package's own copy, and it rejects what the workflow rejects
    (user / "config" / "typo.yaml").write_text("stagez: [videos]\n")
    res = subprocess.run(
        [squidflow_cmd, "check-config", "config/config.yaml", "config/typo.yaml"],
        cwd=user,
        capture_output=True,
        text=True,
        env=env,
    )
    assert res.returncode == 2 and "stagez" in res.stderr and "stages" in res.stderr, res.stdout + res.stderr
    located = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import squidflow.config as c; print(c.SCHEMA_PATH)"],
        cwd=user,
        capture_output=True,
        text=True,
        env=env,
    ).stdout.strip()
    assert located.startswith(str(venv)) and Path(located).is_file() and not Path(located).is_symlink()
