"""Calibration arithmetic every stage shares: which equal-width confidence bin a data point falls in, and the binned
gap between outcome and confidence that every ECE in the project sums.

Training's top-label and authors' ECE (squidflow.training.calibration, SQUID-E §5.3 and Tables 3 and 9), their
bootstrap intervals (squidflow.training.table_intervals) and the evaluation stage's equal-width ECE and reliability
diagram (squidflow.evaluation.uncertainty, .figures) all bin here, so that a change of edges or of the rule for a
confidence of exactly 0 is one change. The bins are (0, 1/m], (1/m, 2/m], ..., ((m-1)/m, 1], right-closed as in Guo
et al. 2017 ("On calibration of modern neural networks", §2) and as torch.bucketize bins in torchmetrics 0.8, which
the SQUID-E authors' code calls; a confidence of exactly 0, which neither places, counts in the first bin.

The resampled forms of the gap (training's table intervals, evaluation's bootstrap weights) sum the same per-bin
terms over B resamples at once; their tests check them against `binned_gap` at the identity resample.
"""

from __future__ import annotations

import numpy as np


def equal_width_bin(confidence: np.ndarray, n_bins: int) -> np.ndarray:
    """Bin index 0..n_bins-1 of each confidence in (0, 1/m], ..., ((m-1)/m, 1]; a confidence of 0 goes in bin 0."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return np.clip(np.searchsorted(edges, confidence, side="left") - 1, 0, n_bins - 1)


def binned_gap(confidence: np.ndarray, outcome: np.ndarray, n_bins: int) -> float:
    """Σ over equal-width bins of the bin's share × |mean outcome − mean confidence|: the calibration error that the
    top-label ECE (outcome = correct) and the binary ECE (outcome = the 0/1 target) both compute."""
    bin_of = equal_width_bin(confidence, n_bins)
    gap = 0.0
    for b in range(n_bins):
        member = bin_of == b
        if member.any():
            gap += member.mean() * abs(outcome[member].mean() - confidence[member].mean())
    return float(gap)
