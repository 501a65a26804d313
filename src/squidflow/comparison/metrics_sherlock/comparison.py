"""Comparison of plausibility (Sherlock §4.3): does the model order a set's inferences as humans do?

For each set, over all pairs of candidates that a human rated differently on the 1–3 Likert scale, the model scores
a point when it orders them the same way. Ties in the model's scores are broken by tiny noise from a fixed seed, the
same for every model. The accuracy is reported as (acc − 0.5) × 2, so random is 0 and perfect 1. Each set has two
annotators: the model is scored against each and the two averaged; "human" is one annotator predicting the other.
The final number is the mean over sets × 100.

As allenai/sherlock's `leaderboard_eval/score_comparison.py`, squidflow also reports two baselines: `random` (uniform
scores) and `oracle` (the mean of the two annotators' ratings, which each annotator is then scored against). The
leaderboard draws the random scores from numpy's global generator right after the model's tie-break noise (seed 1,
10 values), so they are values 10 .. 10+n of that seed's stream, the same for every set of a size; squidflow draws
exactly those, so the baseline's number is the leaderboard's.
"""

from __future__ import annotations

import numpy as np

NOISE_DRAWS = 10  # the leaderboard draws 10 tie-break values per call (its sets have at most 10 candidates)


def tiebreak_noise(n: int, *, seed: int = 1) -> np.ndarray:
    """The fixed tie-break noise added to n scores: the seed's first values / 1e9, as leaderboard_eval does."""
    return np.random.RandomState(seed).random_sample(max(n, NOISE_DRAWS))[:n] / 1e9


def random_scores(n: int, *, seed: int = 1) -> np.ndarray:
    """The leaderboard's random scorer for a set of n candidates: the seed's values after the 10 tie-break draws."""
    return np.random.RandomState(seed).random_sample(NOISE_DRAWS + n)[NOISE_DRAWS:]


def pairwise_accuracy(pred: np.ndarray, label: np.ndarray, *, seed: int = 1) -> float:
    """(acc − 0.5) × 2 over pairs with different labels; 0.0 when no pair differs."""
    pred = np.asarray(pred, dtype=np.float64)
    label = np.asarray(label, dtype=np.float64)
    p = pred + tiebreak_noise(len(pred), seed=seed)
    i, j = np.triu_indices(len(label), 1)
    differ = label[i] != label[j]
    if not differ.any():
        return 0.0
    agree = (label[i] < label[j]) == (p[i] < p[j])
    return float((agree[differ].mean() - 0.5) * 2)


def comparison_accuracy(sets: list[tuple[np.ndarray, np.ndarray, np.ndarray]], *, seed: int = 1) -> dict[str, float]:
    """Model, human, random and oracle accuracy (× 100) over sets given as (model scores, annotator 1 labels,
    annotator 2 labels), averaged over sets in the order given."""
    acc: dict[str, list[float]] = {"human": [], "model": [], "random": [], "oracle": []}
    for scores, a1, a2 in sets:
        a1 = np.asarray(a1, dtype=np.float64)
        a2 = np.asarray(a2, dtype=np.float64)
        oracle = np.mean(np.vstack([a1, a2]), axis=0)
        rnd = random_scores(len(a1), seed=seed)
        per: dict[str, list[float]] = {k: [] for k in acc}
        for other, label in ((a1, a2), (a2, a1)):  # each annotator in turn is the label, as the leaderboard orders
            per["human"].append(pairwise_accuracy(other, label, seed=seed))
            per["model"].append(pairwise_accuracy(scores, label, seed=seed))
            per["random"].append(pairwise_accuracy(rnd, label, seed=seed))
            per["oracle"].append(pairwise_accuracy(oracle, label, seed=seed))
        for k in acc:
            acc[k].append(float(np.mean(per[k])))
    if not acc["model"]:
        raise ValueError("comparison: no rated set")
    out: dict = {k: float(np.mean(acc[k]) * 100) for k in ("model", "human", "random", "oracle")}
    out["n_sets"] = len(acc["model"])
    return out
