"""The SemEval best/oot measures (normal and mode, precision and recall) against hand computations."""

from __future__ import annotations

from collections import Counter

import pytest

from squidflow.text.semeval import gold_counts, human_upper_bound, mode, score, system_scores


def test_mode_is_the_unique_most_frequent_keyword_and_ties_have_none():
    assert mode(Counter({"cake": 3, "candles": 2})) == "cake"
    assert mode(Counter({"cake": 2, "candles": 2, "party": 1})) is None  # a tie at the top: no mode
    assert mode(Counter({"cake": 1})) == "cake"
    assert mode(Counter()) is None


# Three images. Gold (annotators' keywords, each annotator counts once):
#   i1: cake x3, candles x2, party x1   |H| = 6, mode cake
#   i2: bride x2, dress x2, church x1   |H| = 5, no mode (bride and dress tie)
#   i3: parade x2, band x1              |H| = 3, mode parade
GOLD = {
    "i1": Counter({"cake": 3, "candles": 2, "party": 1}),
    "i2": Counter({"bride": 2, "dress": 2, "church": 1}),
    "i3": Counter({"parade": 2, "band": 1}),
}


def test_best_and_oot_equal_a_hand_computation_with_an_unanswered_item():
    # the system answers i1 and i2 and leaves i3 empty
    ranked = {"i1": ["candles", "cake", "balloon"], "i2": ["bride", "flowers"], "i3": []}
    s = system_scores(GOLD, ranked)
    # best normal: i1 first keyword candles: 2/6; i2 bride: 2/5; i3 unanswered
    assert s["best_normal_p"] == pytest.approx((2 / 6 + 2 / 5) / 2)  # over the 2 answered items
    assert s["best_normal_r"] == pytest.approx((2 / 6 + 2 / 5) / 3)  # over all 3 items with gold
    # best mode: items with a mode are i1 and i3 (i2 ties); i1's first answer candles != cake; i3 unanswered
    assert s["best_mode_p"] == pytest.approx(0 / 1)  # AM = {i1}
    assert s["best_mode_r"] == pytest.approx(0 / 2)  # TM = {i1, i3}
    # oot normal: fewer than ten answers simply sum: i1 (2+3+0)/6, i2 (2+0)/5
    assert s["oot_normal_p"] == pytest.approx((5 / 6 + 2 / 5) / 2)
    assert s["oot_normal_r"] == pytest.approx((5 / 6 + 2 / 5) / 3)
    # oot mode: i1's mode cake is among its answers
    assert s["oot_mode_p"] == pytest.approx(1.0)
    assert s["oot_mode_r"] == pytest.approx(1 / 2)
    assert (s["n_items"], s["n_answered"], s["n_mode_items"]) == (3, 2, 2)


def test_every_item_answered_gives_equal_precision_and_recall():
    ranked = {"i1": ["cake"], "i2": ["church"], "i3": ["band", "parade"]}
    s = system_scores(GOLD, ranked)
    assert s["best_normal_p"] == s["best_normal_r"] == pytest.approx((3 / 6 + 1 / 5 + 1 / 3) / 3)
    assert s["best_mode_p"] == s["best_mode_r"] == pytest.approx((1 + 0) / 2)  # i1 hits, i3's first is band
    assert s["oot_normal_r"] == pytest.approx((3 / 6 + 1 / 5 + 3 / 3) / 3)
    assert s["oot_mode_r"] == pytest.approx(1.0)


def test_best_with_several_answers_divides_the_credit_and_oot_keeps_only_ten():
    s = score({"x": Counter({"a": 2, "b": 1})}, best={"x": ["a", "b"]}, oot={"x": list("cdefghijklab")})
    assert s["best_normal_p"] == pytest.approx((2 + 1) / 2 / 3)
    assert s["oot_normal_p"] == 0.0  # a and b are the 11th and 12th answers: out of ten
    assert s["oot_mode_p"] == 0.0


def test_no_answer_at_all_has_no_precision_but_zero_recall():
    s = system_scores(GOLD, {})
    assert s["best_normal_p"] is None and s["oot_mode_p"] is None
    assert s["best_normal_r"] == 0.0 and s["oot_mode_r"] == 0.0


def test_items_without_gold_are_not_test_items():
    s = system_scores({"i1": Counter({"cake": 1}), "empty": Counter()}, {"i1": ["cake"], "empty": ["x"]})
    assert s["n_items"] == 1 and s["best_normal_p"] == 1.0 and s["best_normal_r"] == 1.0


def test_gold_counts_each_annotators_keyword_once():
    counts = gold_counts({"i": {"w1": ["cake", "cake", "candles"], "w2": ["cake"]}})
    assert counts["i"] == Counter({"cake": 2, "candles": 1})


def test_human_upper_bound_leaves_one_annotator_out():
    by_annotator = {
        "i1": {"w1": ["cake", "candles"], "w2": ["cake", "party"], "w3": ["balloon"]},
        "i2": {"w1": ["dog"]},  # a single annotator: nothing to compare with, not an item
    }
    s = human_upper_bound(by_annotator)
    # held out w1: rest {cake:1, party:1, balloon:1} |H|=3, no mode; best cake 1/3, oot cake+candles 1/3
    # held out w2: rest {cake:1, candles:1, balloon:1}, no mode; best cake 1/3, oot cake+party 1/3
    # held out w3: rest {cake:2, candles:1, party:1} |H|=4, mode cake; best balloon 0, oot 0, modes 0
    assert s["best_normal_p"] == s["best_normal_r"] == pytest.approx((1 / 3 + 1 / 3 + 0) / 3)
    assert s["oot_normal_r"] == pytest.approx((1 / 3 + 1 / 3 + 0) / 3)
    assert s["best_mode_r"] == 0.0 and s["n_mode_items"] == 1
    assert s["n_items"] == 1  # images involved


# --- the per-item terms the bootstrap over images weights (issue 24) ----------------------------------------------
import numpy as np  # noqa: E402

from squidflow.text.semeval import MEASURES, human_terms, scores_from_terms, system_terms  # noqa: E402

KEYS = [f"{m}_{pr}" for m in MEASURES for pr in ("p", "r")]
RANKED = {"i1": ["candles", "cake", "balloon"], "i2": ["bride", "flowers"], "i3": []}


def _same(weighted: dict, expected: dict, b: int = 0):
    for k in KEYS:
        if expected[k] is None:
            assert np.isnan(weighted[k][b]), k
        else:
            assert weighted[k][b] == pytest.approx(expected[k], abs=1e-12), k


def test_terms_with_every_weight_one_are_the_scores():
    items, terms = system_terms(GOLD, RANKED)
    _same(scores_from_terms(terms, np.ones((1, len(items)))), system_scores(GOLD, RANKED))
    nothing = {i: [] for i in GOLD}
    items, terms = system_terms(GOLD, nothing)
    _same(scores_from_terms(terms, np.ones((1, len(items)))), system_scores(GOLD, nothing))  # no P, zero R


def test_weighted_terms_score_the_resample_written_out():
    """Drawing i1 twice, i2 never and i3 once scores as the three items i1, i1', i3 would."""
    items, terms = system_terms(GOLD, RANKED)
    weights = np.array([[2.0, 0.0, 1.0], [0.0, 3.0, 0.0]])
    reps = scores_from_terms(terms, weights)
    for b, draw in enumerate(weights):
        gold = {f"{i}#{k}": GOLD[i] for i, w in zip(items, draw, strict=True) for k in range(int(w))}
        ranked = {f"{i}#{k}": RANKED[i] for i, w in zip(items, draw, strict=True) for k in range(int(w))}
        _same(reps, system_scores(gold, ranked), b)


def test_human_terms_are_named_by_their_image():
    by_annotator = {
        "i1": {"w1": ["cake", "candles"], "w2": ["cake", "party"], "w3": ["balloon"]},
        "i2": {"w1": ["dog"]},
    }
    images, terms = human_terms(by_annotator)
    assert images == ["i1", "i1", "i1"]  # three held-out annotators of i1; i2 has nobody to compare with
    _same(scores_from_terms(terms, np.ones((1, 3))), human_upper_bound(by_annotator))
