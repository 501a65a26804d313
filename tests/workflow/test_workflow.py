"""The workflow as users run it: lint, dry runs of every config, bad configs, and the small demo end to end."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import polars as pl
import pytest
import yaml
from helpers.runs import planned_jobs, planned_outputs, snakemake

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted((ROOT / "config").glob("*.yaml"))


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.name)
def test_dry_run_of_every_config(config: Path, tmp_path: Path) -> None:
    # the local data a paper config names (data/standard, ...) is the user's to supply: stand-ins in the work dir
    from squidflow.config.validation import named_inputs

    for _, value, spec in named_inputs(yaml.safe_load(config.read_text())):
        local = tmp_path / value
        if not local.exists() and not (ROOT / value).exists():
            local.parent.mkdir(parents=True, exist_ok=True)
            local.mkdir() if spec["x-input"] != "file" else local.touch()
    res = snakemake("-n", "--configfile", str(config), "--directory", str(tmp_path), "--cores", "2")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]


def test_invalid_value_fails_naming_the_key(tmp_path: Path) -> None:
    res = snakemake(
        "-n",
        "--directory",
        str(tmp_path),
        "--configfile",
        str(ROOT / "config" / "config.yaml"),
        "--config",
        'demo={"videos_per_event": -1}',
    )
    assert res.returncode != 0
    assert "demo.videos_per_event" in res.stdout + res.stderr


@pytest.mark.slow
def test_small_demo_end_to_end(small_workflow) -> None:
    """Every stage of the demo on a small corpus, into a temporary directory; a second run has nothing to do."""
    results = small_workflow.results
    videos = read_parquet(results / "videos" / "videos.parquet", schemas.VIDEOS)
    assert videos.height == 24 and (videos["status"] == "ok").all()
    for f in [
        "dataset/frames.parquet",
        "judgments/judgments.parquet",
        "judgments/image_scores.parquet",
        "tables/table7_agreement.csv",
        "figures/fig3_judgments.png",
        "comparison/sets.parquet",
        "tables/table1_training.md",
        "tables/table3_calibration.md",
        "tables/table9_kl.md",
    ]:
        assert (results / f).exists(), f"missing {f}"
    frames = read_parquet(results / "dataset" / "frames.parquet", schemas.FRAMES)
    assert frames.group_by("video_id").len()["len"].max() <= 6
    assert all((small_workflow.directory / p).exists() for p in frames["image_path"])
    table3 = pl.read_csv(results / "tables" / "table3_calibration.csv")
    assert set(table3["method"]) == {"BL", "MC", "LS", "BM", "FL", "RS"}
    again = small_workflow.snakemake("-n")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr, again.stdout[-2000:]


@pytest.mark.slow
def test_outputs_readable_by_group_and_others_under_umask_022(small_workflow) -> None:
    """A lab group on a shared cluster (or the web server showing task images) must read what the workflow wrote."""
    unreadable = [
        str(p.relative_to(small_workflow.directory))
        for top in ("results", "logs")
        for p in (small_workflow.directory / top).rglob("*")
        if (p.stat().st_mode & 0o044) != 0o044 or (p.is_dir() and (p.stat().st_mode & 0o011) != 0o011)
    ]
    assert not unreadable, f"{len(unreadable)} outputs not readable by group/others, e.g. {unreadable[:10]}"


def _planned_jobs(res: subprocess.CompletedProcess) -> dict[str, int]:
    """The job counts of a `snakemake -n` run that must have succeeded."""
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return dict(planned_jobs(res.stdout + res.stderr))


@pytest.mark.slow
def test_changing_a_judgment_key_reruns_exactly_what_depends_on_it(small_workflow) -> None:
    jobs = _planned_jobs(small_workflow.snakemake("-n", "--config", 'judgments={"quality": {"max_violations": 3}}'))
    assert "annotator_quality" in jobs and "aggregate_judgments" in jobs and "agreement_table" in jobs, jobs
    for upstream in (
        "make_demo_videos",
        "extract_frames",
        "featurize",
        "select_frames",
        "ingest_judgments",
        "comparison_sbert",
        "make_training_cache",
    ):
        assert upstream not in jobs, f"{upstream} does not read judgments.quality but would rerun: {jobs}"


@pytest.mark.slow
def test_scheduling_keys_and_more_seeds_rerun_no_existing_run(small_workflow) -> None:
    """training.threads and mem_mb say how a run is scheduled, the number of seeds which runs exist: changing them
    must not retrain a run that exists (one more seed retrains only the jobs that make the new seed's runs)."""
    res = small_workflow.snakemake("-n", "--config", 'training={"threads": 1, "mem_mb": 999}')
    assert _planned_jobs(res) == {}, res.stdout[-3000:]
    classification = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["training"]["classification"]
    seeds = classification["seeds"]
    # one job per method, on runs the default's experiment jobs made: a job's params and inputs are its own method's,
    # not the experiment's (config.schema.yaml, training.runs_per_job), so the runs retrain (the same bytes), the new
    # seed among them; nothing upstream
    res = small_workflow.snakemake(
        "-n", "--config", f'training={{"classification": {{"seeds": {seeds + 1}}}, "runs_per_job": "seeds"}}'
    )
    jobs = _planned_jobs(res)
    trained = [
        m.group(1)
        for out in planned_outputs(res.stdout + res.stderr, "train_classification")
        if (m := re.fullmatch(r"results/runs/classification/\w+/\w+/seed(\d+)/metrics.json", out))
    ]
    assert set(trained) == {str(s) for s in range(seeds + 1)}, f"classification seeds planned: {sorted(set(trained))}"
    assert "make_training_cache" not in jobs and "training_sets" not in jobs, jobs
    # every run of an experiment per job (the default): the job is the experiment's runs, so the new seed retrains
    # the classification runs before it (the same bytes); still nothing upstream and no calibration run
    res = small_workflow.snakemake("-n", "--config", f'training={{"classification": {{"seeds": {seeds + 1}}}}}')
    jobs = _planned_jobs(res)
    assert jobs.get("train_experiment_classification") == 1 and "train_experiment_calibration" not in jobs, jobs
    assert "make_training_cache" not in jobs and "training_sets" not in jobs, jobs


def test_every_table_of_the_demo_has_intervals_and_says_what_they_cover(small_workflow) -> None:
    """Issue 24: each table file of the demo carries its numbers' intervals (`<measure>_lo`/`_hi`, or `lo`/`hi` in a
    long table), and each table's caption names what its intervals cover."""
    tables = sorted((small_workflow.results / "tables").glob("*.csv"))
    assert len(tables) >= 10, tables
    missing = []
    for csv in tables:
        header = csv.read_text().splitlines()[0].split(",")
        if not any(c.endswith("_lo") or c == "lo" for c in header):
            missing.append(csv.name)
        elif not any(c.endswith("_hi") or c == "hi" for c in header):
            missing.append(csv.name)
    assert not missing, f"tables without interval columns: {missing}"
    captions = set()
    for smk in (ROOT / "workflow" / "rules").glob("*.smk"):
        for path, caption in re.findall(r'report\(\s*"(results/tables/[^"]+)",\s*caption="([^"]+)"', smk.read_text()):
            captions.add((path, (ROOT / "workflow" / "rules" / caption).resolve()))
    assert captions
    made = {f"results/tables/{t.name}" for t in (small_workflow.results / "tables").iterdir()}
    silent = sorted(p for p, rst in captions if p in made and "interval" not in rst.read_text().lower())
    assert not silent, f"table captions that do not say what their intervals cover: {silent}"
