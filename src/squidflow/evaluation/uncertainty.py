"""The uncertainty core: a model measured against people the way the work on learning from human disagreement does.

Every function takes numpy arrays and returns per-image arrays or one number, so each can be checked by hand and
against the library that already computes it (the tests do: scipy, torchmetrics, relplot); Krippendorff's α at the ordinal and interval levels
is the judgments stage's (squidflow.judgments.agreement).

Inputs
------
- `prob`: the model's probability of the judged event, shape (n,); or its class distribution, shape (n, k).
- `ratings`: the people's ratings, float (n, max_raters) on 0..100 with NaN where a position did not rate; the human
  soft label of an image is nanmean(ratings) / 100 (SQUID-E §4: the mean human judgment). With a class
  distribution `prob` (n, k), `ratings` is instead the human soft labels (n, k), rows summing to 1.

Per-image soft-label measures (`soft_label_measures`; natural log, so every value is in nats)
-------------------------------------------------------------------------------------------
h is the human soft label, p the model's distribution (a binary event is the two-class distribution (p, 1 - p)).
Where a log needs a positive argument, a distribution is clipped first: a binary probability to [EPS, 1 - EPS]
(as SQUID-E supplement D.4's Bernoulli KL, so `kl_human_model` equals `squidflow.statistics.certainty.bernoulli_kl_per_image`),
a class distribution to [EPS, 1] and renormalised. 0 · log 0 counts as 0.

- `cross_entropy`     H(h, p) = -Σ_c h_c log p̃_c, p̃ clipped, h as given (CIFAR-10H, Peterson et al. 2019, §4: the
                      cross-entropy of a model's prediction against the human label distribution).
- `kl_human_model`    KL(h̃ ‖ p̃) = Σ_c h̃_c log(h̃_c / p̃_c), both clipped (SQUID-E supplement D.4; Uma et al.,
                      JAIR 2021, §5 "soft metrics").
- `kl_model_human`    KL(p̃ ‖ h̃), the other direction, both clipped.
- `js_divergence`     JSD(h, p) = ½ KL(h ‖ m) + ½ KL(p ‖ m), m = (h + p)/2, unclipped (always finite), the divergence
                      and not its square root (`scipy.spatial.distance.jensenshannon` returns the root); Uma et al.
                      2021 §5.
- `total_variation`   ½ Σ_c |h_c - p_c|, half the Manhattan distance that LeWiDi 2025 scores soft labels by.
- `brier`             binary (n,): (p - h)², whose mean over images is SQUID-E §5.3's HUJ MSE; class distribution:
                      Σ_c (p_c - h_c)² (Brier 1950's multi-class score).
- `wasserstein`       binary: W1 between the point mass at 100·p and the empirical distribution of the image's ratings,
                      = mean_j |r_j - 100·p| on the 0..100 scale (LeWiDi 2025 scores ordinal ratings by Wasserstein
                      distance); class distribution: W1 between h and p on the class indices 0..k-1, meaningful where
                      the classes are ordered (= Σ_c |H_c - P_c| over the cumulative distributions).

An image without any rating has NaN for every measure.

Agreement of uncertainty (`entropy_correlation`)
------------------------------------------------
Pearson and Spearman correlation across images between the model's predictive entropy H(p) and the entropy of the
human soft label H(h), both in nats (binary: of (p, 1-p) and (h, 1-h)); the people's spread is their soft label's
entropy, not the std of their ratings (Uma et al. 2021 §5 "entropy correlation").

Calibration (confidence, correct: per data point, `correct` 0/1 or a frequency in [0, 1])
---------------------------------------------------------------------------------------
- `ece_equal_width`  Σ over bins (0, 1/m], (1/m, 2/m], ..., ((m-1)/m, 1] (a confidence of 0 in the first: the
                     floor's `squidflow.statistics.ece.equal_width_bin`) of the bin's share × |mean correct - mean
                     confidence| (Guo et al. 2017; Naeini et al. 2015): `squidflow.statistics.ece.binned_gap`, which
                     the project's `training.calibration.expected_calibration_error` computes with confidence = max
                     probability and correct = argmax is the label, and its `binary_calibration_error` with
                     confidence = P(1) and correct = the 0/1 target.
- `ece_equal_mass`   the same gap over m bins of (nearly) equal count: data points sorted by confidence (stable; ties
                     may be split across bins) and cut as `np.array_split` cuts, the first N mod m bins one larger
                     (Nixon et al. 2019 "adaptive ECE"; Roelofs et al. 2022).
- `smooth_ece`       smooth ECE (Błasiok & Nakkiran 2023, "Smooth ECE: principled reliability diagrams via kernel
                     smoothing", §4): the residual (confidence - correct) smoothed with a Gaussian kernel reflected at
                     0 and 1, |smoothed residual| integrated against the smoothed density, at the bandwidth σ* that
                     solves smECE_σ = σ. Computed exactly as the authors' `relplot.smECE` (its grid discretisation,
                     its 10-step bisection for σ*), which the tests check to 1e-9.

People ceiling
--------------
- `people_ceiling`   each soft-label measure for people: every rater in turn is the "model" (prob = rating / 100)
                     against the ratings of the image's other raters (soft label = their mean / 100; `wasserstein`
                     against their ratings), averaged over the image's raters (leave-one-rater-out). NaN where an
                     image has fewer than two ratings.

Bootstrap weights
-----------------
Every function that reduces over images takes `weights`, a (B, n) matrix of bootstrap counts (how often each image
is drawn in each of B resamples, `squidflow.statistics.intervals.counts`), and then returns B values at once, each equal to the measure
on the explicitly resampled data (the weighted reductions: `squidflow.evaluation.bootstrap_weights`). Per-image
measures need no weights: their resampled means are `weights @ values`.
"""

from __future__ import annotations

import functools

import numpy as np

from squidflow.evaluation.bootstrap_weights import _result, _weighted_pearson, _weighted_spearman, _weights
from squidflow.statistics.ece import equal_width_bin

EPS = 1e-6
SOFT_LABEL_MEASURES = (
    "cross_entropy",
    "kl_human_model",
    "kl_model_human",
    "js_divergence",
    "total_variation",
    "brier",
    "wasserstein",
)


# --- soft labels ---------------------------------------------------------------------------------------------------
def soft_label(ratings: np.ndarray) -> np.ndarray:
    """(n, R) ratings on 0..100 with NaN -> (n,) mean rating / 100 (NaN for an image nobody rated)."""
    r = np.asarray(ratings, dtype=float)
    count = (~np.isnan(r)).sum(axis=-1)
    total = np.nansum(r, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan) / 100.0


def _clip_binary(p: np.ndarray, eps: float) -> np.ndarray:
    c = np.clip(p, eps, 1 - eps)
    return np.stack([c, 1 - c], axis=-1)


def _clip_classes(p: np.ndarray, eps: float) -> np.ndarray:
    c = np.clip(p, eps, 1.0)
    return c / c.sum(axis=-1, keepdims=True)


def _distribution_measures(h: np.ndarray, p: np.ndarray, hc: np.ndarray, pc: np.ndarray) -> dict[str, np.ndarray]:
    """h, p: (..., k) distributions as given; hc, pc: clipped. Everything but Brier and Wasserstein."""
    from scipy.special import xlogy  # scipy where it is used: most jobs that import this module need none of it

    m = (h + p) / 2
    return {
        "cross_entropy": -(xlogy(h, pc)).sum(axis=-1),
        "kl_human_model": (xlogy(hc, hc) - xlogy(hc, pc)).sum(axis=-1),
        "kl_model_human": (xlogy(pc, pc) - xlogy(pc, hc)).sum(axis=-1),
        "js_divergence": 0.5 * (xlogy(h, h) - xlogy(h, m)).sum(axis=-1)
        + 0.5 * (xlogy(p, p) - xlogy(p, m)).sum(axis=-1),
        "total_variation": 0.5 * np.abs(h - p).sum(axis=-1),
    }


def soft_label_measures(prob: np.ndarray, ratings: np.ndarray, *, eps: float = EPS) -> dict[str, np.ndarray]:
    """Per-image soft-label measures of `prob` against the people (see the module docstring for each definition).

    prob (n,) with ratings (n, R) on 0..100 (NaN = no rating); or prob (n, k) with ratings (n, k) soft labels.
    Leading batch axes are allowed: prob (..., n) with ratings (..., n, R). Returns {measure: (..., n) array}.
    """
    p = np.asarray(prob, dtype=float)
    r = np.asarray(ratings, dtype=float)
    if r.ndim == p.ndim + 1:  # binary event, 0..100 ratings
        h = soft_label(r)
        p2 = np.stack([p, 1 - p], axis=-1)
        h2 = np.stack([h, 1 - h], axis=-1)
        out = _distribution_measures(h2, p2, _clip_binary(h, eps), _clip_binary(p, eps))
        out["brier"] = (p - h) ** 2
        with np.errstate(invalid="ignore"):
            count = (~np.isnan(r)).sum(axis=-1)
            dist = np.nansum(np.abs(r - 100.0 * p[..., None]), axis=-1)
            out["wasserstein"] = np.where(count > 0, dist / np.maximum(count, 1), np.nan)
        missing = np.isnan(h)
    elif r.shape == p.shape:  # class distributions against soft labels
        out = _distribution_measures(r, p, _clip_classes(r, eps), _clip_classes(p, eps))
        out["brier"] = ((p - r) ** 2).sum(axis=-1)
        out["wasserstein"] = np.abs(np.cumsum(p - r, axis=-1)[..., :-1]).sum(axis=-1)
        missing = np.isnan(r).any(axis=-1)
    else:
        raise ValueError(f"prob {p.shape} and ratings {r.shape}: expected (n,) with (n, raters) or (n, k) with (n, k)")
    return {k: np.where(missing, np.nan, out[k]) for k in SOFT_LABEL_MEASURES}


def people_ceiling(ratings: np.ndarray, *, eps: float = EPS) -> dict[str, np.ndarray]:
    """Leave-one-rater-out soft-label measures for people: per image, each rater's rating / 100 as the prediction
    against the other raters (their mean / 100, their ratings for `wasserstein`), averaged over the image's raters.

    ratings (n, R) on 0..100 with NaN; leading batch axes allowed ((..., n, R) -> (..., n)). NaN for images with
    fewer than two ratings.
    """
    r = np.asarray(ratings, dtype=float)
    n_raters = r.shape[-1]
    rated = ~np.isnan(r)
    # (..., n, R held out, R others): the held-out position masked among the others
    others = np.broadcast_to(r[..., None, :], (*r.shape, n_raters)).copy()
    idx = np.arange(n_raters)
    others[..., idx, idx] = np.nan
    held = r / 100.0
    values = soft_label_measures(np.where(rated, held, 0.5), others, eps=eps)
    counts = rated.sum(axis=-1)
    out = {}
    for k, v in values.items():
        v = np.where(rated, v, np.nan)  # a position that did not rate holds nothing out
        with np.errstate(invalid="ignore"):
            mean = np.nansum(v, axis=-1) / np.maximum(counts, 1)
        out[k] = np.where(counts >= 2, mean, np.nan)
    return out


def entropy(p: np.ndarray) -> np.ndarray:
    """Entropy in nats of a binary probability (n,) or class distributions (n, k); 0 · log 0 = 0."""
    p = np.asarray(p, dtype=float)
    if p.ndim == 1:
        p = np.stack([p, 1 - p], axis=-1)
    from scipy.special import xlogy

    return -xlogy(p, p).sum(axis=-1)


# --- agreement of uncertainty ----------------------------------------------------------------------------------------
def entropy_correlation(prob: np.ndarray, ratings: np.ndarray, *, weights: np.ndarray | None = None) -> dict:
    """Pearson and Spearman correlation across images between the model's predictive entropy and the entropy of the
    human soft label (nats; module docstring). Images nobody rated drop out. Floats, or (B,) arrays with weights."""
    p = np.asarray(prob, dtype=float)
    r = np.asarray(ratings, dtype=float)
    h = soft_label(r) if r.ndim == p.ndim + 1 else r
    model_h, human_h = entropy(p), entropy(h)
    keep = ~np.isnan(human_h)
    w, scalar = _weights(weights, len(keep))
    if not keep.all():
        model_h, human_h, w = model_h[keep], human_h[keep], w[:, keep]
    pearson = _weighted_pearson(model_h, human_h, w)
    spearman = _weighted_spearman(model_h, human_h, w)
    return {"pearson": _result(pearson, scalar), "spearman": _result(spearman, scalar)}


# --- calibration -----------------------------------------------------------------------------------------------------
def ece_equal_width(
    confidence: np.ndarray, correct: np.ndarray, n_bins: int = 10, weights: np.ndarray | None = None
) -> float | np.ndarray:
    """Top-label (or binary) ECE over `n_bins` equal-width bins (module docstring). Float, or (B,) with weights."""
    c = np.asarray(confidence, dtype=float).ravel()
    y = np.asarray(correct, dtype=float).ravel()
    if len(c) == 0:
        return float("nan")
    w, scalar = _weights(weights, len(c))
    from scipy import sparse

    member = sparse.csr_matrix(((y - c), (np.arange(len(c)), equal_width_bin(c, n_bins))), shape=(len(c), n_bins))
    gap = np.asarray(member.T @ w.T).T  # (B, bins): Σ w (correct - confidence) per bin
    return _result(np.abs(gap).sum(axis=1) / w.sum(axis=1), scalar)


def _rowwise_searchsorted(sorted_rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    """For each row b, np.searchsorted(sorted_rows[b], values[b], side='right') (rows nondecreasing, >= 0)."""
    n_rows = sorted_rows.shape[0]
    span = max(sorted_rows.max(initial=0), values.max(initial=0)) + 1.0
    offset = np.arange(n_rows)[:, None] * span
    flat = np.searchsorted((sorted_rows + offset).ravel(), (values + offset).ravel(), side="right")
    return flat.reshape(values.shape) - np.arange(n_rows)[:, None] * sorted_rows.shape[1]


def ece_equal_mass(
    confidence: np.ndarray, correct: np.ndarray, n_bins: int = 10, weights: np.ndarray | None = None
) -> float | np.ndarray:
    """ECE over `n_bins` bins of (nearly) equal count (module docstring). Float, or (B,) with weights, which here
    must be counts (whole numbers: the copies of each point that the bins cut)."""
    c = np.asarray(confidence, dtype=float).ravel()
    y = np.asarray(correct, dtype=float).ravel()
    if len(c) == 0:
        return float("nan")
    w, scalar = _weights(weights, len(c))
    order = np.argsort(c, kind="stable")
    d = (y - c)[order]
    ws = w[:, order]
    ends = np.cumsum(ws, axis=1)  # (B, n) position after each item's copies in the sorted resample
    cum = np.cumsum(ws * d, axis=1)
    total = ends[:, -1]
    q, r = np.divmod(total, n_bins)
    b = np.arange(n_bins + 1)
    cuts = b[None] * q[:, None] + np.minimum(b[None], r[:, None])  # (B, bins + 1) array_split boundaries
    # F(t) = Σ over the first t positions of d: the items wholly before t, then part of the item that straddles t
    k = _rowwise_searchsorted(ends, cuts)  # first item whose copies end after t
    k_clip = np.minimum(k, len(c) - 1)
    done = np.where(k > 0, np.take_along_axis(np.pad(cum, ((0, 0), (1, 0))), k, axis=1), 0.0)
    start = np.take_along_axis(np.pad(ends, ((0, 0), (1, 0))), k, axis=1)
    partial = np.where(k < len(c), (cuts - start) * d[k_clip], 0.0)
    cumulative = done + partial
    gap = np.diff(cumulative, axis=1)
    return _result(np.abs(gap).sum(axis=1) / total, scalar)


# smooth ECE, as relplot computes it (relplot.metrics.smooth_ece with the ReflectedGaussianKernel) --------------------
_SMECE_MESH = 200  # relplot.config.smECE_mesh_pts
_SMECE_DENSITY_EPS = 1e-4  # relplot.kernels.BaseKernelMixin.smooth's eps


def _smooth_mesh(sigma: float) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """relplot's discretisation at bandwidth sigma: grid size g, its Gaussian kernel on the grid, and the mesh of
    max(round(10 / sigma), 200) points as (left grid index, interpolation weight of the right one)."""
    mesh = max(round(10 / sigma), _SMECE_MESH)
    t = np.linspace(0, 1, mesh)
    g = max(2000, round(20 / sigma)) // 2 + 1
    grid = np.linspace(0, 1, g)
    kernel = np.exp(-((grid - 0.5) ** 2) / (2 * sigma**2)) / (np.sqrt(2 * np.pi) * sigma)
    inds = (t * (g - 1)).astype(int).clip(0, g - 2)
    residual = (t - inds / (g - 1)) * (g - 1)
    return g, kernel, t, inds, residual


@functools.lru_cache(maxsize=8)
def _smooth_operator(sigma: float) -> np.ndarray:
    """relplot's ReflectedGaussianKernel(sigma).apply as a (mesh, g) matrix M: M @ smooth_round_to_grid(f, v, g)
    = apply(f, v, mesh), the reflected convolution of the grid values interpolated at the mesh."""
    g, kernel, _, inds, residual = _smooth_mesh(sigma)
    rows = np.unique(np.r_[inds, inds + 1])
    # relplot pads the values to [flip(v)[:-1], v, flip(v)[1:]] and takes np.convolve(..., "valid") from g // 2 on:
    # output i reads padded position e = i + g // 2 + m with kernel[g - 1 - m]; value s sits at e = g - 1 - s
    # (s >= 1), e = g - 1 + s, and e = 3g - 3 - s (s <= g - 2)
    s = np.arange(g)
    conv = np.zeros((len(rows), g))
    for e, valid in ((g - 1 - s, s >= 1), (g - 1 + s, np.ones(g, dtype=bool)), (3 * g - 3 - s, s <= g - 2)):
        m = e[None] - rows[:, None] - g // 2
        ok = valid[None] & (m >= 0) & (m <= g - 1)
        conv += np.where(ok, kernel[g - 1 - np.clip(m, 0, g - 1)], 0.0)
    where = np.searchsorted(rows, inds)
    operator = conv[where] * (1 - residual)[:, None] + conv[where + 1] * residual[:, None]
    operator.flags.writeable = False  # cached
    return operator


def _smooth_apply(grid_values: np.ndarray, sigma: float) -> np.ndarray:
    """(b, g) grid values -> (b, mesh) kernel-smoothed values at the mesh, as relplot computes them: np.convolve for
    one or two rows (exactly relplot's operations), a matrix product for many rows, an FFT where that matrix would
    be large (tiny sigma)."""
    g, kernel, _, inds, residual = _smooth_mesh(sigma)
    if len(grid_values) > 2 and len(inds) * g <= 4_000_000:
        return grid_values @ _smooth_operator(sigma).T
    padded = np.concatenate([grid_values[:, ::-1][:, :-1], grid_values, grid_values[:, ::-1][:, 1:]], axis=1)
    if len(grid_values) <= 2:
        smoothed = np.stack([np.convolve(row, kernel, "valid") for row in padded])
    else:
        from scipy import signal  # its import alone pulls in scipy.stats

        smoothed = signal.fftconvolve(padded, kernel[None], mode="valid", axes=1)
    smoothed = smoothed[:, g // 2 : g // 2 + g]
    return smoothed[:, inds] * (1 - residual) + smoothed[:, inds + 1] * residual


def _grid_split(confidence: np.ndarray, g: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """relplot's smooth_round_to_grid as a plan: images sorted by grid cell, the first image of each used cell,
    the used cells, and each sorted image's share (1 - frac) of its cell (the rest goes to the next cell)."""
    bins = (confidence * (g - 1)).astype(int).clip(0, g - 2)
    frac = confidence * (g - 1) - bins
    order = np.argsort(bins, kind="stable")
    cells, starts = np.unique(bins[order], return_index=True)
    return order, starts, cells, 1 - frac[order]


def _smooth_rows(confidence: np.ndarray, values: np.ndarray, sigma: float) -> np.ndarray:
    """relplot's ReflectedGaussianKernel(sigma).apply(confidence, v, mesh) for every row v of values (b, n): the
    values split onto relplot's grid, then smoothed (_smooth_apply)."""
    g = _smooth_mesh(sigma)[0]
    order, starts, cells, left_share = _grid_split(confidence, g)
    v = values[:, order]
    grid = np.zeros((len(values), g))
    grid[:, cells] += np.add.reduceat(v * left_share, starts, axis=1)
    grid[:, cells + 1] += np.add.reduceat(v * (1 - left_share), starts, axis=1)
    return _smooth_apply(grid, sigma)


def _image_operator(confidence: np.ndarray, sigma: float) -> np.ndarray:
    """(n, mesh) float32: row i is what image i's unit value adds to the smoothed values at the mesh."""
    g = _smooth_mesh(sigma)[0]
    bins = (confidence * (g - 1)).astype(int).clip(0, g - 2)
    frac = confidence * (g - 1) - bins
    operator = _smooth_operator(sigma)
    return (operator[:, bins] * (1 - frac) + operator[:, bins + 1] * frac).T.astype(np.float32)


def _row_chunks(b: int, width: int, elements: int = 2_000_000):
    step = max(1, elements // max(width, 1))
    return [slice(i, min(i + step, b)) for i in range(0, b, step)]


def smooth_ece_at(
    confidence: np.ndarray, correct: np.ndarray, sigma: float, weights: np.ndarray | None = None
) -> float | np.ndarray:
    """Smooth ECE at a fixed bandwidth `sigma` (relplot.smECE_sigma). Float, or (B,) with weights (for more than
    one resample the kernel product runs in single precision: relative error ~1e-6)."""
    c = np.asarray(confidence, dtype=float).ravel()
    y = np.asarray(correct, dtype=float).ravel()
    w, scalar = _weights(weights, len(c))
    value = np.empty(len(w))
    g, _, _, inds, _ = _smooth_mesh(sigma)
    by_matrix = len(w) > 1 and len(inds) * g <= 4_000_000
    if by_matrix:
        # relplot's Σ_t |num_t / dens_t| dens_t / Σ_t dens_t is Σ_t |num_t| / Σ_t dens_t (dens_t > 0 with its eps):
        # a matrix-vector product for the densities, and one product for the smoothed residuals of every resample:
        # from the images (n, mesh), or, when fewer grid points are used than there are images, from the residuals
        # first split onto the grid (a sparse product) and then smoothed (used grid points, mesh)
        operator = _smooth_operator(sigma)
        bins = (c * (g - 1)).astype(int).clip(0, g - 2)
        frac = c * (g - 1) - bins
        cols, where = np.unique(np.r_[bins, bins + 1], return_inverse=True)
        from scipy import sparse

        split = sparse.csr_matrix(
            (np.r_[(1 - frac) * (c - y), frac * (c - y)], (np.r_[np.arange(len(c)), np.arange(len(c))], where)),
            shape=(len(c), len(cols)),
        )
        on_grid = len(cols) < len(c)
        smoother = (operator[:, cols].T if on_grid else _image_operator(c, sigma) * (c - y)[:, None]).astype(np.float32)
        column_mass = operator.sum(axis=0)
        mass = (1 - frac) * column_mass[bins] + frac * column_mass[bins + 1]
        mesh = operator.shape[0]
    for part in _row_chunks(len(w), len(c)):
        if by_matrix:
            rows = np.asarray((split.T @ w[part].T).T) if on_grid else w[part]
            num = np.abs(rows.astype(np.float32) @ smoother).sum(axis=1, dtype=float)
            value[part] = num / (w[part] @ mass + mesh * _SMECE_DENSITY_EPS)
            continue
        num, dens = np.split(_smooth_rows(c, np.concatenate([w[part] * (c - y), w[part]]), sigma), 2)
        dens = dens + _SMECE_DENSITY_EPS
        value[part] = (np.abs(num / dens) * dens).sum(axis=1) / dens.sum(axis=1)
    return _result(value, scalar)


def smooth_ece_bandwidth(confidence: np.ndarray, correct: np.ndarray, *, eps: float = 0.001) -> float:
    """σ* of smooth ECE: relplot's bisection (10 steps from 1) for the smallest σ with σ < smECE_σ."""

    def fits(sigma: float) -> bool:
        return bool(sigma < eps or sigma < smooth_ece_at(confidence, correct, sigma))

    if fits(1.0):
        return 1.0
    start, end = 1.0, 0.0
    for _ in range(10):
        mid = (start + end) / 2
        if fits(mid):
            end = mid
        else:
            start = mid
    return start


def smooth_ece(
    confidence: np.ndarray, correct: np.ndarray, weights: np.ndarray | None = None, *, sigma: float | None = None
) -> float | np.ndarray:
    """Smooth ECE (Błasiok & Nakkiran 2023; module docstring), equal to `relplot.smECE(confidence, correct)`.

    With `weights` (B, n) every resample gets the bandwidth σ* of the full sample (chosen once, as a kernel bandwidth
    usually is in a bootstrap; pass `sigma` to fix another), so B values cost one matrix product. Without weights,
    σ* is searched as relplot searches it unless `sigma` is given.
    """
    c = np.asarray(confidence, dtype=float).ravel()
    y = np.asarray(correct, dtype=float).ravel()
    if len(c) == 0:
        return float("nan")
    if sigma is None:
        sigma = smooth_ece_bandwidth(c, y)
    return smooth_ece_at(c, y, sigma, weights)


# --- every measure of one model at once ------------------------------------------------------------------------------
MODEL_MEASURES = (
    *SOFT_LABEL_MEASURES,
    "accuracy",
    "entropy_pearson",
    "entropy_spearman",
    "ece_equal_width",
    "ece_equal_mass",
    "smooth_ece",
)


def model_measures(
    prob: np.ndarray,
    ratings: np.ndarray,
    correct: np.ndarray,
    *,
    confidence: np.ndarray | None = None,
    n_bins: int = 15,
    weights: np.ndarray | None = None,
    sigma: float | None = None,
    chunk: int = 500,
) -> dict[str, float | np.ndarray]:
    """Every measure of one model on n images (MODEL_MEASURES), for the images as they are or for B resamples at
    once (`weights` (B, n), in chunks of `chunk` resamples): the soft-label measures' means over the rated images,
    accuracy (mean of `correct`), the entropy correlation, and top-label calibration of `confidence` (default: the
    probability of the predicted class, max(p, 1 - p) for a binary event) against `correct` — equal-width and
    equal-mass ECE over `n_bins` bins, and smooth ECE at `sigma` (default: the images' own σ*, kept for every
    resample). Floats, or (B,) arrays with weights."""
    p = np.asarray(prob, dtype=float)
    y = np.asarray(correct, dtype=float).ravel()
    if confidence is None:
        confidence = np.maximum(p, 1 - p) if p.ndim == 1 else p.max(axis=-1)
    c = np.asarray(confidence, dtype=float).ravel()
    per_image = soft_label_measures(p, ratings)
    stacked = np.stack([per_image[k] for k in SOFT_LABEL_MEASURES] + [y], axis=1)  # (n, measures)
    finite = np.isfinite(stacked)
    filled = np.where(finite, stacked, 0.0)
    if sigma is None:
        sigma = smooth_ece_bandwidth(c, y)
    w, scalar = _weights(weights, len(y))
    out = {k: np.empty(len(w)) for k in MODEL_MEASURES}
    for start in range(0, len(w), chunk):
        part = slice(start, min(start + chunk, len(w)))
        wp = w[part]
        with np.errstate(invalid="ignore", divide="ignore"):
            means = (wp @ filled) / (wp @ finite.astype(float))
        for j, name in enumerate((*SOFT_LABEL_MEASURES, "accuracy")):
            out[name][part] = means[:, j]
        corr = entropy_correlation(p, ratings, weights=wp)
        out["entropy_pearson"][part] = corr["pearson"]
        out["entropy_spearman"][part] = corr["spearman"]
        out["ece_equal_width"][part] = ece_equal_width(c, y, n_bins, wp)
        out["ece_equal_mass"][part] = ece_equal_mass(c, y, n_bins, wp)
        out["smooth_ece"][part] = smooth_ece_at(c, y, sigma, wp)
    return {k: _result(v, scalar) for k, v in out.items()}
