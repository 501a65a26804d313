"""Reductions over images for B bootstrap resamples at once, given as weights: the resampling behind every interval of
the uncertainty measures (`squidflow.evaluation.uncertainty`; the intervals of SQUID-E §5.3's and supplement D.4's
tables), and the weighted Pearson and Spearman correlation of its entropy correlation (Uma et al., JAIR 2021, §5).

`weights` is a (B, n) matrix of bootstrap counts: how often each image is drawn in each of B resamples
(`squidflow.statistics.intervals.counts`). A weighted reduction returns B values at once, each equal to the reduction on the
explicitly resampled data (each image written out as many times as it is drawn), without writing it out; no
weights is one resample that draws every image once, and then one number comes back (`_weights`, `_result`).
"""

from __future__ import annotations

import numpy as np


def _weights(weights: np.ndarray | None, n: int) -> tuple[np.ndarray, bool]:
    if weights is None:
        return np.ones((1, n)), True
    w = np.asarray(weights, dtype=float)
    if w.ndim == 1:
        w = w[None]
    if w.shape[1] != n:
        raise ValueError(f"weights {w.shape}: expected (B, {n})")
    return w, False


def _result(values: np.ndarray, scalar: bool):
    return float(values[0]) if scalar else values


def _weighted_pearson(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """x, y (n,); w (B, n) -> (B,) Pearson correlation of the weighted (resampled) data, from the weighted moments
    (one product of w with the six columns 1, x, y, x², y², xy, centred first for accuracy)."""
    x = x - x.mean()
    y = y - y.mean()
    total, sx, sy, sxx, syy, sxy = (w @ np.stack([np.ones_like(x), x, y, x * x, y * y, x * y], axis=1)).T
    cov = sxy - sx * sy / total
    vx = sxx - sx * sx / total
    vy = syy - sy * sy / total
    with np.errstate(invalid="ignore", divide="ignore"):
        return cov / np.sqrt(vx * vy)


def _weighted_ranks(x: np.ndarray, wt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mid-ranks (1-based, ties averaged) of each data point within the resamples that `wt` (n, B: the weights
    transposed, so that reordering the points moves whole rows) draws from x (n,): the rank every copy of x_i would
    get if the resample were written out. Returns (order, ranks (n, B)), ranks[j] the rank of x[order[j]]."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    first = np.r_[True, xs[1:] != xs[:-1]]
    ws = wt[order]
    if first.all():  # no ties: each point its own group; its copies share (before + (copies + 1) / 2)
        ranks = np.cumsum(ws, axis=0)
        ranks -= 0.5 * ws
        ranks += 0.5
        return order, ranks
    group = np.cumsum(first) - 1
    gw = np.add.reduceat(ws, np.flatnonzero(first), axis=0)  # (groups, B): copies per tie group
    mid = np.cumsum(gw, axis=0)
    mid -= 0.5 * gw
    mid += 0.5
    return order, mid[group]


def _weighted_spearman(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """(B,) Spearman correlation of x, y (n,) in each resample of w (B, n): Pearson of the weighted mid-ranks,
    from their weighted moments (Σ w r = N(N + 1)/2 for mid-ranks)."""
    wt = np.ascontiguousarray(w.T)
    ox, rx = _weighted_ranks(x, wt)
    oy, ry = _weighted_ranks(y, wt)
    total = w.sum(axis=1)
    centre = (total * (total + 1) / 2) ** 2 / total
    position_in_y = np.empty(len(oy), dtype=np.int64)
    position_in_y[oy] = np.arange(len(oy))
    wrx = wt[ox] * rx
    sxx = np.einsum("nb,nb->b", wrx, rx) - centre
    syy = np.einsum("nb,nb->b", wt[oy] * ry, ry) - centre
    sxy = np.einsum("nb,nb->b", wrx, ry[position_in_y[ox]]) - centre
    with np.errstate(invalid="ignore", divide="ignore"):
        return sxy / np.sqrt(sxx * syy)
