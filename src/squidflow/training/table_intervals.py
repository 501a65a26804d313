"""Intervals and paired comparisons of Tables 1, 3 and 9 (SQUID-E §5.1, §5.3, supplement D.4) from the runs'
per-image predictions.

Each cell of those tables is a measure of a run (squidflow.training.calibration.run_metrics) averaged over the run
seeds. Its interval is the percentile interval of that seed mean over bootstrap resamples of the evaluation images
(squidflow.statistics.intervals): one index matrix per evaluation set (SD, SE), drawn once per table and shared by
every method, seed and measure, so that every method is resampled on the same images. The seeds' spread stays
reported as the sample std of Table 1/3/9. The human means the measures compare with are held fixed (run
predictions carry only the mean judgment; the rater-resampled intervals are those of the soft-label table).

Paired comparisons: each method against the baseline row (the first configured method) on the same
resamples: the difference of the seed means, its interval and a two-sided paired-bootstrap p-value; the p-values
of one measure (and training set) are Holm-corrected over the methods.

Every measure is vectorised over the (B, n) index matrix, and at the identity index equals the run's metrics.json
value (tests check this): accuracies and means are ratios of sums over the resampled images; the top-label ECE is
Σ_bins |Σ (correct − confidence)| / n (squidflow.statistics.ece.binned_gap, its bins squidflow.statistics.ece's); the
authors' ECE keeps its shuffled batches of 16 (a fixed permutation of the resampled positions, the run's own at the
identity).

Both ECEs are biased by the resampling itself (a resample's duplicated images fill bins unevenly, and 16-image
batches make it worse: every resampled value can sit above the point), so their cells and paired differences get the
bias-adjusted percentile interval (squidflow.statistics.intervals.bias_adjusted_from: the resampled values less their
bootstrap bias, which contains its estimate) whatever `intervals.method` says, and the bias goes in the
table's `bias` column (diff_bias for the difference); `interval_method` names each row's method.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from squidflow.statistics.certainty import bernoulli_kl_per_image, certainty_bins
from squidflow.statistics.ece import equal_width_bin
from squidflow.statistics.intervals import (
    IntervalConfig,
    bias_adjusted_from,
    bootstrap_p_value,
    counts,
    holm,
    image_resamples,
    interval,
    interval_from,
    method_of,
    paired_test,
    replicates,
)

Stat = Callable[[np.ndarray], np.ndarray]


class WeightedStat:
    """A Stat (index (B, U) -> (B,)) that is a sum over images, so that `weighted` also takes the (B, U) bootstrap
    counts instead of the index (the same values, by one matrix product)."""

    def __init__(self, of_index: Stat, weighted: Stat):
        self.of_index, self.weighted = of_index, weighted

    def __call__(self, idx: np.ndarray) -> np.ndarray:
        return self.of_index(idx)


BIASED = ("ece", "ece_authors")  # measures whose intervals are bias-adjusted (module docstring)
EXTRA = ("lo", "hi", "bias", "diff", "diff_lo", "diff_hi", "diff_bias", "p_value")


@dataclass
class RunImages:
    """One run's evaluation images of one set, laid on the table's image list of that set (absent: present = 0)."""

    present: np.ndarray  # (U,) 1.0 where the run has the image
    correct: np.ndarray  # (U,) top-label correct
    confidence: np.ndarray  # (U,) top-label probability
    p0: np.ndarray  # (U,) probability of class 0 (the authors' ECE)
    p1: np.ndarray  # (U,) probability of class 1 (the target event in the calibration experiment)
    label: np.ndarray  # (U,) ground-truth class
    human: np.ndarray  # (U,) mean judgment 0..100, nan when none


def image_lists(runs: Mapping[tuple, pl.DataFrame]) -> dict[str, list[str]]:
    """Per evaluation set, the table's images: the first run's in its order (the order its
    metrics were computed in: the authors' batched ECE depends on it), then any others'."""
    out: dict[str, list[str]] = {}
    for run in runs.values():
        for eval_set, group in run.group_by("eval_set", maintain_order=True):
            ids = out.setdefault(eval_set[0], [])
            seen = set(ids)
            ids.extend(i for i in group["image_id"].to_list() if i not in seen)
    return out


def run_images(run: pl.DataFrame, eval_set: str, ids: Sequence[str]) -> RunImages:
    rows = run.filter(pl.col("eval_set") == eval_set)
    pos = {i: k for k, i in enumerate(ids)}
    at = np.asarray([pos[i] for i in rows["image_id"].to_list()], dtype=int)
    u = len(ids)
    probs = np.asarray(rows["probs"].to_list(), dtype=float).reshape(len(rows), -1)
    present, correct, confidence, p0, p1, label = (np.zeros(u) for _ in range(6))
    out = RunImages(present, correct, confidence, p0, p1, label, human=np.full(u, np.nan))
    if len(rows) == 0:
        return out
    labels = rows["label"].to_numpy()
    out.present[at] = 1.0
    out.correct[at] = (probs.argmax(axis=1) == labels).astype(float)
    out.confidence[at] = probs.max(axis=1)
    out.p0[at] = probs[:, 0]
    out.p1[at] = probs[:, 1] if probs.shape[1] > 1 else 1 - probs[:, 0]
    out.label[at] = labels
    out.human[at] = rows["human_mean"].fill_null(float("nan")).to_numpy().astype(float)
    return out


# --- vectorised measures: index (B, U) -> (B,) ---------------------------------------------------------------------
def _divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def ratio(num: np.ndarray, den: np.ndarray) -> Stat:
    """Σ num / Σ den over the resampled images (nan where Σ den = 0). Its `weighted` form takes the (B, U) bootstrap
    counts instead of the index (the same values, by one matrix product)."""

    def stat(idx: np.ndarray) -> np.ndarray:
        return _divide(num[idx].sum(axis=1), den[idx].sum(axis=1))

    return WeightedStat(stat, lambda w: _divide(w @ num, w @ den))


def resampled_binned_gap(confidence: np.ndarray, outcome: np.ndarray, weight: np.ndarray, n_bins: int) -> Stat:
    """Σ over equal-width bins of |Σ w (outcome − confidence)| / Σ w: the binned calibration gap of
    squidflow.statistics.ece.binned_gap, resampled (its bins: squidflow.statistics.ece.equal_width_bin)."""
    bin_of = equal_width_bin(confidence, n_bins)
    parts = [weight * (bin_of == b) * (outcome - confidence) for b in range(n_bins)]

    def stat(idx: np.ndarray) -> np.ndarray:
        return _divide(sum(np.abs(p[idx].sum(axis=1)) for p in parts), weight[idx].sum(axis=1))

    return WeightedStat(stat, lambda w: _divide(np.abs(w @ np.stack(parts, axis=1)).sum(axis=1), w @ weight))


def authors_gap(
    p0: np.ndarray, label: np.ndarray, weight: np.ndarray, *, n_bins: int, batch_size: int, seed: int
) -> Stat:
    """The authors' ECE (calibration.authors_calibration_error) of a resample: its images in a fixed shuffled order
    (the permutation of the run's seed), batches of `batch_size`, each batch's binary binned gap, mean over batches."""
    u = len(p0)
    perm = np.random.default_rng(seed).permutation(u)
    n_batches = -(-u // batch_size)
    pad = n_batches * batch_size - u
    bin_of = equal_width_bin(p0, n_bins)

    def stat(idx: np.ndarray) -> np.ndarray:
        order = idx[:, perm]
        if pad:
            order = np.concatenate([order, np.full((len(idx), pad), -1)], axis=1)
        valid = order >= 0
        safe = np.where(valid, order, 0)
        w = np.where(valid, weight[safe], 0.0).reshape(len(idx), n_batches, batch_size)
        diff = (label[safe] - p0[safe]).reshape(w.shape)
        bins = bin_of[safe].reshape(w.shape)
        n_in = w.sum(axis=2)
        gap = sum(np.abs((w * (bins == b) * diff).sum(axis=2)) for b in range(n_bins))
        with np.errstate(invalid="ignore", divide="ignore"):
            per_batch = np.where(n_in > 0, gap / np.where(n_in > 0, n_in, 1), np.nan)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nanmean(per_batch, axis=1)

    return stat


def metric_stat(
    metric: str,
    sd: RunImages | None,
    se: RunImages | None,
    *,
    ece_bins: int,
    kl_eps: float,
    authors_ece_bins: int,
    authors_ece_batch: int,
    seed: int,
) -> tuple[str, Stat] | None:
    """(evaluation set, statistic) of one run_metrics measure; None where the run has no such images."""
    if metric == "sd_acc":
        return None if sd is None else ("SD", ratio(sd.correct * sd.present, sd.present))
    if se is None:
        return None
    judged = se.present * ~np.isnan(se.human)
    if metric == "se_acc":
        return "SE", ratio(se.correct * se.present, se.present)
    if metric == "avg_acc":
        return "SE", ratio(se.correct * judged, judged)
    if metric.startswith("acc_"):
        member = judged * (certainty_bins(np.nan_to_num(se.human)) == metric[4:])
        return "SE", ratio(se.correct * member, member)
    if metric == "huj_mse":
        return "SE", ratio((se.p1 - np.nan_to_num(se.human) / 100.0) ** 2 * judged, judged)
    if metric == "kl":
        return "SE", ratio(bernoulli_kl_per_image(se.p1, np.nan_to_num(se.human), kl_eps) * judged, judged)
    if metric == "ece":
        return "SE", resampled_binned_gap(se.confidence, se.correct, se.present, ece_bins)
    if metric == "ece_authors":
        return "SE", authors_gap(
            se.p0, se.label, se.present, n_bins=authors_ece_bins, batch_size=authors_ece_batch, seed=seed
        )
    raise ValueError(f"no resampled form of the measure {metric!r}")


def seed_mean(stats: list[Stat]) -> Stat:
    """The mean over seeds of the seeds' statistics on the same resampled images (a seed's nan is left out)."""

    def stat(idx: np.ndarray) -> np.ndarray:
        values = np.stack([s(idx) for s in stats])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a resample where every seed is undefined: nan
            return np.nanmean(values, axis=0)

    summed = [s for s in stats if isinstance(s, WeightedStat)]
    if len(summed) == len(stats):

        def weighted(w: np.ndarray) -> np.ndarray:
            values = np.stack([s.weighted(w) for s in summed])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                return np.nanmean(values, axis=0)

        return WeightedStat(stat, weighted)
    return stat


def add_intervals(
    table: pl.DataFrame,
    runs: Mapping[tuple[str, str, int], pl.DataFrame],
    metrics: Sequence[str],
    method_order: Sequence[str],
    cfg: IntervalConfig,
    *,
    ece_bins: int = 10,
    kl_eps: float = 1e-6,
    authors_ece_bins: int = 5,
    authors_ece_batch: int = 16,
    grouped: bool = True,
) -> pl.DataFrame:
    """table (RESULT_TABLE rows of squidflow.training.tables.aggregate_runs) + each run's predictions
    ((train_set, method, seed) -> schemas.RUN_PREDICTIONS frame) -> the same rows with lo, hi (the image-bootstrap
    interval of the seed mean) and, against the baseline row, diff, diff_lo, diff_hi, p_value, p_holm.

    grouped (Tables 3, 9): the baseline is the first of `method_order` within each training set; otherwise (Table 1)
    the first row of the table's method order, whatever its training set (every method sees the same images)."""
    ids = image_lists(runs)
    index = {
        s: image_resamples(len(v), IntervalConfig(cfg.level, cfg.resamples, cfg.seed + k, cfg.method))
        for k, (s, v) in enumerate(sorted(ids.items()))
    }
    by_cell: dict[tuple[str, str], list[tuple[int, pl.DataFrame]]] = {}
    for (train_set, method, seed), run in runs.items():
        by_cell.setdefault((train_set, method), []).append((seed, run))
    options = {
        "ece_bins": ece_bins,
        "kl_eps": kl_eps,
        "authors_ece_bins": authors_ece_bins,
        "authors_ece_batch": authors_ece_batch,
    }
    cells = _cell_stats(by_cell, ids, metrics, options)
    baseline_of = _baselines(by_cell, method_order, grouped)
    replicated = _Replicates(cells, ids, index)
    rows = []
    for r in table.iter_rows(named=True):
        key = (r["train_set"], r["method"], r["metric"])
        extra: dict = dict.fromkeys(EXTRA)
        extra["interval_method"] = None
        if key in cells and r["mean"] is not None:
            base_key = (*baseline_of[(r["train_set"], r["method"])], r["metric"])
            compare = base_key[:2] != (r["train_set"], r["method"]) and base_key in cells
            extra.update(_row_intervals(key, base_key if compare else None, replicated, cfg))
        rows.append({**r, **extra})
    out = pl.DataFrame(rows, schema={**table.schema, **dict.fromkeys(EXTRA, pl.Float64), "interval_method": pl.Utf8})
    return with_holm(out, grouped)


def _cell_stats(
    by_cell: Mapping[tuple[str, str], list[tuple[int, pl.DataFrame]]],
    ids: Mapping[str, list],
    metrics: Sequence[str],
    options: Mapping,
) -> dict[tuple[str, str, str], tuple[str, Stat]]:
    """(train_set, method, metric) -> (the evaluation set it is measured on, the seed mean of its statistic)."""
    cells: dict[tuple[str, str, str], tuple[str, Stat]] = {}
    for (train_set, method), seeds in by_cell.items():
        images = [{s: run_images(run, s, ids[s]) for s in ids} for _, run in seeds]
        for metric in metrics:
            found = [
                metric_stat(metric, im.get("SD"), im.get("SE"), seed=seed, **options)
                for (seed, _), im in zip(seeds, images, strict=True)
            ]
            measured = [f for f in found if f is not None]
            if measured:
                cells[(train_set, method, metric)] = (measured[0][0], seed_mean([f[1] for f in measured]))
    return cells


def _baselines(
    by_cell: Mapping[tuple[str, str], list], method_order: Sequence[str], grouped: bool
) -> dict[tuple[str, str], tuple[str | None, str | None]]:
    """(train_set, method) -> the (train_set, method) it is compared with (see add_intervals)."""
    methods = [m for m in method_order if any(k[1] == m for k in by_cell)]
    baseline_of: dict[tuple[str, str], tuple[str | None, str | None]] = {}
    for train_set, method in by_cell:
        if grouped:
            base = next((m for m in methods if (train_set, m) in by_cell), None)
            baseline_of[(train_set, method)] = (train_set, base)
        else:
            base_ts = next((t for t, m in by_cell if methods and m == methods[0]), None)
            baseline_of[(train_set, method)] = (base_ts, methods[0] if methods else None)
    return baseline_of


class _Replicates:
    """A cell's (point, B replicates), computed once and shared by its interval and every paired test."""

    def __init__(self, cells: Mapping, ids: Mapping[str, list], index: Mapping[str, np.ndarray]):
        self.cells, self.ids, self.index = cells, ids, index
        self.done: dict[tuple, tuple[float, np.ndarray]] = {}
        self.weights: dict[str, np.ndarray] = {}

    def __call__(self, key: tuple) -> tuple[float, np.ndarray]:
        if key not in self.done:
            eval_set, stat = self.cells[key]
            point = float(stat(np.arange(len(self.ids[eval_set]))[None])[0])
            if isinstance(stat, WeightedStat):  # a sum over images: one matrix product with the bootstrap counts
                if eval_set not in self.weights:
                    self.weights[eval_set] = counts(self.index[eval_set], len(self.ids[eval_set]))
                self.done[key] = point, stat.weighted(self.weights[eval_set])
            else:
                self.done[key] = point, replicates(stat, self.index[eval_set])
        return self.done[key]


def _row_intervals(key: tuple, base_key: tuple | None, replicated: _Replicates, cfg: IntervalConfig) -> dict:
    """One row's interval and, with a baseline (`base_key`), its paired comparison: the EXTRA columns."""
    eval_set, stat = replicated.cells[key]
    n = len(replicated.ids[eval_set])
    method = method_of(key[2], BIASED, cfg)
    extra: dict = {"bias": None, "diff_bias": None}
    test = {}
    if method != "bca":  # from the cached replicates: each statistic runs once per cell
        point, reps = replicated(key)
        if method == "percentile":
            _, lo, hi = interval_from(point, reps, cfg)
        else:
            _, lo, hi, extra["bias"] = bias_adjusted_from(point, reps, cfg)
        if base_key is not None:
            base_point, base_reps = replicated(base_key)
            diff, d_reps = point - base_point, reps - base_reps
            if method == "percentile":
                _, d_lo, d_hi = interval_from(diff, d_reps, cfg)
            else:
                _, d_lo, d_hi, extra["diff_bias"] = bias_adjusted_from(diff, d_reps, cfg)
            # the p-value of the bias-adjusted difference: the same test on the recentred replicates
            shift = extra["diff_bias"] or 0.0
            test = {"diff": diff, "lo": d_lo, "hi": d_hi, "p_value": bootstrap_p_value(diff, d_reps - shift)}
    else:  # BCa needs each statistic's jackknife
        _, lo, hi = interval(stat, n, cfg, index=replicated.index[eval_set])
        if base_key is not None:
            test = paired_test(stat, replicated.cells[base_key][1], n, cfg, index=replicated.index[eval_set])
    extra.update(lo=_num(lo), hi=_num(hi), interval_method=method)
    extra.update(
        bias=_num(extra["bias"]) if extra["bias"] is not None else None,
        diff_bias=_num(extra["diff_bias"]) if extra["diff_bias"] is not None else None,
    )
    if test:
        extra.update(
            diff=_num(test["diff"]), diff_lo=_num(test["lo"]), diff_hi=_num(test["hi"]), p_value=_num(test["p_value"])
        )
    return extra


def with_holm(table: pl.DataFrame, grouped: bool) -> pl.DataFrame:
    """p_holm: the p-values of one measure (per training set when grouped) Holm-corrected over the methods."""
    group = ["train_set", "metric"] if grouped else ["metric"]
    p_holm = np.full(len(table), np.nan)
    for _, part in table.with_row_index("_i").group_by(group, maintain_order=True):
        sel = part.filter(pl.col("p_value").is_not_null() & pl.col("p_value").is_not_nan())
        if len(sel):
            p_holm[sel["_i"].to_numpy()] = np.asarray(holm(sel["p_value"].to_numpy()), dtype=float)
    return table.with_columns(pl.Series("p_holm", p_holm).fill_nan(None))


def _num(v) -> float | None:
    v = float(v)
    return None if np.isnan(v) else v
