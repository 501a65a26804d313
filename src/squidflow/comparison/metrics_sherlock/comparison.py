"""Comparison of plausibility (Sherlock §4.3): does the model order a set's inferences as humans do?

For each set, over all pairs of candidates that a human rated differently on the 1–3 Likert scale, the model scores
a point when it orders them the same way. Ties in the model's scores are broken by tiny noise from a fixed seed, the
same for every model. The accuracy is reported as (acc − 0.5) × 2, so random is 0 and perfect 1. Each set has two
annotators: the model is scored against each and the two averaged; "human" is one annotator predicting the other.
The final number is the mean over sets × 100.
"""

from __future__ import annotations

import numpy as np


def pairwise_accuracy(pred: np.ndarray, label: np.ndarray, *, seed: int = 1) -> float:
    """(acc − 0.5) × 2 over pairs with different labels; 0.0 when no pair differs."""
    pred = np.asarray(pred, dtype=np.float64)
    label = np.asarray(label, dtype=np.float64)
    noise = np.random.RandomState(seed).random_sample(len(pred)) / 1e9  # as leaderboard_eval/score_comparison.py
    p = pred + noise
    i, j = np.triu_indices(len(label), 1)
    differ = label[i] != label[j]
    if not differ.any():
        return 0.0
    agree = (label[i] < label[j]) == (p[i] < p[j])
    return float((agree[differ].mean() - 0.5) * 2)


def comparison_accuracy(sets: list[tuple[np.ndarray, np.ndarray, np.ndarray]], *, seed: int = 1) -> dict[str, float]:
    """Model and human accuracy (× 100) over sets given as (model scores, annotator 1 labels, annotator 2 labels)."""
    model, human = [], []
    for scores, a1, a2 in sets:
        a1 = np.asarray(a1, dtype=np.float64)
        a2 = np.asarray(a2, dtype=np.float64)
        model.append(np.mean([pairwise_accuracy(scores, a1, seed=seed), pairwise_accuracy(scores, a2, seed=seed)]))
        human.append(np.mean([pairwise_accuracy(a2, a1, seed=seed), pairwise_accuracy(a1, a2, seed=seed)]))
    if not model:
        raise ValueError("comparison: no rated set")
    return {"model": float(100 * np.mean(model)), "human": float(100 * np.mean(human)), "n_sets": len(model)}
