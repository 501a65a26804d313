"""Sherlock's task metrics (Sherlock §4.1–4.3) on hand-computed cases and their defining properties."""

from __future__ import annotations

import numpy as np
import pytest

from squidflow.comparison.metrics_sherlock import (
    assignment_accuracy,
    comparison_accuracy,
    localization_gt,
    localization_proposals,
    pairwise_accuracy,
    retrieval_chunk,
    retrieval_metrics,
)
from squidflow.comparison.metrics_sherlock.localization import iou


# --- retrieval ---------------------------------------------------------------------------------------------------
def test_retrieval_hand_computed_with_ties() -> None:
    s = np.array([
        [0.9, 0.1, 0.2],  # true item best: rank 1
        [0.5, 0.3, 0.5],  # true 0.3 below two 0.5s: rank 3
        [0.4, 0.4, 0.4],  # three-way tie: average rank 2
    ])
    m = retrieval_chunk(s)
    assert m["im2txt"] == pytest.approx((1 + 3 + 2) / 3)
    # columns: col0 true 0.9 rank 1; col1 true 0.3 vs 0.1, 0.4 -> rank 2; col2 true 0.4 vs 0.2, 0.5 -> rank 2
    assert m["txt2im"] == pytest.approx((1 + 2 + 2) / 3)
    assert m["p_at_1"] == pytest.approx(100 / 3)


def test_retrieval_constant_scores_get_the_middle_rank_not_rank_one() -> None:
    m = retrieval_chunk(np.zeros((5, 5)))
    assert m["im2txt"] == 3.0 and m["txt2im"] == 3.0 and m["p_at_1"] == 0.0


def test_retrieval_averages_over_chunks() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 8))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    chunks = np.repeat([0, 1], 20)
    perfect = retrieval_metrics(x, x, chunks)  # each region's own inference is its exact match
    assert perfect == {"im2txt": 1.0, "txt2im": 1.0, "p_at_1": 100.0, "n_chunks": 2}
    shuffled = retrieval_metrics(x, x[rng.permutation(40)], chunks)
    assert shuffled["im2txt"] > 3


# --- localization ------------------------------------------------------------------------------------------------
def test_assignment_prefers_total_score_over_greedy() -> None:
    # greedy row-wise argmax would give region 0 -> inference 0 (0.9) and force region 1 -> inference 1 (0.1);
    # the linear assignment maximises the total: 0 -> 1 (0.8) + 1 -> 0 (0.85) = 1.65 > 1.0
    s = np.array([[0.9, 0.8], [0.85, 0.1]])
    assert assignment_accuracy(s) == 0.0
    assert assignment_accuracy(np.array([[0.9, 0.1], [0.2, 0.8]])) == 1.0


def test_localization_perfect_scores_give_100_and_macro_average() -> None:
    rng = np.random.default_rng(1)
    images = [np.eye(n) + rng.random((n, n)) * 0.5 for n in (2, 3, 5, 7)]
    assert localization_gt(images) == 100.0
    # one image fully right, one (3 regions) with two swapped: (1 + 1/3) / 2
    swapped = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1.0]])
    assert localization_gt([np.eye(2), swapped]) == pytest.approx(100 * (1 + 1 / 3) / 2)


def test_localization_with_proposals_uses_iou_above_half() -> None:
    assert iou((0, 0, 10, 10), (5, 0, 10, 10)) == pytest.approx(50 / 150)
    img1 = [(np.array([0.2, 0.9]), np.array([0.1, 0.7])), (np.array([0.9, 0.2]), np.array([0.5, 0.9]))]
    img2 = [(np.array([0.3, 0.1]), np.array([0.51, 0.0]))]
    # image 1: first right (IoU .7), second wrong (IoU exactly .5 is not > .5) -> 0.5; image 2: right -> 1
    assert localization_proposals([img1, img2]) == pytest.approx(75.0)


# --- comparison --------------------------------------------------------------------------------------------------
def test_pairwise_accuracy_hand_computed() -> None:
    label = np.array([1, 2, 3, 3])
    # pairs with different labels: (0,1) (0,2) (0,3) (1,2) (1,3) = 5; the model orders (1,3) wrongly
    pred = np.array([0.1, 0.5, 0.9, 0.4])
    assert pairwise_accuracy(pred, label) == pytest.approx((4 / 5 - 0.5) * 2)
    assert pairwise_accuracy(np.arange(4.0), np.ones(4)) == 0.0  # no informative pair


def test_ties_are_broken_by_fixed_noise_the_same_for_every_call() -> None:
    label = np.array([1, 3, 2, 1, 3])
    a = pairwise_accuracy(np.zeros(5), label)
    assert a == pairwise_accuracy(np.zeros(5), label)
    assert -1.0 <= a <= 1.0


def test_comparison_random_is_near_zero_perfect_is_100_and_human_agreement() -> None:
    rng = np.random.default_rng(0)
    sets_random, sets_perfect = [], []
    for _ in range(400):
        a1 = rng.integers(1, 4, size=10).astype(float)
        a2 = np.clip(a1 + rng.integers(-1, 2, size=10), 1, 3)
        sets_random.append((rng.random(10), a1, a2))
        sets_perfect.append((a1 + rng.random(10) * 1e-3, a1, a1))
    rnd = comparison_accuracy(sets_random)
    assert abs(rnd["model"]) < 5
    assert 0 < rnd["human"] < 100
    assert comparison_accuracy(sets_perfect)["model"] == pytest.approx(100.0)
    assert comparison_accuracy(sets_perfect)["human"] == pytest.approx(100.0)


def test_comparison_averages_both_annotators() -> None:
    scores = np.array([0.1, 0.2, 0.3])
    a1 = np.array([1, 2, 3])  # model agrees on all 3 pairs -> 1.0
    a2 = np.array([3, 2, 1])  # model disagrees on all 3 pairs -> -1.0
    res = comparison_accuracy([(scores, a1, a2)])
    assert res["model"] == pytest.approx(0.0)
    assert res["human"] == pytest.approx(-100.0)  # the annotators order every pair oppositely
