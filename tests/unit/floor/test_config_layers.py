"""One configuration, whatever the folder (issue 56): which files make it (squidflow.config.layers), the demo config
holding only what makes the demo the demo, and the `squidflow` commands reading the layers `snakemake` reads."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from squidflow.config import layers as config_layers
from squidflow.config.validation import ConfigError, load_yaml, validate_config

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "config" / "config.yaml"


def _cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "squidflow.cli", *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=300
    )


# --- the demo config states each default once ----------------------------------------------------------------------
def restated_defaults(written: Any, defaults: Any, path: str = "") -> list[str]:
    """The keys (dotted) a config file sets to the value the schema's defaults give them: every mapping walked into,
    anything else (a list, a number, a string) compared whole."""
    if isinstance(written, dict) and isinstance(defaults, dict):
        out = []
        for key, value in written.items():
            if key in defaults:
                out += restated_defaults(value, defaults[key], f"{path}.{key}" if path else str(key))
        return out
    return [path] if written == defaults else []


def test_the_demo_config_restates_no_schema_default():
    defaults = validate_config({})
    restated = restated_defaults(load_yaml(DEMO), defaults)
    assert not restated, (
        f"config/config.yaml sets {', '.join(restated)} to the schema's default: delete the line (the schema states "
        "each default once; config/README.md shows it)"
    )
    top = DEMO.read_text(encoding="utf-8").split("\n", 8)[:8]
    assert any("only what makes the demo the demo" in line for line in top), top


def test_the_check_finds_a_restated_default():
    defaults = validate_config({})
    written = {"frames": {"n": defaults["frames"]["n"], "shards": defaults["frames"]["shards"] + 1},
               "sources": [{"type": "demo"}], "splits": {"fractions": {"train": 0.7}}}  # fmt: skip
    assert restated_defaults(written, defaults) == ["frames.n", "sources", "splits.fractions.train"]


def test_the_demo_config_makes_the_same_configuration_on_the_defaults():
    """The demo is the demo config on the schema's defaults: what it leaves out is what the schema says."""
    demo = validate_config(load_yaml(DEMO))
    assert demo["sources"] == [{"type": "demo"}] and demo["judgments"]["source"] == "simulated"
    assert demo["demo"]["events"] == ["birthday_party", "wedding", "parade", "protest"]


# --- which files ---------------------------------------------------------------------------------------------------
def test_the_demo_config_is_read_only_when_no_config_file_is_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # whatever the folder: the demo config is named from the workflow's folder
    assert config_layers.config_files([], ROOT) == [DEMO]
    mine = tmp_path / "mine.yaml"
    mine.write_text("frames: {n: 12}\n")
    assert config_layers.config_files([mine], ROOT) == [mine]
    assert config_layers.config_files(["mine.yaml", DEMO], ROOT) == [Path("mine.yaml"), DEMO]  # named: read, in order
    with pytest.raises(ConfigError, match=r"nope.yaml: config file not found \(looked for .*/nope.yaml\)"):
        config_layers.config_files(["nope.yaml"], ROOT)
    with pytest.raises(ConfigError, match="give your config with --configfile"):
        config_layers.config_files([], None)  # installed without the workflow: no demo to read


def _args(*argv: str, positional: bool = False) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    config_layers.add_arguments(parser, files_positional=positional)
    return parser.parse_args(argv)


def test_the_layers_of_a_command_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.yaml").write_text("frames: {n: 12}\njudgments: {panel: {seed: 3}}\n")
    chosen = config_layers.from_arguments(
        _args("--configfile", "mine.yaml", "--config", "frames={n: 14, shards: 1}", "retry_failed=True"), root=ROOT
    )
    assert chosen.demo == () and chosen.configfiles == (Path("mine.yaml"),)
    config = config_layers.resolve(chosen, directory=tmp_path, root=ROOT)
    assert config["frames"]["n"] == 14 and config["frames"]["shards"] == 1 and config["retry_failed"] is True
    assert config["judgments"]["panel"]["seed"] == 3
    assert config["stages"] == validate_config({})["stages"]  # the schema's, not the demo's
    demo = config_layers.resolve(config_layers.from_arguments(_args(), root=ROOT), root=ROOT)
    assert demo == validate_config(load_yaml(DEMO))
    assert config_layers.from_arguments(_args("mine.yaml", positional=True), root=ROOT).configfiles == (
        Path("mine.yaml"),
    )
    with pytest.raises(ConfigError, match="config files given twice"):
        config_layers.from_arguments(_args("mine.yaml", "--configfile", "mine.yaml", positional=True), root=ROOT)


def test_config_values_are_read_as_snakemake_reads_them():
    from snakemake.cli import parse_config

    entries = ["k1=1", "k2=2.5", "k3=True", "k4={x: 1, y: [p, q]}", "k5=text", "k6="]
    assert config_layers.parse_overrides(entries) == parse_config(entries)
    assert config_layers._parse_config(entries) == parse_config(entries)  # without Snakemake installed
    with pytest.raises(ConfigError, match="Write KEY=VALUE"):
        config_layers.parse_overrides(["mine.yaml"])
    with pytest.raises(ValueError):
        config_layers._parse_config(["1x=2"])


# --- the commands --------------------------------------------------------------------------------------------------
def test_check_config_says_which_keys_the_demo_no_longer_gives(tmp_path):
    (tmp_path / "old.yaml").write_text("demo: {videos_per_event: 4}\n")
    res = _cli("check-config", "--configfile", "old.yaml", cwd=tmp_path)
    assert res.returncode == 0 and "old.yaml: valid" in res.stdout, res.stderr
    assert "note: the demo's config/config.yaml is no longer read under a config file you give" in res.stderr
    assert "stages" in res.stderr and "--configfile config/config.yaml old.yaml" in res.stderr
    both = _cli("check-config", "--configfile", DEMO, "old.yaml", cwd=tmp_path)
    assert both.returncode == 0 and "note:" not in both.stderr, both.stderr


def test_squidflow_config_prints_each_layer_and_the_configuration(tmp_path):
    (tmp_path / "mine.yaml").write_text("frames: {n: 12}\n")
    res = _cli(
        "config", "--configfile", "mine.yaml", "--config", "retry_failed=true", "--directory", "run", cwd=tmp_path
    )
    assert res.returncode == 0, res.stderr
    head = [line for line in res.stdout.splitlines() if line.startswith("#")]
    assert head[1:] == [
        "# 1. the schema's defaults: workflow/schemas/config.schema.yaml",
        "# 2. the demo config: not read (a config file is given: the demo config is read only without one)",
        "# 3. --configfile: mine.yaml",
        "# 4. --config: retry_failed=true",
    ]
    config = yaml.safe_load(res.stdout)
    assert config["frames"]["n"] == 12 and config["retry_failed"] is True
    assert config == config_layers.record_config(validate_config({"frames": {"n": 12}, "retry_failed": True}))
    demo = _cli("config", cwd=tmp_path)
    assert f"# 2. the demo config: {DEMO}" in demo.stdout
    assert yaml.safe_load(demo.stdout) == validate_config(load_yaml(DEMO))
    missing = _cli("config", "--configfile", "nope.yaml", cwd=tmp_path)
    assert missing.returncode == 2 and f"looked for {tmp_path / 'nope.yaml'}" in missing.stderr


def test_the_commands_take_the_arguments_snakemake_takes(tmp_path):
    """label-studio push reads the configuration the run reads: here the schema's `images: url`, not the demo's
    `local_files` (the 404s of issue 56), and the task folder of --directory."""
    (tmp_path / "mine.yaml").write_text("annotation: {platform: label_studio}\n")
    res = _cli("label-studio", "push", "--configfile", "mine.yaml", "--directory", "runs/mine", cwd=tmp_path)
    assert res.returncode == 2 and "runs/mine/results/annotation/label_studio" in res.stderr, res.stderr
    evaluate = _cli("evaluate", "p.csv", "--judgments", "j.csv", "--config", "mine.yaml", cwd=tmp_path)
    assert evaluate.returncode == 2 and "config files go after --configfile" in evaluate.stderr, evaluate.stderr
