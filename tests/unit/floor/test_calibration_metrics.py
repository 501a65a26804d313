"""ECE, HUJ MSE, KL and binned accuracy against values worked out by hand (SQUID-E §5.1, §5.3; SQUID-E supplement D.4)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from squidflow.statistics.certainty import bernoulli_kl, huj_mse
from squidflow.statistics.certainty import certainty_bin_of as certainty_bin
from squidflow.training.calibration import binned_accuracy, expected_calibration_error, run_metrics

# confidence .91 right, .79 wrong, .71 right, .55 wrong
PROBS = np.array([[0.91, 0.09], [0.79, 0.21], [0.29, 0.71], [0.45, 0.55]])
LABELS = np.array([0, 1, 1, 0])


def test_ece_by_hand_ten_bins():
    # bins (0.9,1]: {.91 right} -> |1 - .91| = .09, weight 1/4
    #      (0.7,0.8]: {.79 wrong, .71 right} -> |.5 - .75| = .25, weight 2/4
    #      (0.5,0.6]: {.55 wrong} -> .55, weight 1/4
    assert expected_calibration_error(PROBS, LABELS, n_bins=10) == pytest.approx(0.25 * 0.09 + 0.5 * 0.25 + 0.25 * 0.55)


def test_ece_by_hand_two_bins_and_perfect_calibration():
    # every confidence is in (0.5, 1]: accuracy 2/4, mean confidence (.91 + .79 + .71 + .55) / 4 = .74
    assert expected_calibration_error(PROBS, LABELS, n_bins=2) == pytest.approx(abs(0.5 - 0.74))
    # confidence 1 and always right: no calibration error; confidence exactly 1 lands in the last bin
    assert expected_calibration_error(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([0, 1])) == 0.0


def test_huj_mse_by_hand():
    # target probabilities .9 .2 .5 against human means 80 20 100: (.1² + 0 + .5²) / 3
    assert huj_mse(np.array([0.9, 0.2, 0.5]), np.array([80.0, 20.0, 100.0])) == pytest.approx((0.01 + 0.25) / 3)


def test_bernoulli_kl_by_hand_and_clipping():
    # KL(Bern(.8) ‖ Bern(.9)) = .8 ln(.8/.9) + .2 ln(.2/.1)
    assert bernoulli_kl(np.array([0.9]), np.array([80.0])) == pytest.approx(
        0.8 * math.log(0.8 / 0.9) + 0.2 * math.log(2)
    )
    # a unanimous 100 against .5: ln 2 (up to the clipping)
    assert bernoulli_kl(np.array([0.5]), np.array([100.0])) == pytest.approx(math.log(2), abs=1e-4)
    # a model probability of exactly 0 stays finite: clipped to 1e-6
    value = bernoulli_kl(np.array([0.0]), np.array([50.0]), eps=1e-6)
    assert value == pytest.approx(0.5 * math.log(0.5 / 1e-6) + 0.5 * math.log(0.5 / (1 - 1e-6)))
    # identical distributions: zero
    assert bernoulli_kl(np.array([0.3, 0.7]), np.array([30.0, 70.0])) == pytest.approx(0.0, abs=1e-12)


def test_certainty_bins_edges():
    assert [certainty_bin(x) for x in (0, 19.99, 20, 40, 59.9, 60, 80, 100)] == [
        "0-20",
        "0-20",
        "20-40",
        "40-60",
        "40-60",
        "60-80",
        "80-100",
        "80-100",
    ]
    with pytest.raises(ValueError, match="outside 0..100"):
        certainty_bin(101)


def test_binned_accuracy_by_hand():
    probs = np.array([[0.8, 0.2], [0.8, 0.2], [0.3, 0.7], [0.4, 0.6], [0.9, 0.1]])
    labels = np.array([0, 1, 1, 1, 1])  # right, wrong, right, right, wrong
    human = np.array([10.0, 30.0, 35.0, 90.0, 100.0])
    acc = binned_accuracy(probs, labels, human)
    assert acc["0-20"] == 1.0 and acc["20-40"] == 0.5 and acc["80-100"] == 0.5
    assert math.isnan(acc["40-60"]) and math.isnan(acc["60-80"])


def test_run_metrics_calibration_uses_se_images_for_human_metrics():
    eval_set = np.array(["SD", "SD", "SE", "SE"])
    labels = np.array([1, 0, 1, 0])
    probs = np.array([[0.2, 0.8], [0.4, 0.6], [0.1, 0.9], [0.7, 0.3]])
    human = np.array([np.nan, np.nan, 80.0, 20.0])
    m = run_metrics("calibration", eval_set, labels, probs, human, ece_bins=10)
    assert m["sd_acc"] == 0.5 and m["se_acc"] == 1.0
    assert m["huj_mse"] == pytest.approx(((0.9 - 0.8) ** 2 + (0.3 - 0.2) ** 2) / 2)
    assert m["ece"] == pytest.approx(0.5 * 0.1 + 0.5 * 0.3)  # confidences .9 and .7, both right
    # the authors' quantity: P(class 0) = .1 (label 1) and .7 (label 0), each alone in its fifth: (.9 + .7) / 2
    assert m["ece_authors"] == pytest.approx(0.5 * 0.9 + 0.5 * 0.7)
    assert set(m) == {"sd_acc", "se_acc", "huj_mse", "ece", "ece_authors", "kl"}


def test_run_metrics_classification_bins_and_average():
    eval_set = np.array(["SE", "SE", "SE", "SD"])
    labels = np.array([0, 1, 2, 3])
    probs = np.eye(4)[[0, 0, 2, 3]]
    human = np.array([90.0, 10.0, 50.0, np.nan])
    m = run_metrics("classification", eval_set, labels, probs, human)
    assert m["acc_80-100"] == 1.0 and m["acc_0-20"] == 0.0 and m["acc_40-60"] == 1.0
    assert m["avg_acc"] == pytest.approx(2 / 3) and m["sd_acc"] == 1.0
