"""Confidence intervals for every number of a table: bootstrap over images (and over raters within an image), paired
comparisons against a baseline row with Holm's correction, and the one way an interval is written.

The bootstrap (Efron & Tibshirani 1993, "An Introduction to the Bootstrap", ch. 13-14 and 16):

- One index matrix per table (`image_resamples`): B rows of n image indices drawn with replacement (within each
  stratum, if given), seeded by `intervals.seed`. Every measure and every row of the table is computed
  on the same resamples, so paired differences between rows are differences on the same images.
- `interval`: the statistic on the original images is the point; the percentile interval is the (1 - level)/2 and
  (1 + level)/2 quantiles of its B resampled values; BCa (ch. 14.3) corrects them for bias (the share of resampled
  values below the point) and acceleration (from the jackknife over images), at the cost of n more evaluations.
- `rater_resamples`: for numbers that depend on people, each (resampled) image's ratings are resampled over its own
  raters with replacement, so the interval covers which raters happened to rate the image as well as which images
  were drawn (a two-stage bootstrap; Field & Welsh 2007 for crossed designs).
- `paired_test`: the difference a - b on the same resamples; its interval, and the two-sided p-value that the
  percentile interval inverts: p = 2 min(1 + #{d*_b <= 0}, 1 + #{d*_b >= 0}) / (B + 1), so a row is marked
  (p < 1 - level) exactly when its percentile interval of the difference excludes 0.
- `holm`: Holm's (1979) step-down adjusted p-values over a table's rows.
- `bias_adjusted_from`: for a measure the resampling itself biases (binned ECE, the authors' batched ECE, smooth
  ECE: duplicated images fill bins unevenly, so every resampled value sits above the point), the percentile interval
  of the resampled values less their bootstrap bias (mean of the resampled values − point; Efron & Tibshirani 1993
  §10.2). It is the interval of the measured value at this number of images, centred where the point is, so it
  contains its estimate; the bias itself is reported beside it (point − bias is the debiased estimate). A percentile
  or BCa interval cannot do this: when every resampled value lies above the point, both end above it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import polars as pl

from squidflow.config.validation import defaults_from_schema, schema_key

METHODS = tuple(schema_key("intervals.method")["enum"])  # the schema's bounds, checked where a test builds one too
MIN_RESAMPLES = schema_key("intervals.resamples")["minimum"]
BIAS_ADJUSTED = "bias-adjusted percentile"  # the method of every measure in a BIASED set (bias_adjusted_from)
CHUNK_ELEMENTS = 4_000_000  # index entries per chunk of resamples: bounds the memory a statistic may use


@dataclass(frozen=True)
@defaults_from_schema("intervals")
class IntervalConfig:
    """The `intervals` config section: `level` (e.g. 0.95), `resamples` (B), `seed`, `method`."""

    level: float
    resamples: int
    seed: int
    method: str

    def __post_init__(self):
        if not 0 < self.level < 1:
            raise ValueError(f"intervals.level = {self.level}: must be between 0 and 1")
        if self.resamples < MIN_RESAMPLES:
            raise ValueError(f"intervals.resamples = {self.resamples}: must be at least {MIN_RESAMPLES}")
        if self.method not in METHODS:
            raise ValueError(f"intervals.method = {self.method!r}: must be one of {METHODS}")

    @classmethod
    def from_config(cls, section: Mapping) -> IntervalConfig:
        """From the `intervals` mapping (keys level, resamples, seed, method; defaults in the schema)."""
        return cls(
            level=float(section["level"]),
            resamples=int(section["resamples"]),
            seed=int(section["seed"]),
            method=str(section["method"]),
        )


def _rng(cfg: IntervalConfig, stream: int) -> np.random.Generator:
    return np.random.default_rng([cfg.seed, stream])


def image_resamples(n: int, cfg: IntervalConfig, *, strata: np.ndarray | None = None) -> np.ndarray:
    """(B, n) int index matrix: each row n images drawn with replacement (within each stratum when `strata`, an
    (n,) label per image, is given, so every resample keeps the strata's sizes). Row b, column j: which image."""
    rng = _rng(cfg, 0)
    if strata is None:
        return rng.integers(0, n, size=(cfg.resamples, n)) if n else np.zeros((cfg.resamples, 0), dtype=np.int64)
    strata = np.asarray(strata)
    if len(strata) != n:
        raise ValueError(f"strata has {len(strata)} labels for {n} images")
    index = np.empty((cfg.resamples, n), dtype=np.int64)
    for label in np.unique(strata):
        members = np.flatnonzero(strata == label)
        index[:, members] = members[rng.integers(0, len(members), size=(cfg.resamples, len(members)))]
    return index


def image_resample_blocks(n: int, cfg: IntervalConfig, rows: int) -> Iterator[np.ndarray]:
    """image_resamples(n, cfg) (without strata) `rows` resamples at a time, in order: the same draws (one generator
    drawn in order gives the same numbers in blocks as in one matrix), for a statistic whose B × n arrays are too
    large to hold whole (Table 7 at 60,000 images: 480 MB of indices, and as much again for each array of counts)."""
    rng = _rng(cfg, 0)
    for start in range(0, cfg.resamples, max(rows, 1)):
        size = (min(max(rows, 1), cfg.resamples - start), n)
        yield rng.integers(0, n, size=size) if n else np.zeros(size, dtype=np.int64)


def counts(index: np.ndarray, n: int) -> np.ndarray:
    """(B, n) index matrix -> (B, n) bootstrap counts: how often each image is drawn in each resample (the `weights`
    that squidflow.evaluation.uncertainty's measures take)."""
    index = np.asarray(index, dtype=np.int64)
    flat = (np.arange(len(index), dtype=np.int64)[:, None] * n + index).ravel()
    return np.bincount(flat, minlength=len(index) * n).reshape(len(index), n).astype(float)


def rater_resamples(
    ratings: np.ndarray, cfg: IntervalConfig, index: np.ndarray, *, replace: bool = False
) -> np.ndarray:
    """(n, R) ratings with NaN, (B, n) image index -> (B, n, R): row b holds image index[b, j]'s ratings, redrawn
    over that image's own raters (as many as it has ratings, NaN after them).

    `replace=False` (default) permutes each image's raters: the second stage of Davison & Hinkley's (1997, §3.8)
    two-stage bootstrap, which draws the clusters (images) with replacement and the units within them without;
    measures symmetric in an image's raters (the soft label, α, κ) do not change, position-pair ones (Table 7's
    Spearman) do. `replace=True` redraws the raters with replacement: with three raters most images then pair a
    rater with a copy of themselves, which inflates agreement and adds noise to the soft label (every divergence
    biased upward), so intervals from it are wider than the truth and need not contain the point value.
    """
    r = np.asarray(ratings, dtype=float)
    index = np.asarray(index)
    rated = ~np.isnan(r)
    k = rated.sum(axis=1)
    # each image's ratings first, NaN after
    packed = np.take_along_axis(r, np.argsort(~rated, axis=1, kind="stable"), axis=1)
    rng = _rng(cfg, 1)
    u = rng.random((*index.shape, r.shape[1]))
    k_drawn = k[index][..., None]
    valid = np.arange(r.shape[1]) < k_drawn
    if replace:
        draw = (u * k_drawn).astype(np.int64)
    else:  # a random permutation of the first k positions: sort random keys, the padding last
        draw = np.argsort(np.where(valid, u, 2.0), axis=-1)
    out = np.take_along_axis(packed[index], draw, axis=-1)
    return np.where(valid, out, np.nan)


def _chunks(b: int, n: int):
    step = max(1, CHUNK_ELEMENTS // max(n, 1))
    for start in range(0, b, step):
        yield slice(start, min(start + step, b))


def replicates(stat: Callable[[np.ndarray], np.ndarray], index: np.ndarray) -> np.ndarray:
    """The statistic on every row of `index`, in chunks of rows (stat maps a (b, n) index matrix to b values)."""
    index = np.asarray(index)
    out = [np.asarray(stat(index[s]), dtype=float).reshape(-1) for s in _chunks(len(index), index.shape[1])]
    return np.concatenate(out) if out else np.zeros(0)


def _jackknife(stat: Callable[[np.ndarray], np.ndarray], n: int) -> np.ndarray:
    keep = ~np.eye(n, dtype=bool)
    index = np.broadcast_to(np.arange(n), (n, n))[keep].reshape(n, n - 1)
    return replicates(stat, index)


def interval_from(
    point: float, values: np.ndarray, cfg: IntervalConfig, *, jackknife: np.ndarray | None = None
) -> tuple[float, float, float]:
    """(point, lo, hi) from the B resampled values (NaN ones dropped): percentile, or BCa given the jackknife values."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if not np.isfinite(point) or len(values) == 0:
        return float(point), float("nan"), float("nan")
    alpha = (1 - cfg.level) / 2
    quantiles = np.array([alpha, 1 - alpha])
    if cfg.method == "bca" and jackknife is not None:
        jack = np.asarray(jackknife, dtype=float)
        jack = jack[np.isfinite(jack)]
        share = (np.sum(values < point) + 0.5 * np.sum(values == point)) / len(values)
        normal = NormalDist()
        z0 = normal.inv_cdf(float(np.clip(share, 1 / (2 * len(values)), 1 - 1 / (2 * len(values)))))
        d = jack.mean() - jack
        denom = 6 * (d**2).sum() ** 1.5
        accel = (d**3).sum() / denom if denom > 0 else 0.0
        quantiles = np.array(
            [normal.cdf(z0 + (z0 + z) / (1 - accel * (z0 + z))) for z in (normal.inv_cdf(q) for q in quantiles)]
        )
    lo, hi = np.quantile(values, quantiles)
    return float(point), float(lo), float(hi)


def bias_adjusted_from(point: float, values: np.ndarray, cfg: IntervalConfig) -> tuple[float, float, float, float]:
    """(point, lo, hi, bias) for a measure the resampling biases (module docstring): bias = mean of the B resampled
    values − point, [lo, hi] = the (1 ∓ level)/2 quantiles of the resampled values − bias."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if not np.isfinite(point) or len(values) == 0:
        return float(point), float("nan"), float("nan"), float("nan")
    bias = float(values.mean() - point)
    alpha = (1 - cfg.level) / 2
    lo, hi = np.quantile(values - bias, [alpha, 1 - alpha])
    return float(point), float(lo), float(hi), bias


def method_of(measure: str, biased: tuple[str, ...], cfg: IntervalConfig) -> str:
    """The interval method a measure gets: BIAS_ADJUSTED for the measures in `biased`, else `cfg.method`."""
    return BIAS_ADJUSTED if measure in biased else cfg.method


def interval(
    stat: Callable[[np.ndarray], np.ndarray], n: int, cfg: IntervalConfig, *, index: np.ndarray | None = None
) -> tuple[float, float, float]:
    """(point, lo, hi) of a statistic over n images: `stat` maps a (b, n) index matrix to b values; the point is
    stat on the images as they are, the interval from the rows of `index` (default: image_resamples(n, cfg))."""
    index = image_resamples(n, cfg) if index is None else np.asarray(index)
    point = float(np.asarray(stat(np.arange(n)[None]), dtype=float).reshape(-1)[0])
    jack = _jackknife(stat, n) if cfg.method == "bca" and n > 1 else None
    return interval_from(point, replicates(stat, index), cfg, jackknife=jack)


def _nanmean_rows(values: np.ndarray):
    v = np.asarray(values, dtype=float)

    def stat(idx: np.ndarray) -> np.ndarray:
        x = v[idx]
        with np.errstate(invalid="ignore"):
            return np.nanmean(x, axis=-1) if np.isnan(x).any() else x.mean(axis=-1)

    return stat


def mean_interval(
    values: np.ndarray, cfg: IntervalConfig, index: np.ndarray | None = None
) -> tuple[float, float, float]:
    """Per-image values (NaN = no value) -> (mean, lo, hi), the mean over the images that have a value."""
    values = np.asarray(values, dtype=float)
    return interval(_nanmean_rows(values), len(values), cfg, index=index)


def paired_test(
    stat_a: Callable[[np.ndarray], np.ndarray],
    stat_b: Callable[[np.ndarray], np.ndarray],
    n: int,
    cfg: IntervalConfig,
    index: np.ndarray | None = None,
) -> dict[str, float]:
    """Paired bootstrap of a - b on the same resampled images: diff (on the images as they are), lo, hi (interval
    of the difference, `cfg.method`) and p_value (two-sided, the percentile interval inverted: bootstrap_p_value)."""
    index = image_resamples(n, cfg) if index is None else np.asarray(index)

    def diff_stat(idx: np.ndarray) -> np.ndarray:
        return np.asarray(stat_a(idx), dtype=float) - np.asarray(stat_b(idx), dtype=float)

    diff = float(np.asarray(diff_stat(np.arange(n)[None]), dtype=float).reshape(-1)[0])
    values = replicates(diff_stat, index)
    jack = _jackknife(diff_stat, n) if cfg.method == "bca" and n > 1 else None
    _, lo, hi = interval_from(diff, values, cfg, jackknife=jack)
    return {"diff": diff, "lo": lo, "hi": hi, "p_value": bootstrap_p_value(diff, values)}


def bootstrap_p_value(observed: float, values: np.ndarray) -> float:
    """Two-sided p-value of H0 "no difference" from B resampled differences, the one the percentile interval
    inverts (Efron & Tibshirani 1993, §16.4 and §15.4): p = 2 min(1 + #{d* <= 0}, 1 + #{d* >= 0}) / (B + 1), capped
    at 1, so p < 1 - level exactly when the percentile interval excludes 0 (up to the quantiles' interpolation)."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if not np.isfinite(observed) or len(values) == 0:
        return float("nan")
    tail = min(np.sum(values <= 0), np.sum(values >= 0))
    return float(min(1.0, 2 * (1 + tail) / (len(values) + 1)))


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (NaN stays NaN and does not count): the k-th smallest of m p-values
    becomes max over j <= k of min(1, (m - j + 1) p_(j))."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    if len(ok) == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    m = len(order)
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out[order] = adjusted
    return out


def format_interval(value: float | None, lo: float | None, hi: float | None, digits: int = 2) -> str:
    """ "0.61 [0.57, 0.65]"; the value alone when the interval is missing, "–" when the value is."""
    if value is None or not np.isfinite(value):
        return "–"
    if lo is None or hi is None or not (np.isfinite(lo) and np.isfinite(hi)):
        return f"{value:.{digits}f}"
    return f"{value:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def intervals_table(
    values: Mapping[str, np.ndarray], cfg: IntervalConfig, index: np.ndarray | None = None
) -> pl.DataFrame:
    """{measure: per-image values} -> long table measure, value, lo, hi: each measure's mean with its interval, all
    measures on the same resamples (one index matrix)."""
    names = list(values)
    if not names:
        return pl.DataFrame(schema={"measure": pl.Utf8, "value": pl.Float64, "lo": pl.Float64, "hi": pl.Float64})
    stacked = np.stack([np.asarray(values[k], dtype=float) for k in names])  # (m, n)
    n = stacked.shape[1]
    index = image_resamples(n, cfg) if index is None else np.asarray(index)
    w = counts(index, n)
    finite = np.isfinite(stacked)
    filled = np.where(finite, stacked, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = (w @ filled.T) / (w @ finite.T.astype(float))  # (B, m)
        points = filled.sum(axis=1) / finite.sum(axis=1)
    rows = []
    for j, name in enumerate(names):
        jack = None
        if cfg.method == "bca" and n > 1:
            s, c = filled[j].sum(), finite[j].sum()
            with np.errstate(invalid="ignore", divide="ignore"):
                jack = (s - filled[j]) / (c - finite[j])
        point, lo, hi = interval_from(points[j], reps[:, j], cfg, jackknife=jack)
        rows.append({"measure": name, "value": point, "lo": lo, "hi": hi})
    return pl.DataFrame(rows, schema={"measure": pl.Utf8, "value": pl.Float64, "lo": pl.Float64, "hi": pl.Float64})


def item_mean_intervals(ratings: list[list[int]], cfg: IntervalConfig) -> tuple[np.ndarray, np.ndarray]:
    """Per item, the interval of its mean rating over its raters drawn with replacement (the
    same level, resamples, seed and percentile interval as the tables). Items with one rating get none (NaN).
    All items with n ratings at once: their resampled means from the resamples' counts (a matrix product: whole
    ratings sum exactly, so the same means as averaging the drawn ratings) and their percentiles along one axis, as
    interval_from takes them one item at a time, a block of items at a time; the next round's planning (issue 59)
    calls this every round."""
    lo = np.full(len(ratings), np.nan)
    hi = np.full(len(ratings), np.nan)
    by_n: dict[int, list[int]] = {}
    for i, r in enumerate(ratings):
        by_n.setdefault(len(r), []).append(i)
    alpha = (1 - cfg.level) / 2
    for n, rows in by_n.items():
        if n < 2:
            continue
        drawn = counts(image_resamples(n, cfg), n).T  # n × B: the same resamples for every item with n ratings
        # a block of items at a time (items × B values twice, for the product and the quantiles' sort: 2 GB at
        # 120,000 soft labels of three ratings, issue 61's scale curve)
        block = max(1, CHUNK_ELEMENTS // max(cfg.resamples, 1))
        for start in range(0, len(rows), block):
            at = rows[start : start + block]
            values = np.array([ratings[i] for i in at], dtype=float)  # items × n
            lo[at], hi[at] = np.quantile(values @ drawn / n, [alpha, 1 - alpha], axis=1)
    return lo, hi
