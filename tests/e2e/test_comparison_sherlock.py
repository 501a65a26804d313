"""Comparison sets on Sherlock's real validation file (Sherlock §4.3, Appendix E), end to end: the whole construction
on its 22,737 instances, and the rules on a subset. A journey on real data (minutes on 2 cores), so it is in the e2e
tier; the steps on hand-made inputs are tests/unit/comparison/test_comparison.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from helpers import runs
from helpers.test_cache import cached_run

from squidflow.comparison import corpus as sherlock
from squidflow.comparison import plausibility
from squidflow.comparison import sets as comparison
from squidflow.contracts import io, schemas

ROOT = Path(__file__).resolve().parents[2]
SHERLOCK_ZIP = "sherlock/sherlock_val_with_split_idxs_v1_1.json.zip"


@pytest.fixture(scope="module")
def sherlock_instances(shared_data: Path) -> list[dict]:
    return sherlock.read_sherlock_json(shared_data / SHERLOCK_ZIP)


# --- Sherlock acceptance on the real validation file -------------------------------------------------------------
@pytest.fixture(scope="module")
def sherlock_built(shared_data: Path, tmp_path_factory):
    """The whole construction on the 22,737 validation instances, once per session. SBERT-encoding its ~40K distinct
    clues and inferences takes ~75 s on 2 idle cores, so the embeddings are kept between sessions in .test-cache/sbert/
    under a key of what makes them (the encoder's code, the lock files with the packaged model's version, the data's
    file list: tests/helpers/test_cache.py); SQUIDFLOW_TEST_SBERT_CACHE=<file.parquet> names another file. The
    construction itself then takes ~45 s."""
    corpus = sherlock.load_sherlock(shared_data / SHERLOCK_ZIP)
    cache = os.environ.get("SQUIDFLOW_TEST_SBERT_CACHE") or cached_run(
        "sbert",
        lambda folder: folder / "sbert.parquet",
        lambda folder: folder / "sbert.parquet",
        inputs=("src/squidflow/encoders", "src/squidflow/comparison/plausibility.py", "requirements.lock"),
    )
    emb = plausibility.text_scorer(corpus, encode=plausibility.sbert_encoder(cache))
    cfg = comparison.ComparisonConfig()
    pool = comparison.build_pool(corpus, emb.inference, cfg, progress=False)
    sets = comparison.build_sets(corpus, pool, emb, emb.inference, cfg, progress=False)
    return corpus, pool, sets, emb


@pytest.mark.slow
def test_sherlock_pool_soft_and_hard_dedup(sherlock_built) -> None:
    corpus, pool, _, _ = sherlock_built
    io.conform(pool, schemas.COMPARISON_POOL)
    n = corpus["inference"].n_unique()
    assert pool["n_clusters"][0] == round(0.8 * n) == 15367
    assert pool["cluster"].n_unique() == round(0.8 * n)  # one string per cluster survives
    assert pool.group_by("inference").len()["len"].max() <= 3
    assert pool.group_by("cluster").agg(pl.col("inference").n_unique())["inference"].max() == 1


@pytest.mark.slow
def test_sherlock_sets_are_plausible_distinct_hard_negatives(sherlock_built) -> None:
    corpus, pool, sets, emb = sherlock_built
    io.conform(sets, schemas.COMPARISON_SETS)
    per = sets.group_by("query_id").agg(
        pl.len(), pl.col("inference").n_unique().alias("distinct"), pl.col("rank").sort().alias("ranks")
    )
    assert len(per) == 500  # top 500 of the single (val) split
    assert (per["len"] == 10).all() and (per["distinct"] == 10).all()
    assert all(r == list(range(1, 11)) for r in per["ranks"].to_list())
    own = corpus.select(pl.col("instance_id").alias("query_id"), pl.col("inference").alias("own"))
    assert sets.join(own, on="query_id").filter(pl.col("inference") == pl.col("own")).is_empty()
    # every candidate comes from the pool, scores above the query's gold, and is used at most once
    assert sets["candidate_id"].is_in(pool["instance_id"].implode()).all()
    assert sets["candidate_id"].n_unique() == len(sets)
    pos = {iid: i for i, iid in enumerate(emb.instance_id)}
    gold = emb.gold()
    q = np.array([pos[i] for i in sets["query_id"].to_list()])
    assert (sets["plausibility"].to_numpy() > gold[q]).all()
    assert sets.group_by("inference").len()["len"].max() <= 3
    assert sorted(sets["set_rank"].unique().to_list()) == list(range(1, 501))


@pytest.mark.slow
def test_sherlock_hits_and_html(sherlock_built, tmp_path: Path) -> None:
    corpus, _, sets, _ = sherlock_built
    hits = comparison.hits_table(sets, corpus)
    assert len(hits) == 500 and hits["inference_10"].null_count() == 0
    assert json.loads(hits["bboxes"][0])[0].keys() == {"left", "top", "width", "height"}
    page = comparison.hits_html(hits, max_hits=3)
    assert page.count('class="hit"') == 3 and page.count('type="radio"') == 3 * 10 * 3
    assert "the highlighted region supports it" in page and "verifiably incorrect" in page
    assert "rgba(255, 5, 205" in page


# --- the rules, end to end on a Sherlock subset ------------------------------------------------------------------
@pytest.mark.slow
def test_rules_build_the_stage_on_a_sherlock_subset(tmp_path: Path, sherlock_instances: list[dict]) -> None:
    chunk = [i for i in sherlock_instances if i["split_idx"] == 0][:300]
    chunk += [i for i in sherlock_instances if i["split_idx"] == 1][:300]
    (tmp_path / "sub.json").write_text(json.dumps(chunk))
    res = runs.snakemake(
        *runs.in_folder(tmp_path, ROOT / "config" / "sherlock.yaml"),
        "--config",
        f"sherlock={{annotations: {tmp_path / 'sub.json'}, split: val}}",
        "--quiet",
        timeout=900,
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    r = tmp_path / "results"
    corpus = io.read_parquet(r / "comparison" / "corpus.parquet", schemas.COMPARISON_CORPUS)
    pool = io.read_parquet(r / "comparison" / "pool.parquet", schemas.COMPARISON_POOL)
    sets = io.read_parquet(r / "comparison" / "sets.parquet", schemas.COMPARISON_SETS)
    assert len(corpus) == 600
    assert pool["cluster"].n_unique() == round(0.8 * corpus["inference"].n_unique())
    assert len(sets) and (sets.group_by("query_id").len()["len"] == 10).all()
    hits = pl.read_csv(r / "annotation" / "comparison_hits.csv")
    assert len(hits) == sets["query_id"].n_unique()
    metrics = json.loads((r / "comparison" / "metrics.json").read_text())
    assert metrics["retrieval"]["n_chunks"] == 2 and 1 <= metrics["retrieval"]["im2txt"] <= 300
    assert 0 <= metrics["localization"]["gt_boxes"] <= 100
    assert (tmp_path / "results" / "comparison" / "cache" / "sbert.parquet").exists()
