"""Agreement metrics (Table 7): our α and κ against the reference packages, and the paper's Table 7 on the release."""

from __future__ import annotations

import krippendorff
import numpy as np
import polars as pl
import pytest
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from squidflow.judgments.agreement import (
    PAPER_TABLE7,
    agreement_table,
    bin_ratings,
    binned_kappa,
    fleiss_kappa,
    intra_annotator,
    krippendorff_alpha_interval,
    spearman_pairs,
)
from squidflow.judgments.ingest import read_release


@pytest.mark.parametrize("seed", range(6))
def test_alpha_matches_krippendorff_package_with_missing_ratings(seed):
    rng = np.random.default_rng(seed)
    n_items, n_coders = rng.integers(20, 200), rng.integers(2, 7)
    truth = rng.uniform(0, 100, n_items)
    m = np.clip(truth[:, None] + rng.normal(0, rng.uniform(5, 60), (n_items, n_coders)), 0, 100).round()
    m[rng.random(m.shape) < 0.25] = np.nan  # missing ratings, some items left with fewer than two
    ours = krippendorff_alpha_interval(m)
    ref = krippendorff.alpha(reliability_data=m.T, level_of_measurement="interval")
    assert ours == pytest.approx(ref, abs=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_fleiss_kappa_matches_statsmodels(seed):
    rng = np.random.default_rng(100 + seed)
    n_items, n_raters, k = rng.integers(10, 300), rng.integers(2, 7), rng.integers(2, 6)
    base = rng.integers(0, k, n_items)
    cats = np.where(rng.random((n_items, n_raters)) < 0.6, base[:, None], rng.integers(0, k, (n_items, n_raters)))
    table, _ = aggregate_raters(cats, n_cat=k)
    assert fleiss_kappa(cats, k) == pytest.approx(sm_fleiss_kappa(table), abs=1e-9)


def test_binning_edges_put_100_in_the_last_bin():
    r = np.array([0, 19, 20, 39, 40, 79, 80, 99, 100])
    assert bin_ratings(r, 5).tolist() == [0, 0, 1, 1, 2, 3, 4, 4, 4]
    assert bin_ratings(np.array([0, 33, 34, 66, 67, 100]), 3).tolist() == [0, 0, 1, 1, 2, 2]


def test_binned_kappa_with_missing_ratings_generalises_fleiss():
    m = np.array([[10, 12, np.nan], [90, 95, 99], [50, 55, 58], [5, 90, 50], [3, np.nan, np.nan]], dtype=float)
    # complete items only: exactly Fleiss' kappa
    full = m[1:4]
    table, _ = aggregate_raters(bin_ratings(full, 5), n_cat=5)
    assert binned_kappa(full, 5) == pytest.approx(sm_fleiss_kappa(table))
    # an item with two ratings counts with n_i = 2, one with a single rating drops out
    p_i = np.array([1.0, 1.0, 1.0, 0.0])  # [10, 12] agree; [90, 95, 99] agree; [50, 55, 58] agree; [5, 90, 50] not
    p_j = np.array([3, 0, 4, 0, 4]) / 11  # shares over the 11 ratings of those items
    expected = (p_i.mean() - (p_j**2).sum()) / (1 - (p_j**2).sum())
    assert binned_kappa(m, 5) == pytest.approx(expected)


def test_spearman_pairs_is_the_mean_over_position_pairs():
    rng = np.random.default_rng(0)
    x = rng.normal(size=50)
    m = np.stack([x, x + rng.normal(0, 0.1, 50), -x], axis=1)
    from scipy.stats import spearmanr

    expected = np.mean([spearmanr(m[:, 0], m[:, 1]).statistic, spearmanr(m[:, 0], m[:, 2]).statistic, spearmanr(m[:, 1], m[:, 2]).statistic])
    assert spearman_pairs(m) == pytest.approx(expected)


def test_intra_annotator_spearman_pairs_first_and_repeat_rounds():
    rows = []
    for k in range(10):
        for rnd, rating in ((1, 10 * k), (2, 10 * k + (3 if k % 2 else 0))):
            rows.append({"annotator": "w1", "video_id": "v", "frame_index": k, "event_prompt": "parade", "rating": rating, "round": rnd})
    rho, n = intra_annotator(pl.DataFrame(rows))
    assert n == 1 and rho == pytest.approx(1.0)


@pytest.fixture(scope="module")
def release_judgments(shared_data):
    judgments, problems = read_release(shared_data / "squid-e" / "huj_annotations.csv")
    assert not problems and len(judgments) == 10_800
    return judgments


def test_table7_reproduces_the_paper_on_the_release(release_judgments):
    table = {r["variant"]: r for r in agreement_table(release_judgments).iter_rows(named=True)}
    for variant in ("A", "B"):
        for metric in ("alpha", "kappa_4", "kappa_5"):
            assert table[variant][metric] == pytest.approx(PAPER_TABLE7[variant][metric], abs=0.005), (variant, metric)
        assert table[variant]["kappa_3"] == pytest.approx(PAPER_TABLE7[variant]["kappa_3"], abs=0.02)
    # A+B with the wide pooling: every value within 0.005
    for metric in ("spearman", "alpha", "kappa_3", "kappa_4", "kappa_5"):
        assert table["A+B"][metric] == pytest.approx(PAPER_TABLE7["A+B"][metric], abs=0.005), metric
    assert table["A"]["spearman"] == pytest.approx(PAPER_TABLE7["A"]["spearman"], abs=0.02)


@pytest.mark.xfail(
    strict=True,
    reason="known gap: the release keeps rating positions (huj_0..2), not annotator ids, so pairwise Spearman "
    "mixes workers; B gives .609 against the paper's .631 (0.022 off, the issue allows 0.02)",
)
def test_table7_variant_b_spearman_within_the_issue_tolerance(release_judgments):
    table = {r["variant"]: r for r in agreement_table(release_judgments).iter_rows(named=True)}
    assert table["B"]["spearman"] == pytest.approx(PAPER_TABLE7["B"]["spearman"], abs=0.02)


def test_concatenated_pooling_does_not_reproduce_the_paper(release_judgments):
    table = {r["variant"]: r for r in agreement_table(release_judgments, pooling="concat").iter_rows(named=True)}
    assert abs(table["A+B"]["alpha"] - PAPER_TABLE7["A+B"]["alpha"]) > 0.02
    assert table["A+B"]["n_items"] == 3600
