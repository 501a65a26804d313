"""The library installable on its own: a wheel built from a copy of the checkout, installed into an empty virtualenv
without squidflow's other dependencies, checks a config (e2e tier: it builds and installs)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.checkout import copy_checkout

import squidflow

ROOT = Path(__file__).resolve().parents[2]


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
        [str(venv / "bin" / "python"), "-c", "import squidflow.config.validation as c; print(c.SCHEMA_PATH)"],
        cwd=user,
        capture_output=True,
        text=True,
        env=env,
    ).stdout.strip()
    assert located.startswith(str(venv)) and Path(located).is_file() and not Path(located).is_symlink()
