"""The litmus stage as users run it: the paper-scale config plans offline, a bad games file stops the job naming the
file, line and field, the demo's tables show MTL-KL closer to the soft labels than STL-CE, and a guesser's
probability file joins the tables without retraining anything."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import polars as pl
import pytest
import yaml
from helpers.runs import jobs_run, snakemake

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet

ROOT = Path(__file__).resolve().parents[2]
DEMO = str(ROOT / "config" / "config.yaml")


def write_config(path: Path, litmus: dict, stages=("litmus",)) -> Path:
    path.write_text(yaml.safe_dump({"stages": list(stages), "litmus": litmus}))
    return path


def test_guesswhat_config_plans_offline_without_downloading(tmp_path: Path) -> None:
    res = snakemake("-n", "--configfile", str(ROOT / "config" / "guesswhat.yaml"), "--directory", str(tmp_path))
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert jobs_run(res.stdout) >= {"litmus_games", "litmus_soft_labels", "litmus_train_guesser", "litmus_tables"}
    assert "litmus_demo_games" not in jobs_run(res.stdout)
    assert res.stdout.count("rule litmus_train_guesser:") == 1  # one job trains the 6 runs (2 methods x 3 seeds)
    assert res.stdout.count("results/litmus/runs/") >= 6
    assert not (tmp_path / "results").exists()  # nothing downloaded while planning


def test_a_bad_games_file_stops_naming_the_file_line_and_field(tmp_path: Path) -> None:
    good = {
        "id": 1,
        "image": {"width": 100, "height": 100},
        "object_id": 1,
        "status": "success",
        "objects": [{"id": 1, "category": "person", "bbox": [1, 2, 3, 4]}],
        "qas": [{"question": "is it a person?", "answer": "Yes", "id": 10}],
    }
    bad = {**good, "id": 2, "objects": [{"id": 1, "category": "person", "bbox": [1, 2, "wide", 4]}]}
    games = tmp_path / "my_games.jsonl.gz"
    with gzip.open(games, "wt") as fh:
        fh.write(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    config = write_config(tmp_path / "bad.yaml", {"games": [{"path": str(games), "split": "test"}]})
    work = tmp_path / "work"
    res = snakemake(
        "results/litmus/games.parquet", "--configfile", DEMO, str(config), "--directory", str(work), "--cores", "1"
    )
    assert res.returncode != 0
    log = (work / "logs" / "litmus_games" / "litmus_games.log").read_text()
    assert f"{games}, line 2: field 'objects[0].bbox' must be 4 numbers" in log, log[-2000:]
    assert not (work / "results" / "litmus" / "games.parquet").exists()


@pytest.mark.slow
def test_the_demo_tables_show_kl_closer_to_the_soft_labels_than_ce(small_workflow) -> None:
    """The paper's qualitative result (litmus test §5.2) on the demo's synthetic games, read from its tables."""
    tables = small_workflow.results / "tables"
    corr = pl.read_csv(tables / "litmus_correlation.csv")
    for qtype in ("category", "spatial"):
        r = {
            row["model"]: row["pearson_r"]
            for row in corr.filter((pl.col("question_type") == qtype) & (pl.col("answer") == "all")).iter_rows(
                named=True
            )
        }
        assert r["MTL-KL"] > r["STL-CE"] + 0.1, (qtype, r)
    assert "SYNTHETIC" in (tables / "litmus_correlation.md").read_text()
    human = pl.read_csv(tables / "litmus_human.csv")
    assert set(human["question_type"]) >= {"category", "spatial"}
    assert human.filter(pl.col("question_type") == "category")["pearson_r"][0] > 0.9
    grounding = pl.read_csv(tables / "litmus_grounding.csv")
    assert set(grounding["tau"]) == {0.001, 0.01, 0.1}
    labels = read_parquet(small_workflow.results / "litmus" / "soft_labels.parquet", schemas.LITMUS_SOFT_LABELS)
    sums = labels.drop_nulls("soft_label").group_by("game_id").agg(pl.col("soft_label").sum())["soft_label"]
    assert ((sums - 1).abs() < 1e-9).all()


@pytest.mark.slow
def test_a_probability_file_joins_the_tables_without_retraining(tmp_path: Path) -> None:
    """A uniform guesser from a CSV: its accuracy is the mean of 1/k over the labelled test QA pairs."""
    small = {
        "demo": {"train_games": 120, "test_games": 60},
        "guesser": {"seeds": 1, "epochs": 2, "word_dim": 8, "hidden_dim": 16, "category_dim": 4},
    }
    work = tmp_path / "work"
    base = [
        "--configfile",
        DEMO,
        str(write_config(tmp_path / "small.yaml", small)),
        "--directory",
        str(work),
        "--cores",
        "1",
    ]
    res = snakemake(*base)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-4000:]
    games = read_parquet(work / "results" / "litmus" / "games.parquet", schemas.LITMUS_GAMES)
    rows = [
        {"game_id": gid, "object_id": o["object_id"], "probability": 1 / len(objs)}
        for gid, objs in games.filter(pl.col("split") == "test").select("game_id", "objects").iter_rows()
        for o in objs
    ]
    pl.DataFrame(rows).write_csv(tmp_path / "uniform.csv")
    with_model = {**small, "models": [{"name": "uniform", "probabilities": str(tmp_path / "uniform.csv")}]}
    args = [
        "--configfile",
        DEMO,
        str(write_config(tmp_path / "model.yaml", with_model)),
        "--directory",
        str(work),
        "--cores",
        "1",
    ]
    res = snakemake(*args)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-4000:]
    # run_summary (the report's page of every step's jobs) follows every final output
    assert jobs_run(res.stdout + res.stderr) - {"run_summary"} == {
        "litmus_model_probabilities",
        "litmus_metrics",
        "litmus_tables",
        "all",
    }
    labels = read_parquet(work / "results" / "litmus" / "soft_labels.parquet", schemas.LITMUS_SOFT_LABELS)
    category = labels.filter(
        (pl.col("split") == "test") & (pl.col("question_type") == "category") & pl.col("soft_label").is_not_null()
    )
    expected = category.group_by("game_id").len().select((1 / pl.col("len")).mean()).item()
    corr = pl.read_csv(work / "results" / "tables" / "litmus_correlation.csv")
    row = corr.filter(
        (pl.col("model") == "uniform") & (pl.col("question_type") == "category") & (pl.col("answer") == "all")
    ).row(0, named=True)
    assert row["accuracy"] == pytest.approx(expected) and row["n_seeds"] == 1
    # every number with its bootstrap interval over QA pairs, the uniform guesser's accuracy inside it
    assert row["accuracy_lo"] <= row["accuracy"] <= row["accuracy_hi"] and row["accuracy_hi"] > row["accuracy_lo"]
    intervals = read_parquet(work / "results" / "litmus" / "metric_intervals.parquet", schemas.LITMUS_METRIC_INTERVALS)
    assert set(intervals["model"]) == set(corr["model"])
    grounding = pl.read_csv(work / "results" / "tables" / "litmus_grounding.csv")
    assert {"wg_rs_lo", "wg_rs_hi", "wg_cs_lo", "wg_cs_hi"} <= set(grounding.columns)
    rules = pl.read_csv(work / "results" / "tables" / "litmus_rules.csv")
    assert {"R1_lo", "R1_hi"} <= set(rules.columns)
    assert " [" in (work / "results" / "tables" / "litmus_correlation.md").read_text()
    again = snakemake("-n", *args)
    assert "Nothing to be done" in again.stdout + again.stderr
