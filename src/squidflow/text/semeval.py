"""The SemEval lexical-substitution measures, as the UNT image-annotation dataset uses them (and "Apples to Oranges"
reports them): best and out-of-ten (oot), each `normal` and `mode`, each as precision and recall.

An item is an image; its gold H_i is the multiset of the keywords its annotators gave (each annotator counts a keyword
once), freq(a) how many gave keyword a, |H_i| the multiset's size. A system answers an item with a ranked list; T is
every item with gold, A ⊆ T the items the system answered (a non-empty list). With the best answers B_i (here the
system's first keyword; the measure accepts several and divides the credit) and the oot answers O_i (at most ten):

    best normal    score_i = Σ_{a ∈ B_i} freq(a) / |B_i| / |H_i|
    oot normal     score_i = Σ_{a ∈ O_i} freq(a) / |H_i|                (fewer than ten answers simply score less)
    precision = Σ_{i ∈ A} score_i / |A|        recall = Σ_{i ∈ T} score_i / |T|   (an unanswered item scores 0)

The mode m_i is the keyword more annotators gave than any other; items whose most frequent keywords tie have no
mode and are left out of the mode measures (TM: items with a mode, AM = A ∩ TM):

    best mode      1 if the first best answer is m_i        oot mode   1 if m_i ∈ O_i
    precision over AM, recall over TM.

The human upper bound leaves one annotator out: each (item, annotator) pair is an item whose answers are that
annotator's keywords in the order typed (best: the first; oot: the first ten) and whose gold is the other
annotators' keywords; pairs whose other annotators gave nothing are not items.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

MEASURES = ("best_normal", "best_mode", "oot_normal", "oot_mode")
OOT_SIZE = 10


def mode(gold: Counter) -> str | None:
    """The unique most frequent keyword, None when the most frequent ones tie (or there is no gold)."""
    top = gold.most_common(2)
    if not top or (len(top) > 1 and top[0][1] == top[1][1]):
        return None
    return top[0][0]


def score(
    gold: Mapping[str, Counter],
    best: Mapping[str, Sequence[str]],
    oot: Mapping[str, Sequence[str]],
) -> dict[str, float | int | None]:
    """The eight scores (fractions in [0, 1], None when a denominator is empty) and the item counts.

    `gold`: item -> Counter of keywords (only items with at least one keyword are test items);
    `best`/`oot`: item -> the system's answers (missing or empty = the system left the item unanswered).
    """
    items = [i for i, g in gold.items() if sum(g.values()) > 0]
    sums = {f"{m}_{pr}": 0.0 for m in MEASURES for pr in ("p", "r")}
    n = {"A_best": 0, "A_oot": 0, "AM_best": 0, "AM_oot": 0, "TM": 0}
    for i in items:
        g = gold[i]
        size = sum(g.values())
        m = mode(g)
        n["TM"] += m is not None
        b = list(dict.fromkeys(best.get(i) or []))
        o = list(dict.fromkeys(oot.get(i) or []))[:OOT_SIZE]
        if b:
            s = sum(g[a] for a in b) / len(b) / size
            sums["best_normal_p"] += s
            sums["best_normal_r"] += s
            n["A_best"] += 1
            if m is not None:
                hit = float(b[0] == m)
                sums["best_mode_p"] += hit
                sums["best_mode_r"] += hit
                n["AM_best"] += 1
        if o:
            s = sum(g[a] for a in o) / size
            sums["oot_normal_p"] += s
            sums["oot_normal_r"] += s
            n["A_oot"] += 1
            if m is not None:
                hit = float(m in o)
                sums["oot_mode_p"] += hit
                sums["oot_mode_r"] += hit
                n["AM_oot"] += 1
    denominators = {
        "best_normal_p": n["A_best"],
        "best_normal_r": len(items),
        "best_mode_p": n["AM_best"],
        "best_mode_r": n["TM"],
        "oot_normal_p": n["A_oot"],
        "oot_normal_r": len(items),
        "oot_mode_p": n["AM_oot"],
        "oot_mode_r": n["TM"],
    }
    out: dict[str, float | int | None] = {k: (sums[k] / d if d else None) for k, d in denominators.items()}
    out |= {"n_items": len(items), "n_answered": n["A_oot"], "n_mode_items": n["TM"]}
    return out


def system_scores(gold: Mapping[str, Counter], ranked: Mapping[str, Sequence[str]]) -> dict[str, float | int | None]:
    """A ranked-keyword system: best = its first keyword, oot = its first ten."""
    return score(gold, {i: list(r)[:1] for i, r in ranked.items()}, {i: list(r)[:OOT_SIZE] for i, r in ranked.items()})


def gold_counts(by_annotator: Mapping[str, Mapping[str, Sequence[str]]]) -> dict[str, Counter]:
    """item -> annotator -> keywords  to  item -> Counter (each annotator counts each keyword once)."""
    return {i: Counter(k for kws in anns.values() for k in dict.fromkeys(kws)) for i, anns in by_annotator.items()}


def _leave_one_out(by_annotator: Mapping[str, Mapping[str, Sequence[str]]]):
    """The leave-one-annotator-out items: gold, best and oot answers per (image, annotator) key, and each key's image."""
    gold, best, oot, image = {}, {}, {}, {}
    for i, anns in by_annotator.items():
        for held_out, answers in anns.items():
            rest = Counter(k for a, kws in anns.items() if a != held_out for k in dict.fromkeys(kws))
            if not rest:
                continue
            key = f"{i}\x00{held_out}"
            gold[key], image[key] = rest, i
            answers = list(dict.fromkeys(answers))
            best[key], oot[key] = answers[:1], answers[:OOT_SIZE]
    return gold, best, oot, image


def human_upper_bound(by_annotator: Mapping[str, Mapping[str, Sequence[str]]]) -> dict[str, float | int | None]:
    """Leave-one-annotator-out scores (see the module docstring); n_items counts the images involved."""
    gold, best, oot, image = _leave_one_out(by_annotator)
    out = score(gold, best, oot)
    out["n_items"] = len(set(image.values()))
    return out


# --- per-item terms, for the bootstrap over images ----------------------------------------------------------------
# Every score above is a ratio of sums over items, so a resample that draws item i w_i times has the same scores
# with each sum weighted by w_i. TERMS are the per-item summands; scores_from_terms weights them for B resamples at
# once (one matrix product), and with every weight 1 it is `score` (tests/unit/text/test_text_semeval.py).
TERMS = ("best", "answered_best", "oot", "answered_oot", "has_mode", "best_mode", "oot_mode")


def score_terms(
    gold: Mapping[str, Counter],
    best: Mapping[str, Sequence[str]],
    oot: Mapping[str, Sequence[str]],
) -> tuple[list[str], np.ndarray]:
    """The test items (as `score` takes them) and an items × TERMS matrix: the best and oot credit (0 when
    unanswered), whether each was answered, whether the item has a mode, and the two mode hits (0 when unanswered)."""
    items = [i for i, g in gold.items() if sum(g.values()) > 0]
    terms = np.zeros((len(items), len(TERMS)))
    for row, i in enumerate(items):
        g = gold[i]
        size = sum(g.values())
        m = mode(g)
        b = list(dict.fromkeys(best.get(i) or []))
        o = list(dict.fromkeys(oot.get(i) or []))[:OOT_SIZE]
        terms[row, 4] = m is not None
        if b:
            terms[row, 0:2] = sum(g[a] for a in b) / len(b) / size, 1
            terms[row, 5] = m is not None and b[0] == m
        if o:
            terms[row, 2:4] = sum(g[a] for a in o) / size, 1
            terms[row, 6] = m is not None and m in o
    return items, terms


def scores_from_terms(terms: np.ndarray, weights: np.ndarray) -> dict[str, np.ndarray]:
    """The eight scores (fractions; NaN where a denominator is empty) for each of B resamples, `weights` B × items."""
    w = np.asarray(weights, dtype=float)
    best, a_best, oot, a_oot, tm, best_mode, oot_mode = (w @ terms).T  # each B sums
    total, am_best, am_oot = w.sum(axis=1), w @ (terms[:, 1] * terms[:, 4]), w @ (terms[:, 3] * terms[:, 4])
    ratios = {
        "best_normal_p": (best, a_best),
        "best_normal_r": (best, total),
        "best_mode_p": (best_mode, am_best),
        "best_mode_r": (best_mode, tm),
        "oot_normal_p": (oot, a_oot),
        "oot_normal_r": (oot, total),
        "oot_mode_p": (oot_mode, am_oot),
        "oot_mode_r": (oot_mode, tm),
    }
    with np.errstate(divide="ignore", invalid="ignore"):
        return {k: np.where(d > 0, num / np.where(d > 0, d, 1), np.nan) for k, (num, d) in ratios.items()}


def system_terms(gold: Mapping[str, Counter], ranked: Mapping[str, Sequence[str]]) -> tuple[list[str], np.ndarray]:
    """score_terms of a ranked-keyword system (as system_scores scores it); items are images."""
    return score_terms(
        gold, {i: list(r)[:1] for i, r in ranked.items()}, {i: list(r)[:OOT_SIZE] for i, r in ranked.items()}
    )


def human_terms(by_annotator: Mapping[str, Mapping[str, Sequence[str]]]) -> tuple[list[str], np.ndarray]:
    """score_terms of the leave-one-annotator-out upper bound (as human_upper_bound scores it); each item is named by
    its image, so that resampling an image draws all its held-out annotators."""
    gold, best, oot, image = _leave_one_out(by_annotator)
    items, terms = score_terms(gold, best, oot)
    return [image[k] for k in items], terms
