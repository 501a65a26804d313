"""The text stage in the small demo: synthetic subtitles beside the videos, co-occurring text for every frame, the
keyword table against the simulated keyword panel, and the text baselines' rows in Tables 2 and 8."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet

SCORE_COLUMNS = [
    "best_normal_p",
    "best_normal_r",
    "best_mode_p",
    "best_mode_r",
    "oot_normal_p",
    "oot_normal_r",
    "oot_mode_p",
    "oot_mode_r",
]
INTERVAL_TABLE_COLUMNS = [
    "system",
    "setting",
    "n_items",
    *[x for c in SCORE_COLUMNS for x in (c, f"{c}_lo", f"{c}_hi")],
]
TEXT_MODELS = ["text-tfidf (co-occurring text)", "text-sbert (co-occurring text)"]


def check_text_outputs(results: Path, settings: list[str]) -> None:
    frames = read_parquet(results / "dataset" / "frames.parquet", schemas.FRAMES)
    vtts = sorted((results / "videos" / "demo").glob("*.en.vtt"))
    assert len(vtts) == frames["video_id"].n_unique()
    assert all("NOTE SYNTHETIC subtitles" in p.read_text(encoding="utf-8") for p in vtts)
    subs = read_parquet(results / "text" / "subtitles.parquet", schemas.SUBTITLES)
    assert (subs["status"] == "found").all() and (subs["n_cues"] > 0).all()
    cooc = read_parquet(results / "text" / "cooccurring.parquet", schemas.COOCCURRING)
    assert sorted(cooc["image_id"]) == sorted(frames["image_id"]) and (cooc["title"] != "").all()
    keywords = read_parquet(results / "text" / "keywords.parquet", schemas.TEXT_KEYWORDS)
    assert set(keywords["setting"]) == set(settings) and set(keywords["system"]) == {"tf", "tfidf", "random"}
    gold = read_parquet(results / "judgments" / "keywords.parquet", schemas.KEYWORD_JUDGMENTS)
    assert (gold["source"] == "simulated").all() and gold.select("video_id", "frame_index").n_unique() == frames.height
    table = pl.read_csv(results / "tables" / "text_keywords.csv")
    assert table.columns == INTERVAL_TABLE_COLUMNS  # every score with its bootstrap interval over images
    assert all(
        (table[f"{c}_lo"] <= table[c]).all() and (table[c] <= table[f"{c}_hi"]).all()
        for c in SCORE_COLUMNS
        if table[c].null_count() == 0
    )
    assert table.select("system", "setting").rows() == [
        (s, t) for t in settings for s in ("tf", "tfidf", "random", "human")
    ]
    tf = {r["setting"]: r for r in table.filter(pl.col("system") == "tf").iter_rows(named=True)}
    rnd = {r["setting"]: r for r in table.filter(pl.col("system") == "random").iter_rows(named=True)}
    # the text says what the frames show: tf beats random on the stemmed full text
    assert tf[settings[0]]["oot_normal_r"] > rnd[settings[0]]["oot_normal_r"]
    assert "SIMULATED" in (results / "tables" / "text_keywords.md").read_text(encoding="utf-8")
    for method in ("tfidf", "sbert"):
        preds = read_parquet(results / "text" / f"baseline_{method}.parquet", schemas.PREDICTIONS)
        assert preds.filter(pl.col("rank") == 1).height == frames.height


@pytest.mark.slow
def test_demo_text_stage_and_the_text_rows_of_table2(small_workflow) -> None:
    results = small_workflow.results
    check_text_outputs(results, ["all-stem", "all-raw", "subtitles-lemma"])
    table2 = pl.read_csv(results / "tables" / "table2_verbs.csv")
    for model in TEXT_MODELS:
        rows = table2.filter(pl.col("model").str.starts_with(model))
        assert rows.filter((pl.col("top") == 1) & (pl.col("bin") == "avg")).height == 1, table2["model"].unique()
