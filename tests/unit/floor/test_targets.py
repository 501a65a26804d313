"""An unknown target lists the tables and figures that exist (issue 32: it was Snakemake's MissingRuleException)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from squidflow.runtime.targets import expand, unknown_targets_message

ROOT = Path(__file__).resolve().parents[3]


def test_expand_lists_constrained_wildcards_and_keeps_the_others():
    assert expand("results/tables/{table}.md", {"table": "table2_verbs|table8_alt_bins"}) == [
        "results/tables/table2_verbs.md",
        "results/tables/table8_alt_bins.md",
    ]
    assert expand("results/figures/table3_reliability_{method,[A-Z]{2}}.png", {}) == [
        "results/figures/table3_reliability_{method}.png"
    ]
    outputs = ["results/tables/table7_agreement.csv", "results/figures/fig3_judgments.png"]
    message = unknown_targets_message(
        ["results/tables/table7_agrement.csv", "all", "logs/x.log"], lambda p: p in outputs, outputs, ["all"]
    )
    assert message.startswith(
        "no rule makes results/tables/table7_agrement.csv (did you mean results/tables/table7_agreement.csv?)"
    )
    assert "results/figures/fig3_judgments.png" in message and "logs/x.log" not in message
    assert unknown_targets_message(["results/tables/table7_agreement.csv"], lambda p: p in outputs, outputs, []) is None


def test_an_unknown_table_target_names_the_tables_that_exist(tmp_path):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "--snakefile",
            str(ROOT / "Snakefile"),
            "-n",
            "results/tables/table3_calibraton.md",
            "--directory",
            str(tmp_path),
            "--configfile",
            str(ROOT / "config" / "config.yaml"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
    )
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert (
        "no rule makes results/tables/table3_calibraton.md (did you mean results/tables/table3_calibration.md?)" in out
    )
    assert "results/tables/table9_kl.md" in out and "results/figures/frames_spread.png" in out
    assert "MissingRuleException" not in out and "`squidflow targets` lists them" in out


def test_simulated_is_said_only_where_simulated_judgments_are_shown():
    """Issue 32: a frames-only run's contact sheets and run summary said "SIMULATED annotator panel" with 0
    judgments."""
    from squidflow.presentation.style import report_note

    demo = {"source_types": ["demo"], "judgment_source": "simulated"}
    frames_only = report_note(("videos", "run_judgments"), stages=["videos", "frames"], **demo)
    assert "SYNTHETIC" in frames_only and "SIMULATED" not in frames_only
    assert "SIMULATED" in report_note(("videos", "run_judgments"), stages=["frames", "judgments"], **demo)
    assert "SIMULATED" in report_note(("judgments",), stages=["frames"], **demo)  # a figure of judgments
    assert (
        report_note(("videos", "judgments"), stages=["judgments"], source_types=["youtube"], judgment_source="release")
        == ""
    )
    frames_rules = (ROOT / "workflow" / "rules" / "frames.smk").read_text()
    assert 'get_report_note("videos", "judgments")' not in frames_rules  # contact sheets show no judgments


def test_squidflow_targets_lists_each_table_and_figure_with_its_rule(tmp_path):
    """Issue 32: the tables and figures a user may ask for, and what makes each, without a failed run first."""
    res = subprocess.run([str(Path(sys.executable).with_name("squidflow")), "targets"], capture_output=True,
                         text=True, cwd=tmp_path, timeout=600)  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    lines = dict(line.split(maxsplit=1) for line in res.stdout.splitlines())
    assert lines["results/tables/table3_calibration.md"].startswith("rule ")
    assert lines["results/figures/frames_spread.png"] == "rule frame_spread_figure"
    assert lines["results/publish/squidflow-demo"] == "rule publish_dataset"  # the published dataset (issue 47)
    assert all(p.startswith(("results/tables/", "results/figures/", "results/publish/")) for p in lines), res.stdout
    assert "Traceback" not in res.stdout + res.stderr
    res = subprocess.run([str(Path(sys.executable).with_name("squidflow")), "targets", "--configfile",
                          str(tmp_path / "nope.yaml")], capture_output=True, text=True, cwd=tmp_path, timeout=600)  # fmt: skip
    assert res.returncode == 2 and "nope.yaml: config file not found" in res.stderr, res.stderr


# --- what the Snakefile reads from Snakemake beyond `workflow` (docs/upstream.md, sections 5-9)
def test_a_report_is_read_from_snakemakes_command_line_and_profiles(tmp_path, monkeypatch):
    """The report's script data is made inert only when a report is being made: `--report`/`--reporter` on the
    command line or in a profile; a run or a job (`python -m snakemake ...`) leaves Snakemake's renderers alone, and
    where the command line is not Snakemake's (its API) the wrap is applied whatever is made."""
    from squidflow.runtime.command_line import arguments, is_snakemake_command, report_requested

    profile = tmp_path / "reporting"
    profile.mkdir()
    (profile / "config.yaml").write_text("report: report.zip\ncores: 1\n")
    monkeypatch.chdir(tmp_path)  # no profiles/default here for Snakemake to find
    assert report_requested(["--report", "r.zip", "-n"]) and report_requested(["--reporter", "html"])
    assert report_requested(["--profile", str(profile)])
    assert not report_requested(["-n", "--cores", "1"]) and not report_requested(
        ["--snakefile", "x", "--mode", "subprocess"]
    )
    for program, snakemakes in [
        ("/venv/bin/snakemake", True),
        ("/venv/lib/python3.12/site-packages/snakemake/__main__.py", True),  # how Snakemake starts a job
        ("/venv/bin/squidflow", False),
        ("/venv/bin/pytest", False),
    ]:
        monkeypatch.setattr(sys, "argv", [program, "-n", "results/tables/table9_kl.md"])
        assert is_snakemake_command() is snakemakes
        assert report_requested() is not snakemakes  # no --report: only another program's process wraps
    assert arguments(["-n", "results/tables/table9_kl.md"]).targets == ["results/tables/table9_kl.md"]
    assert arguments(["--cores", "many"]) is None  # not a command line Snakemake reads: no targets


def test_a_target_is_matched_by_snakemakes_own_matcher_else_left_to_snakemake():
    from squidflow.runtime.targets import makes

    class Rule:  # Snakemake's Rule as far as `makes` reads it
        def __init__(self, pattern):
            self.pattern = pattern

        def is_producer(self, path):
            return path.startswith(self.pattern)

    assert makes([Rule("results/tables/"), Rule("results/figures/")])("results/figures/x.png")
    assert not makes([Rule("results/tables/")])("results/figures/x.png")
    assert makes([Rule("results/tables/"), object()])("results/figures/x.png")  # no is_producer: Snakemake says


def test_squidflows_version_is_in_the_config_after_its_validation(tmp_path):
    """`config["_squidflow"]` (the report's front page reads the version from the config) is set after the config is
    validated: the schema refuses the key, so set before, it would stop every run."""
    from squidflow.config.validation import ConfigError, validate_config
    from squidflow.runtime.targets import workflow_rules

    rules = workflow_rules(ROOT / "Snakefile", [ROOT / "config" / "config.yaml"], tmp_path)
    config = dict(rules[0].workflow.config)  # the workflow's own config, as its rules and the report see it
    assert config["_squidflow"]["made_by"].startswith("squidflow "), config["_squidflow"]
    validate_config({k: v for k, v in config.items() if k != "_squidflow"})
    with pytest.raises(ConfigError, match="_squidflow"):
        validate_config(config)
