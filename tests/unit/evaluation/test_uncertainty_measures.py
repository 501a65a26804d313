"""The uncertainty core's measures, each against the independent library that already computes it (scipy,
torchmetrics, relplot), on random and hand-made cases; and every bootstrap-weighted form against the measure on the
explicitly resampled data."""

from __future__ import annotations

import numpy as np
import pytest
import relplot
import torch
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy, pearsonr, spearmanr, wasserstein_distance
from torchmetrics.functional.classification import binary_calibration_error, multiclass_calibration_error

from squidflow.evaluation import metrics
from squidflow.evaluation import uncertainty as u
from squidflow.training import calibration

EPS = u.EPS


def _ratings(rng, n, raters=3, missing=0.25):
    r = rng.integers(0, 101, size=(n, raters)).astype(float)
    r[rng.uniform(size=r.shape) < missing] = np.nan
    r[0] = np.nan
    r[0, :2] = [0.0, 100.0]  # a split image
    r[1] = 100.0  # unanimous
    return r


def _explicit(weights: np.ndarray) -> list[np.ndarray]:
    return [np.repeat(np.arange(weights.shape[1]), w) for w in weights.astype(int)]


def _binary_reference(p: float, r: np.ndarray) -> dict[str, float]:
    """One image's measures from scipy, with the module's clipping."""
    r = r[~np.isnan(r)]
    h = r.mean() / 100
    hd, pd = np.array([h, 1 - h]), np.array([p, 1 - p])
    hc = np.clip(h, EPS, 1 - EPS)
    pc = np.clip(p, EPS, 1 - EPS)
    hcd, pcd = np.array([hc, 1 - hc]), np.array([pc, 1 - pc])
    return {
        "cross_entropy": entropy(hd) + entropy(hd, pcd),
        "kl_human_model": entropy(hcd, pcd),
        "kl_model_human": entropy(pcd, hcd),
        "js_divergence": jensenshannon(hd, pd) ** 2,
        "total_variation": 0.5 * np.abs(hd - pd).sum(),
        "brier": (p - h) ** 2,
        "wasserstein": wasserstein_distance([100 * p], r),
    }


@pytest.mark.parametrize("seed", [0, 1])
def test_binary_soft_label_measures_equal_scipy(seed):
    rng = np.random.default_rng(seed)
    n = 60
    prob = rng.uniform(size=n)
    prob[:3] = [0.0, 1.0, 0.5]  # the clipping matters at 0 and 1
    ratings = _ratings(rng, n)
    ratings[2] = np.nan  # nobody rated: NaN everywhere
    ours = u.soft_label_measures(prob, ratings)
    assert set(ours) == set(u.SOFT_LABEL_MEASURES)
    for i in range(n):
        if np.isnan(ratings[i]).all():
            assert all(np.isnan(v[i]) for v in ours.values())
            continue
        ref = _binary_reference(prob[i], ratings[i])
        for name, value in ref.items():
            assert ours[name][i] == pytest.approx(value, rel=1e-9, abs=1e-12), (name, i)


def test_binary_measures_by_hand_and_the_existing_squid_e_measures():
    # model 0.5 on an image rated 0 and 100: the soft labels agree, the ratings sit 50 points from the model
    one = u.soft_label_measures(np.array([0.5]), np.array([[0.0, 100.0, np.nan]]))
    assert one["cross_entropy"][0] == pytest.approx(np.log(2))
    for name in ("kl_human_model", "kl_model_human", "js_divergence", "total_variation", "brier"):
        assert one[name][0] == pytest.approx(0.0, abs=1e-12)
    assert one["wasserstein"][0] == pytest.approx(50.0)
    # model 1.0 on an image rated 0: total variation 1, JSD log 2, Brier 1, Wasserstein 100
    far = u.soft_label_measures(np.array([1.0]), np.array([[0.0, np.nan, np.nan]]))
    assert far["total_variation"][0] == pytest.approx(1.0)
    assert far["js_divergence"][0] == pytest.approx(np.log(2))
    assert far["brier"][0] == pytest.approx(1.0)
    assert far["wasserstein"][0] == pytest.approx(100.0)
    assert far["kl_human_model"][0] == pytest.approx(np.log(1 / EPS) * (1 - EPS) + EPS * np.log(EPS / (1 - EPS)))
    # the mean Brier is SQUID-E's HUJ MSE and the mean KL(human ‖ model) its Bernoulli KL, unchanged in value
    rng = np.random.default_rng(3)
    prob, ratings = rng.uniform(size=40), _ratings(rng, 40, missing=0.0)
    ours = u.soft_label_measures(prob, ratings)
    human_mean = np.nanmean(ratings, axis=1)
    assert ours["brier"].mean() == pytest.approx(metrics.huj_mse(prob, human_mean), rel=1e-12)
    assert ours["kl_human_model"].mean() == pytest.approx(metrics.bernoulli_kl(prob, human_mean), rel=1e-12)


def test_class_distribution_measures_equal_scipy():
    rng = np.random.default_rng(4)
    n, k = 30, 4
    prob = rng.dirichlet(np.ones(k), size=n)
    soft = rng.dirichlet(np.ones(k) * 0.5, size=n)
    prob[0] = [1.0, 0.0, 0.0, 0.0]
    soft[1] = [0.0, 0.0, 0.5, 0.5]
    ours = u.soft_label_measures(prob, soft)
    for i in range(n):
        pc = np.clip(prob[i], EPS, 1) / np.clip(prob[i], EPS, 1).sum()
        hc = np.clip(soft[i], EPS, 1) / np.clip(soft[i], EPS, 1).sum()
        ref = {
            "cross_entropy": entropy(soft[i]) + entropy(soft[i], pc),
            "kl_human_model": entropy(hc, pc),
            "kl_model_human": entropy(pc, hc),
            "js_divergence": jensenshannon(soft[i], prob[i]) ** 2,
            "total_variation": 0.5 * np.abs(soft[i] - prob[i]).sum(),
            "brier": ((prob[i] - soft[i]) ** 2).sum(),
            "wasserstein": wasserstein_distance(np.arange(k), np.arange(k), prob[i], soft[i]),
        }
        for name, value in ref.items():
            assert ours[name][i] == pytest.approx(value, rel=1e-9, abs=1e-12), (name, i)


def test_people_ceiling_holds_each_rater_out_against_the_others():
    rng = np.random.default_rng(5)
    ratings = _ratings(rng, 25, raters=4)
    ratings[3] = [40.0, np.nan, np.nan, np.nan]  # one rating: no ceiling
    ours = u.people_ceiling(ratings)
    for i, row in enumerate(ratings):
        rated = np.flatnonzero(~np.isnan(row))
        if len(rated) < 2:
            assert all(np.isnan(v[i]) for v in ours.values())
            continue
        per_rater = [_binary_reference(row[j] / 100, np.delete(row, j)) for j in rated]
        for name in u.SOFT_LABEL_MEASURES:
            assert ours[name][i] == pytest.approx(np.mean([m[name] for m in per_rater]), rel=1e-9, abs=1e-12)
    # two raters who agree: a ceiling of zero divergence
    agree = u.people_ceiling(np.array([[30.0, 30.0, np.nan]]))
    assert agree["total_variation"][0] == pytest.approx(0.0) and agree["wasserstein"][0] == pytest.approx(0.0)


def test_entropy_correlation_equals_scipy_and_its_weighted_form_the_resampled_data():
    rng = np.random.default_rng(6)
    n = 80
    prob = np.round(rng.uniform(size=n), 1)  # ties in the entropies: mid-ranks matter
    ratings = _ratings(rng, n, missing=0.0)
    ratings[5] = np.nan  # dropped
    ours = u.entropy_correlation(prob, ratings)
    keep = np.arange(n) != 5
    model_h = entropy(np.stack([prob, 1 - prob]))[keep]
    human = np.nanmean(ratings[keep], axis=1) / 100
    human_h = entropy(np.stack([human, 1 - human]))
    assert ours["pearson"] == pytest.approx(pearsonr(model_h, human_h).statistic, rel=1e-9)
    assert ours["spearman"] == pytest.approx(spearmanr(model_h, human_h).statistic, rel=1e-9)
    w = rng.multinomial(n, np.ones(n) / n, size=4).astype(float)
    weighted = u.entropy_correlation(prob, ratings, weights=w)
    for b, idx in enumerate(_explicit(w)):
        ref = u.entropy_correlation(prob[idx], ratings[idx])
        assert weighted["pearson"][b] == pytest.approx(ref["pearson"], rel=1e-9)
        assert weighted["spearman"][b] == pytest.approx(ref["spearman"], rel=1e-9)


def _top_label(rng, n, k):
    probs = rng.dirichlet(np.ones(k) * 0.7, size=n)
    labels = np.where(rng.uniform(size=n) < probs.max(axis=1), probs.argmax(axis=1), rng.integers(0, k, size=n))
    return probs, labels


@pytest.mark.parametrize("n_bins", [5, 10, 15])
def test_equal_width_ece_equals_torchmetrics_and_the_project_s_ece(n_bins):
    rng = np.random.default_rng(n_bins)
    probs, labels = _top_label(rng, 500, 4)
    confidence, correct = probs.max(axis=1), (probs.argmax(axis=1) == labels).astype(float)
    ours = u.ece_equal_width(confidence, correct, n_bins)
    tm = multiclass_calibration_error(
        torch.tensor(probs), torch.tensor(labels), num_classes=4, n_bins=n_bins, norm="l1"
    )
    assert ours == pytest.approx(float(tm), abs=1e-6)  # torchmetrics computes in float32
    assert ours == pytest.approx(calibration.expected_calibration_error(probs, labels, n_bins), rel=1e-12)
    p1, target = rng.uniform(size=300), rng.integers(0, 2, size=300).astype(float)
    binary = u.ece_equal_width(p1, target, n_bins)
    tm_binary = binary_calibration_error(torch.tensor(p1), torch.tensor(target).long(), n_bins=n_bins, norm="l1")
    assert binary == pytest.approx(float(tm_binary), abs=1e-6)
    assert binary == pytest.approx(calibration.binary_calibration_error(p1, target, n_bins), rel=1e-12)


def test_equal_width_and_equal_mass_ece_by_hand():
    confidence = np.array([0.1, 0.2, 0.3, 0.9, 0.95, 1.0])
    correct = np.array([0.0, 0.0, 1.0, 1.0, 1.0, 0.0])
    # two equal-width bins: (0, .5] holds .1 .2 .3 (accuracy 1/3, confidence .2); (.5, 1] holds the rest (2/3, .95)
    assert u.ece_equal_width(confidence, correct, 2) == pytest.approx(0.5 * abs(1 / 3 - 0.2) + 0.5 * abs(2 / 3 - 0.95))
    # three equal-mass bins of two: gaps |0 - .15|, |1 - .6|, |.5 - .975|
    assert u.ece_equal_mass(confidence, correct, 3) == pytest.approx((0.15 + 0.4 + 0.475) / 3)
    # seven points in three bins of 3, 2, 2 (np.array_split): {.1 .2 .3} {.5 .9} {.95 1}
    c7, y7 = np.r_[confidence, 0.5], np.r_[correct, 1.0]
    expected = (abs(1 - 0.6) + abs(2 - 1.4) + abs(1 - 1.95)) / 7
    assert u.ece_equal_mass(c7, y7, 3) == pytest.approx(expected)


@pytest.mark.parametrize("n, n_bins", [(97, 10), (500, 15), (8, 10)])
def test_equal_mass_ece_equals_a_direct_split_and_its_weighted_form_the_resampled_data(n, n_bins):
    rng = np.random.default_rng(n)
    confidence = np.round(rng.uniform(size=n), 2)  # ties
    correct = (rng.uniform(size=n) < confidence).astype(float)

    def direct(c, y):
        order = np.argsort(c, kind="stable")
        return sum(abs((y[b] - c[b]).sum()) for b in np.array_split(order, n_bins)) / len(c)

    assert u.ece_equal_mass(confidence, correct, n_bins) == pytest.approx(direct(confidence, correct), rel=1e-12)
    w = rng.multinomial(n, np.ones(n) / n, size=5).astype(float)
    weighted = u.ece_equal_mass(confidence, correct, n_bins, weights=w)
    weighted_width = u.ece_equal_width(confidence, correct, n_bins, weights=w)
    for b, idx in enumerate(_explicit(w)):
        # the resample written out in the weighted form's order: the items sorted, each item's copies together
        assert weighted[b] == pytest.approx(direct(confidence[idx], correct[idx]), rel=1e-9, abs=1e-15)
        assert weighted_width[b] == pytest.approx(u.ece_equal_width(confidence[idx], correct[idx], n_bins), rel=1e-12)


@pytest.mark.parametrize("seed, n", [(0, 40), (1, 700), (2, 3000)])
def test_smooth_ece_equals_relplot(seed, n):
    rng = np.random.default_rng(seed)
    confidence = rng.beta(2, 2, size=n)
    correct = (rng.uniform(size=n) < confidence**1.3).astype(float)
    assert u.smooth_ece(confidence, correct) == pytest.approx(relplot.smECE(confidence, correct), rel=1e-9)
    sigma = u.smooth_ece_bandwidth(confidence, correct)
    assert relplot.smECE(confidence, correct, return_width=True)[1] == sigma
    w = rng.multinomial(n, np.ones(n) / n, size=3).astype(float)
    weighted = u.smooth_ece(confidence, correct, w)
    for b, idx in enumerate(_explicit(w)):  # many resamples: a single-precision product, ~1e-7 relative
        assert weighted[b] == pytest.approx(relplot.smECE_sigma(confidence[idx], correct[idx], sigma), rel=1e-6)


def test_smooth_ece_by_hand_cases_equal_relplot():
    # calibrated coin flips at 0.5; always wrong at full confidence; a tiny bandwidth's FFT path
    half = np.full(200, 0.5), np.tile([0.0, 1.0], 100)
    wrong = np.ones(50), np.zeros(50)
    for c, y in (half, wrong):
        assert u.smooth_ece(c, y) == pytest.approx(relplot.smECE(c, y), rel=1e-9, abs=1e-12)
    assert u.smooth_ece(*wrong) == pytest.approx(1.0, abs=0.01)
    rng = np.random.default_rng(9)
    c = rng.uniform(size=300)
    y = (rng.uniform(size=300) < c).astype(float)
    w = rng.multinomial(300, np.ones(300) / 300, size=3).astype(float)
    weighted = u.smooth_ece(c, y, w, sigma=0.002)  # (mesh × grid) too large for the matrix: the FFT path
    for b, idx in enumerate(_explicit(w)):
        assert weighted[b] == pytest.approx(relplot.smECE_sigma(c[idx], y[idx], 0.002), rel=1e-7)


def test_model_measures_are_the_single_measures_and_their_resampled_values():
    rng = np.random.default_rng(21)
    n = 150
    prob = rng.uniform(size=n)
    ratings = _ratings(rng, n)
    correct = (rng.uniform(size=n) < np.maximum(prob, 1 - prob)).astype(float)
    confidence = np.maximum(prob, 1 - prob)
    ours = u.model_measures(prob, ratings, correct, n_bins=10)
    assert tuple(ours) == u.MODEL_MEASURES
    soft = u.soft_label_measures(prob, ratings)
    for name in u.SOFT_LABEL_MEASURES:
        assert ours[name] == pytest.approx(np.nanmean(soft[name]), rel=1e-12)
    corr = u.entropy_correlation(prob, ratings)
    assert (ours["entropy_pearson"], ours["entropy_spearman"]) == pytest.approx((corr["pearson"], corr["spearman"]))
    assert ours["accuracy"] == pytest.approx(correct.mean())
    assert ours["ece_equal_width"] == pytest.approx(u.ece_equal_width(confidence, correct, 10))
    assert ours["ece_equal_mass"] == pytest.approx(u.ece_equal_mass(confidence, correct, 10))
    assert ours["smooth_ece"] == pytest.approx(relplot.smECE(confidence, correct), rel=1e-9)
    w = rng.multinomial(n, np.ones(n) / n, size=7).astype(float)
    sigma = u.smooth_ece_bandwidth(confidence, correct)
    weighted = u.model_measures(prob, ratings, correct, n_bins=10, weights=w, chunk=3)  # chunks of 3 resamples
    for b, idx in enumerate(_explicit(w)):
        ref = u.model_measures(prob[idx], ratings[idx], correct[idx], n_bins=10, sigma=sigma)
        for name in u.MODEL_MEASURES:
            # equal-mass bins cut the written-out resample in the weighted form's order (each item's copies
            # together), which a stable sort of the written-out resample also gives
            assert weighted[name][b] == pytest.approx(ref[name], rel=1e-6), name
