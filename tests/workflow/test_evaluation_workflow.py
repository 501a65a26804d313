"""The evaluation stage as users run it: Tables 2 and 8 from the release judgments alone (only what they need, and a
rerun does nothing), a broken predictions file stopping the job, and the demo's trained classifiers as models."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
import yaml
from helpers.runs import jobs_run, snakemake

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet

ROOT = Path(__file__).resolve().parents[2]
BASE = [str(ROOT / "config" / "config.yaml"), str(ROOT / "config" / "squid-e-release.yaml")]


def _models_config(tmp_path: Path, predictions: Path) -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "evaluation": {
                    "models": [{"name": "Known verbs", "predictions": str(predictions), "reference_accuracy": 0.4}]
                }
            }
        )
    )
    return path


def _known_predictions(shared_data: Path, path: Path) -> Path:
    """Rank 1 = the right verb for parade images, a wrong one for protest images."""
    release = pl.read_csv(shared_data / "squid-e" / "huj_annotations.csv", infer_schema=False)
    images = (
        release.filter(pl.col("task_var") == "a")
        .select(
            pl.col("vid_ID").str.strip_chars('"').alias("video_id"),
            pl.col("frame_num").cast(pl.Int64).alias("frame_index"),
            "event",
        )
        .unique()
    )
    rows = []
    for r in images.iter_rows(named=True):
        labels = ["parading", "marching"] if r["event"] in ("parade", "protest") else ["cooking", "eating"]
        rows += [
            {
                "video_id": r["video_id"],
                "frame_index": r["frame_index"],
                "rank": k + 1,
                "label": lab,
                "score": 0.9 - k / 2,
            }
            for k, lab in enumerate(labels)
        ]
    pl.DataFrame(rows).write_parquet(path)
    return path


@pytest.mark.slow
def test_table8_from_the_release_judgments_alone(tmp_path: Path, shared_data: Path) -> None:
    predictions = _known_predictions(shared_data, tmp_path / "known.parquet")
    args = [
        "results/tables/table8_alt_bins.md",
        "--configfile",
        *BASE,
        str(_models_config(tmp_path, predictions)),
        "--directory",
        str(tmp_path / "work"),
        "--cores",
        "1",
    ]
    res = snakemake(*args)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-4000:]
    assert jobs_run(res.stdout + res.stderr) == {
        "ingest_judgments",
        "annotator_quality",
        "aggregate_judgments",
        "model_accuracy",
        "evaluation_table",
    }
    results = tmp_path / "work" / "results"
    assert not (results / "dataset").exists() and not (results / "videos").exists()
    assert not (results / "tables" / "table2_verbs.md").exists()  # not asked for
    table = pl.read_csv(results / "tables" / "table8_alt_bins.csv")
    assert table.columns == ["model", "top", "binning", "bin", "accuracy", "n", "lo", "hi"]  # with its interval
    assert set(table["binning"]) == {"mean", "alt"} and set(table["top"]) == {1, 10}
    avg = table.filter((pl.col("bin") == "avg") & (pl.col("binning") == "mean"))
    # parade images right, protest images wrong: top-1 accuracy is exactly one half over the 600 images
    assert avg.filter(pl.col("top") == 1)["accuracy"][0] == pytest.approx(0.5) and avg["n"].to_list() == [600, 600]
    md = (results / "tables" / "table8_alt_bins.md").read_text()
    assert "Known verbs" in md and "504-label vocabulary" in md
    again = snakemake(*args, "-n")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr, again.stdout[-2000:]


@pytest.mark.slow
def test_a_broken_predictions_file_stops_the_job_naming_it(tmp_path: Path, shared_data: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("video_id,frame_index,rank,label,score\nnnqZqPuPQ7E,2755,1,parading,lots\n")
    res = snakemake(
        "results/tables/table2_verbs.csv",
        "--configfile",
        *BASE,
        str(_models_config(tmp_path, bad)),
        "--directory",
        str(tmp_path / "work"),
        "--cores",
        "1",
    )
    assert res.returncode != 0
    log = (tmp_path / "work" / "logs" / "model_accuracy" / "Known_verbs.log").read_text()
    assert f"{bad}: line 2: score 'lots' is not a number" in log


@pytest.mark.slow
def test_demo_classifiers_make_table8_offline(small_workflow) -> None:
    """The small demo's Table 8: two trained classifiers in the predictions format, scored on parade/protest."""
    tmp_path = small_workflow.directory
    for rule in ("run_predictions", "model_accuracy", "evaluation_table"):
        assert any((tmp_path / "logs" / rule).iterdir()), f"rule {rule} did not run"
    again = small_workflow.snakemake("-n", "results/tables/table8_alt_bins.md")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr, again.stdout[-2000:]
    preds = read_parquet(
        tmp_path / "results/evaluation/predictions/runs/classification/SD/SD/seed0.parquet", schemas.PREDICTIONS
    )
    assert set(preds["label"]) <= {"birthday_party", "wedding", "parade", "protest"} and preds["rank"].max() == 4
    table = pl.read_csv(tmp_path / "results/tables/table8_alt_bins.csv")
    assert {"SD classifier seed 0", "ES classifier seed 0"} <= set(table["model"])
    assert set(table["top"]) == {1, 2}
    md = (tmp_path / "results/tables/table8_alt_bins.md").read_text()
    assert "(demo)" in md and "SIMULATED" in md
