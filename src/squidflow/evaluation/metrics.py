"""The per-bin measures, computed one way for every model: accuracy at 1 and at k, MSE and KL against judgments.

- `hits`: per image, whether the top label (rank 1) is one of the image's correct labels, and whether any label
  ranked 1..k is (SQUID-E §5.2: "the top scoring verb as well as the top 10 scoring verbs").
- `accuracy_by_bin`: the share of correct data points per certainty bin and over all of them (`avg`: every data
  point of the binning, so with alt bins an image counts once per judgment); an empty bin has no accuracy (null)
  and n = 0.
- `probability_by_bin`: per bin, `squidflow.statistics.certainty.huj_mse` and `bernoulli_kl` of the model's probability of the
  judged event against mean judgment / 100.
"""

from __future__ import annotations

import logging
from typing import cast

import numpy as np
import polars as pl

from squidflow.statistics.certainty import AVERAGE, BINNINGS, CERTAINTY_BINS, bernoulli_kl, data_points, huj_mse
from squidflow.statistics.intervals import image_resamples, interval

log = logging.getLogger(__name__)

KEY = ["video_id", "frame_index"]


def hits(predictions: pl.DataFrame, targets: pl.DataFrame, k: int) -> pl.DataFrame:
    """targets (video_id, frame_index, [event,] targets: list of correct labels) + ranked predictions -> per image
    (and event) `top1`, `topk` (booleans). Images without any prediction are left out (the caller counts them)."""
    if k < 1:
        raise ValueError(f"top_k = {k}: must be at least 1")
    point = [*KEY, "event"] if "event" in targets.columns else KEY
    joined = predictions.select(*KEY, "rank", "label").join(
        targets.select(*point, "targets"), on=KEY, how="inner", maintain_order="left"
    )
    right = joined.with_columns(pl.col("label").is_in(pl.col("targets")).alias("_right"))
    return (
        right.group_by(point, maintain_order=True)
        .agg(
            (pl.col("_right") & (pl.col("rank") == 1)).any().alias("top1"),
            (pl.col("_right") & (pl.col("rank") <= k)).any().alias("topk"),
        )
        .sort(point)
    )


def accuracy_by_bin(points: pl.DataFrame, correct: str = "correct") -> pl.DataFrame:
    """points (bin, `correct`) -> bin, accuracy, n for the five bins in order, then `avg` over all points."""
    per_bin = points.group_by("bin", maintain_order=True).agg(
        pl.col(correct).cast(pl.Float64).mean().alias("accuracy"), pl.len().alias("n")
    )
    order = pl.DataFrame({"bin": [*CERTAINTY_BINS]})
    out = order.join(per_bin, on="bin", how="left", maintain_order="left").with_columns(pl.col("n").fill_null(0))
    avg = pl.DataFrame(
        {
            "bin": [AVERAGE],
            "accuracy": [float(cast(float, points[correct].cast(pl.Float64).mean())) if len(points) else None],
            "n": [len(points)],
        }
    )
    return pl.concat(
        [
            out.select("bin", "accuracy", pl.col("n").cast(pl.Int64)),
            avg.with_columns(pl.col("accuracy").cast(pl.Float64), pl.col("n").cast(pl.Int64)),
        ]
    )


def model_accuracy(
    predictions: pl.DataFrame, images: pl.DataFrame, *, model: str, top_k: int, intervals=None
) -> pl.DataFrame:
    """Tables 2 and 8 rows of one model (schemas.MODEL_ACCURACY): top-1 and top-k accuracy per bin, mean and alt.

    `images`: the judged images to score, one row each, with `targets` (correct labels), `certainty_bin` and
    `alt_bins` (squidflow.evaluation.judged.judged_images). With `intervals` (an IntervalConfig) every accuracy gets
    its bootstrap interval over the scored images (lo, hi; `accuracy_intervals`), else lo and hi are null.
    """
    point = [*KEY, "event"] if "event" in images.columns else KEY
    # sorted: the bootstrap draws positions in this frame, so its order is fixed by the images alone
    scored = images.join(hits(predictions, images, top_k), on=point, how="inner").sort(point)
    missing = len(images) - len(scored)
    if missing:
        log.warning("%s: %d of %d judged images have no prediction and are left out", model, missing, len(images))
    shallow = (
        predictions.group_by(KEY, maintain_order=True)
        .agg(pl.col("rank").max().alias("deepest"))
        .filter(pl.col("deepest") < top_k)
    )
    if len(shallow.join(images.select(KEY), on=KEY, how="semi", maintain_order="left")):
        log.warning(
            "%s: some images rank fewer than %d labels; top-%d accuracy counts the labels given", model, top_k, top_k
        )
    tops = [(1, "top1")] + ([(top_k, "topk")] if top_k != 1 else [])
    parts = []
    for binning in BINNINGS:
        points = data_points(scored, binning)
        for top, column in tops:
            parts.append(
                accuracy_by_bin(points, column).with_columns(
                    pl.lit(model).alias("model"),
                    pl.lit(top, dtype=pl.Int64).alias("top"),
                    pl.lit(binning).alias("binning"),
                )
            )
    out = pl.concat(parts).select("model", "top", "binning", "bin", "accuracy", "n")
    if intervals is None:
        return out.with_columns(pl.lit(None, dtype=pl.Float64).alias("lo"), pl.lit(None, dtype=pl.Float64).alias("hi"))
    return accuracy_intervals(out, scored, tops, intervals)


def accuracy_intervals(table: pl.DataFrame, scored: pl.DataFrame, tops: list[tuple[int, str]], cfg) -> pl.DataFrame:
    """lo, hi of every accuracy of `table`: the percentile interval over bootstrap resamples of the scored images
    (one index matrix for every bin, binning and top; an alt-binned image brings all its judgments along). The
    images' certainty bins (the people's judgments) are held fixed."""
    n = len(scored)
    index = image_resamples(n, cfg)
    bins = (*CERTAINTY_BINS, AVERAGE)
    mean_bin = scored["certainty_bin"].to_numpy()
    alt = scored["alt_bins"].to_list()
    counts = {
        "mean": {b: (mean_bin == b).astype(float) if b != AVERAGE else np.ones(n) for b in bins},
        "alt": {
            b: np.asarray([sum(x == b for x in a) if b != AVERAGE else len(a) for a in alt], dtype=float) for b in bins
        },
    }
    bounds: dict[tuple, tuple[float | None, float | None]] = {}
    for top, column in tops:
        correct = scored[column].cast(pl.Float64).to_numpy()
        for binning, per_bin in counts.items():
            for b, c in per_bin.items():
                num, den = c * correct, c
                if den.sum() == 0:
                    continue

                def stat(idx, num=num, den=den):
                    d = den[idx].sum(axis=1)
                    with np.errstate(invalid="ignore", divide="ignore"):
                        return np.where(d > 0, num[idx].sum(axis=1) / np.where(d > 0, d, 1), np.nan)

                _, lo, hi = interval(stat, n, cfg, index=index)
                bounds[(top, binning, b)] = (float(lo), float(hi))
    cell = [bounds.get((r["top"], r["binning"], r["bin"]), (None, None)) for r in table.iter_rows(named=True)]
    return table.with_columns(
        pl.Series("lo", [c[0] for c in cell], dtype=pl.Float64), pl.Series("hi", [c[1] for c in cell], dtype=pl.Float64)
    )


def probability_by_bin(points: pl.DataFrame, *, eps: float = 1e-6) -> pl.DataFrame:
    """points (bin, correct, human_mean 0..100, prob) -> per bin and `avg`: n, accuracy, mean_human (/100),
    mean_prob, mse, kl; an empty bin has n = 0 and nulls."""
    rows = []
    for b in (*CERTAINTY_BINS, AVERAGE):
        sel = points if b == AVERAGE else points.filter(pl.col("bin") == b)
        h, p = sel["human_mean"].to_numpy().astype(float), sel["prob"].to_numpy().astype(float)
        empty = len(sel) == 0
        rows.append(
            {
                "bin": b,
                "n": len(sel),
                "accuracy": None if empty else float(cast(float, sel["correct"].cast(pl.Float64).mean())),
                "mean_human": None if empty else float(np.mean(h) / 100.0),
                "mean_prob": None if empty else float(np.mean(p)),
                "mse": None if empty else huj_mse(p, h),
                "kl": None if empty else bernoulli_kl(p, h, eps),
            }
        )
    return pl.DataFrame(
        rows,
        schema={
            "bin": pl.Utf8,
            "n": pl.Int64,
            "accuracy": pl.Float64,
            "mean_human": pl.Float64,
            "mean_prob": pl.Float64,
            "mse": pl.Float64,
            "kl": pl.Float64,
        },
    )
