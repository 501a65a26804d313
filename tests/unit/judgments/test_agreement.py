"""Agreement metrics (Table 7): our α and κ against the reference packages, and the paper's Table 7 on the release."""

from __future__ import annotations

import krippendorff
import numpy as np
import polars as pl
import pytest
from helpers.ratings import rating_matrix
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from squidflow.judgments.agreement import (
    agreement_table,
    bin_ratings,
    binned_kappa,
    fleiss_kappa,
    intra_annotator_rhos,
    krippendorff_alpha_interval,
    spearman_pairs,
)
from squidflow.judgments.ingest import read_release
from squidflow.judgments.tables import PAPER_TABLE7


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

    expected = np.mean(
        [
            spearmanr(m[:, 0], m[:, 1]).statistic,
            spearmanr(m[:, 0], m[:, 2]).statistic,
            spearmanr(m[:, 1], m[:, 2]).statistic,
        ]
    )
    assert spearman_pairs(m) == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(6))
def test_spearman_pairs_grouped_by_rated_items_equals_the_loop_over_pairs(seed):
    """spearman_pairs sums correlations group by group (positions that rated the same items); on matrices with
    several missing-rating patterns, tied ratings, a constant position and pairs with fewer than three shared items
    it equals the plain loop over pairs of positions with scipy's spearmanr."""
    import itertools

    from scipy.stats import spearmanr

    rng = np.random.default_rng(seed)
    items, positions = 40, 9
    m = rng.integers(0, 6, size=(items, positions)).astype(float)  # few values: many ties
    pattern = rng.integers(0, 3, size=positions)  # three groups of positions with different rated items
    for p in range(positions):
        m[rng.random(items) < 0.3 * pattern[p], p] = np.nan
    m[:, 0] = np.where(np.isnan(m[:, 0]), np.nan, 3.0)  # a constant position: no correlation with anyone
    m[3:, 1] = np.nan  # three rated items only
    m[2:, 2] = np.nan  # two rated items: no pair with it counts
    rhos = []
    for i, j in itertools.combinations(range(positions), 2):
        both = ~np.isnan(m[:, i]) & ~np.isnan(m[:, j])
        if both.sum() >= 3:
            with np.errstate(invalid="ignore", divide="ignore"):
                rho = spearmanr(m[both, i], m[both, j]).statistic
            if np.isfinite(rho):
                rhos.append(rho)
    assert spearman_pairs(m) == pytest.approx(np.mean(rhos), abs=1e-12)


def test_intra_annotator_spearman_pairs_first_and_repeat_rounds():
    rows = []
    for k in range(10):
        for rnd, rating in ((1, 10 * k), (2, 10 * k + (3 if k % 2 else 0))):
            rows.append(
                {
                    "annotator": "w1",
                    "video_id": "v",
                    "frame_index": k,
                    "event_prompt": "parade",
                    "rating": rating,
                    "round": rnd,
                }
            )
    assert intra_annotator_rhos(pl.DataFrame(rows)).tolist() == pytest.approx([1.0])  # one annotator, ranks kept


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


# --- intervals and the ordinal/interval α (issue 24) --------------------------------------------------------------
from squidflow.judgments.agreement import (  # noqa: E402
    agreement_replicates,
    agreement_row,
    krippendorff_alpha,
    measures,
)
from squidflow.judgments.tables import table7_markdown  # noqa: E402
from squidflow.statistics.intervals import IntervalConfig  # noqa: E402


def _random_matrix(rng, n_items=80, n_coders=4, missing=0.2):
    truth = rng.uniform(0, 100, n_items)
    m = np.clip(truth[:, None] + rng.normal(0, 25, (n_items, n_coders)), 0, 100).round()
    m[rng.random(m.shape) < missing] = np.nan
    return m


def test_alpha_levels_on_krippendorffs_worked_example():
    """Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the 4 coders × 12 units example with missing
    values: ordinal α = .815, interval α = .849 (published), and the package gives the same to 1e-9."""
    data = np.array(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
            [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
        ]
    ).T  # items × coders
    assert krippendorff_alpha(data, "ordinal") == pytest.approx(0.815, abs=5e-4)
    assert krippendorff_alpha(data, "interval") == pytest.approx(0.849, abs=5e-4)
    assert krippendorff_alpha(data, "interval") == pytest.approx(krippendorff_alpha_interval(data), abs=1e-12)
    # the vectorised replicate with every item drawn once is the same number
    reps = agreement_replicates(data, np.ones((1, len(data))))
    assert reps["alpha_ordinal"][0] == pytest.approx(0.815, abs=5e-4)
    assert reps["alpha_ordinal"][0] == pytest.approx(
        krippendorff.alpha(data.T, level_of_measurement="ordinal"), abs=1e-9
    )


def test_alpha_levels_on_a_hand_made_case():
    # two units, two coders: (1, 2) and (3, 3); pairable values 1, 2, 3, 3
    m = np.array([[1.0, 2.0], [3.0, 3.0]])
    # interval: D_o = 2·1 / 4 = 0.5; D_e = Σ over ordered pairs (v-v')² / (n(n-1)) = 22/12 -> α = 1 - 0.5/(22/12)
    assert krippendorff_alpha(m, "interval") == pytest.approx(1 - 0.5 / (22 / 12))
    # ordinal: mid-cumulative counts P(1)=.5, P(2)=1.5, P(3)=3 -> interval α on those values
    assert krippendorff_alpha(m, "ordinal") == pytest.approx(
        krippendorff_alpha_interval(np.array([[0.5, 1.5], [3, 3]]))
    )
    assert krippendorff_alpha(np.array([[5.0, 5.0], [5.0, np.nan]]), "ordinal") != krippendorff_alpha(m, "ordinal")


@pytest.mark.parametrize("seed", range(3))
def test_alpha_levels_equal_the_krippendorff_packages_on_random_matrices_with_missing_ratings(seed):
    """Table 7's ordinal and interval α are computed from each item's sums (memory linear in the ratings: the package
    builds items × values × values, 2 GB at 24,000 items, issue 61) and equal the `krippendorff` package's, ratings
    0-100 or a few distinct values with ties, a third of them missing; NaN where the package has nothing to compare."""
    rng = np.random.default_rng(seed)
    for case in range(40):
        n, k = int(rng.integers(3, 60)), int(rng.integers(2, 7))
        values = np.arange(101) if case % 2 else np.array([0, 10, 37, 50, 100])
        m = rng.choice(values, size=(n, k)).astype(float)
        m[rng.random((n, k)) < 0.3] = np.nan
        pairable = m[(~np.isnan(m)).sum(axis=1) >= 2]
        for level in ("ordinal", "interval"):
            if pairable.size == 0 or len(np.unique(pairable[~np.isnan(pairable)])) < 2:
                assert np.isnan(krippendorff_alpha(m, level))
                continue
            expected = krippendorff.alpha(reliability_data=pairable.T, level_of_measurement=level)
            assert krippendorff_alpha(m, level) == pytest.approx(expected, abs=1e-12), (case, level)
    with pytest.raises(ValueError, match="nominal"):
        krippendorff_alpha(m, "nominal")  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(3))
def test_replicates_equal_the_point_functions_on_the_resample_written_out(seed):
    """Each measure's weighted replicate equals agreement_row (our α, κ, Spearman and ordinal/interval α) on
    the resampled matrix written out, with ties from repeated items and missing ratings."""
    rng = np.random.default_rng(seed)
    m = _random_matrix(rng)
    index = rng.integers(0, len(m), (4, len(m)))
    weights = np.stack([np.bincount(i, minlength=len(m)) for i in index])
    reps = agreement_replicates(m, weights)
    assert set(reps) == set(measures())
    for b in range(len(index)):
        expected = agreement_row(m[index[b]])
        for name in measures():
            assert reps[name][b] == pytest.approx(expected[name], abs=1e-9), (b, name)
    ones = agreement_replicates(m, np.ones((1, len(m))))
    for name, value in agreement_row(m).items():
        if name != "n_items":
            assert ones[name][0] == pytest.approx(value, abs=1e-12), name


def test_table7_intervals_keep_the_paper_values_and_bracket_them(release_judgments):
    cfg = IntervalConfig(resamples=200, seed=3)
    plain = agreement_table(release_judgments)
    table = agreement_table(release_judgments, intervals=cfg)
    for name in ("spearman", "alpha", "kappa_3", "kappa_4", "kappa_5"):
        assert table[name].to_list() == plain[name].to_list(), name  # point values exactly as without intervals
    for rec in table.iter_rows(named=True):
        for name in measures():
            assert rec[f"{name}_lo"] <= rec[name] <= rec[f"{name}_hi"], (rec["variant"], name)
            assert 0.005 < rec[f"{name}_hi"] - rec[f"{name}_lo"] < 0.15, (rec["variant"], name)
    a = table.row(0, named=True)
    assert a["alpha_interval"] == pytest.approx(a["alpha"], abs=1e-12)
    assert a["alpha_ordinal"] == pytest.approx(
        krippendorff.alpha(rating_matrix_of(release_judgments, "A").T, level_of_measurement="ordinal"), abs=1e-9
    )
    # same seed, same intervals
    again = agreement_table(release_judgments, intervals=cfg)
    assert again.equals(table)
    md = table7_markdown(table, source="squid-e-release", pooling="wide", note="Brackets: test.")
    row_a = next(line for line in md.splitlines() if line.startswith("| A |"))
    assert f"{a['alpha']:.3f} [{a['alpha_lo']:.3f}, {a['alpha_hi']:.3f}]" in row_a
    assert "Alpha (ordinal)" in md and "Brackets: test." in md
    # issue 32: the paper's numbers are numbers, in the same columns as ours, not one slash-joined string
    paper = next(line for line in md.splitlines() if line.startswith("| A (paper, SQUID-E supplement) |"))
    cells = [c.strip() for c in paper.strip("|").split("|")]
    assert len(cells) == len(row_a.strip("|").split("|")) and " / " not in paper
    assert all(c == "–" or float(c) == float(c) for c in cells[1:])


def rating_matrix_of(judgments, variant):
    return rating_matrix(judgments.filter(pl.col("variant") == variant))


def test_image_bootstrap_covers_the_population_agreement_at_the_nominal_rate():
    """Simulated panels with a known population value (each measure on 200,000 images): the 95% image-bootstrap
    interval of every Table 7 measure, on 150 images × 3 raters, covers it in 92-98% of 400 repetitions (fixed
    seeds; measured 94-96%)."""
    from squidflow.statistics.intervals import counts, image_resamples, interval_from

    def sample(rng, n):
        truth = rng.beta(0.7, 0.7, n) * 100
        m = np.clip(truth[:, None] + rng.normal(0, 18, (n, 3)), 0, 100).round()
        m[rng.random(m.shape) < 0.1] = np.nan
        return m

    rng = np.random.default_rng(0)
    big = sample(rng, 200_000)
    population = {k: v[0] for k, v in agreement_replicates(big, np.ones((1, len(big)))).items()}
    covered = dict.fromkeys(population, 0)
    for rep in range(400):
        m = sample(rng, 150)
        cfg = IntervalConfig(resamples=400, seed=rep)
        replicates = agreement_replicates(m, counts(image_resamples(len(m), cfg), len(m)))
        for name, value in agreement_replicates(m, np.ones((1, len(m)))).items():
            _, lo, hi = interval_from(value[0], replicates[name], cfg)
            covered[name] += lo <= population[name] <= hi
    for name, hits in covered.items():
        assert 0.92 <= hits / 400 <= 0.98, (name, hits / 400)
