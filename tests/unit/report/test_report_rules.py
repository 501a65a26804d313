"""Every table and figure is in the report: the rules are walked as Snakemake loads them, and an output under
results/tables/ or results/figures/ without report(...) — or with one lacking a caption, category, subcategory or
labels — fails, naming the rule and the file."""

from __future__ import annotations

import subprocess
from pathlib import Path

import jinja2
import pytest
from helpers.report_walk import walk

ROOT = Path(__file__).resolve().parents[3]
REPORTED_FOLDERS = ("results/tables/", "results/figures/")


@pytest.fixture(scope="module")
def walked() -> dict:
    return walk()


def test_every_table_and_figure_output_is_in_the_report(walked):
    outputs = walked["outputs"]
    assert len({o["rule"] for o in outputs}) > 50, "the walk found too few rules to be the real workflow"
    reported_folders = [o for o in outputs if o["output"].startswith(REPORTED_FOLDERS)]
    assert len(reported_folders) >= 25
    missing = [f"rule {o['rule']}: {o['output']}" for o in reported_folders if o["report"] is None]
    assert not missing, (
        "outputs under results/tables/ or results/figures/ without report(...) — wrap each in "
        "report(path, caption=..., category=..., subcategory=..., labels=...):\n  " + "\n  ".join(missing)
    )


def test_every_report_entry_has_a_caption_category_subcategory_and_labels(walked):
    problems = []
    for o in walked["outputs"]:
        rep = o["report"]
        if rep is None:
            continue
        where = f"rule {o['rule']}: {o['output']}"
        caption = Path(rep["caption"]) if rep["caption"] else None
        if caption is None or not caption.is_file():
            problems.append(f"{where}: caption file {rep['caption']} does not exist")
        elif not caption.read_text(encoding="utf-8").strip():
            problems.append(f"{where}: caption {caption} is empty")
        if not rep["category"] or not rep["subcategory"]:
            problems.append(f"{where}: no category or subcategory (the report would file it under 'Other')")
        labels = rep["labels"]
        if not isinstance(labels, dict) or not labels:
            problems.append(f"{where}: labels must be a non-empty dict, not {labels!r}")
        elif not all(isinstance(v, str) for v in labels.values()):
            # the report's page sorts label values as text: a number there breaks the results table
            problems.append(f"{where}: label values must be strings: {labels!r}")
        if o["output"].startswith("results/figures/") and not o["output"].endswith(".png") and not rep["patterns"]:
            problems.append(f"{where}: a figure folder needs patterns=[...] so each file is in the report")
    assert not problems, "\n".join(problems)


def test_captions_are_valid_templates_that_cite_a_paper(walked):
    """Snakemake renders each caption with Jinja before reStructuredText: a syntax error would stop the report."""
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    captions = {o["report"]["caption"] for o in walked["outputs"] if o["report"] and o["report"]["caption"]}
    captions.add(walked["report_text"])
    papers = ("SQUID-E", "Sherlock", "GuessWhat", "Apples to Oranges", "Table", "Figure", "Run summary")
    for path in sorted(captions):
        text = Path(path).read_text(encoding="utf-8")
        env.parse(text)  # raises TemplateSyntaxError naming the line
        assert any(p in text for p in papers), f"{path}: a caption names the paper table or section it reproduces"


def test_the_report_has_a_global_description(walked):
    assert walked["report_text"] and Path(walked["report_text"]).name == "workflow.rst"
    text = Path(walked["report_text"]).read_text(encoding="utf-8")
    assert "SYNTHETIC" in text and "SIMULATED" in text  # what the demo's data are, said on the front page


def test_make_report_runs_the_demos_snakemake_command_with_report():
    """`make report` is `make demo`'s snakemake command plus `--report results/report.zip` (same profile and config)."""
    res = subprocess.run(["make", "-n", "report"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    demo = subprocess.run(["make", "-n", "demo"], cwd=ROOT, capture_output=True, text=True, timeout=60).stdout
    report_cmd = [line for line in res.stdout.splitlines() if "--report" in line]
    demo_cmd = [line for line in demo.splitlines() if "snakemake" in line and "--profile" in line]
    assert report_cmd and demo_cmd
    assert report_cmd[-1].endswith("--report results/report.zip")
    assert report_cmd[-1].removesuffix(" --report results/report.zip") == demo_cmd[-1]
