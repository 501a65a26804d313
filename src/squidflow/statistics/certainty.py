"""Certainty: which bin a human judgment falls in, and how far a model's probability is from the judgments.

SQUID-E partitions its images by human certainty into five bins of 20 points, 0-20, 20-40, 40-60, 60-80 and
80-100, the lower edge inclusive and 100 in the last bin (Tables 1, 2 and 8, and κ in Table 7). An image can be
binned two ways (SQUID-E supplement D.3):

- `mean`: by the mean of its judgments, one data point per image (Tables 1, 2 and the "mean" rows of Table 8);
- `alt`: every judgment on its own, so an image rated 10, 50, 90 is three data points in three bins (Basile et
  al.'s "every annotation is correct"; the "alt" rows of Table 8).

Every stage bins through this module (judgments' image scores, the training tables, the evaluation stage), so a
change of edges changes every table at once.

`huj_mse` and `bernoulli_kl` (the mean of `bernoulli_kl_per_image`) measure a model's probability of the judged
event against mean judgment / 100 (SQUID-E §5.3 "HUJ MSE"; supplement D.4 KL(human ‖ model) of Bernoulli
distributions, clipped to [eps, 1 - eps]); the training and the evaluation stage both report them.
"""

from __future__ import annotations

import numpy as np
import polars as pl

BIN_WIDTH = 20
CERTAINTY_BINS: tuple[str, ...] = ("0-20", "20-40", "40-60", "60-80", "80-100")
AVERAGE = "avg"  # the row of every data point, whatever its bin
BINNINGS = ("mean", "alt")


def certainty_bin(value: pl.Expr) -> pl.Expr:
    """A 0..100 judgment (or mean of judgments) -> its bin label, as a polars expression."""
    idx = (value / BIN_WIDTH).floor().clip(0, len(CERTAINTY_BINS) - 1).cast(pl.Int64)
    return idx.replace_strict(list(range(len(CERTAINTY_BINS))), list(CERTAINTY_BINS), return_dtype=pl.Utf8)


def certainty_bin_of(value: float) -> str:
    """One 0..100 judgment -> its bin label; a value outside 0..100 is an error (it is not a judgment)."""
    if not 0 <= value <= 100:
        raise ValueError(f"human judgment {value!r} is outside 0..100")
    return CERTAINTY_BINS[min(int(value // BIN_WIDTH), len(CERTAINTY_BINS) - 1)]


def certainty_bins(values: np.ndarray) -> np.ndarray:
    """Many 0..100 judgments -> their bin labels (numpy array of str); values outside 0..100 are an error."""
    values = np.asarray(values, dtype=float)
    bad = ~((values >= 0) & (values <= 100))
    if bad.any():
        raise ValueError(f"human judgment {values[bad][0]!r} is outside 0..100")
    idx = np.minimum((values // BIN_WIDTH).astype(int), len(CERTAINTY_BINS) - 1)
    return np.asarray(CERTAINTY_BINS, dtype=object)[idx] if len(values) else np.asarray([], dtype=object)


def data_points(images: pl.DataFrame, binning: str) -> pl.DataFrame:
    """The data points of one binning: the images' rows with a `bin` column.

    `images` has one row per image with `certainty_bin` (its mean's bin) and `alt_bins` (one bin per judgment, as in
    results/judgments/image_scores.parquet). `mean` keeps one row per image; `alt` repeats each image once per
    judgment, each row in that judgment's bin.
    """
    if binning == "mean":
        return images.with_columns(pl.col("certainty_bin").alias("bin"))
    if binning == "alt":
        return images.with_columns(pl.col("alt_bins").alias("bin")).explode("bin").filter(pl.col("bin").is_not_null())
    raise ValueError(f"binning {binning!r}: must be one of {BINNINGS}")


# --- probabilities against judgments -----------------------------------------------------------------------------
def huj_mse(prob: np.ndarray, human_mean: np.ndarray) -> float:
    """Mean squared error between the model's probability of the judged event and mean judgment / 100 (nan if empty)."""
    p, h = np.asarray(prob, dtype=float), np.asarray(human_mean, dtype=float) / 100.0
    if len(p) == 0:
        return float("nan")
    return float(np.mean((p - h) ** 2))


def bernoulli_kl_per_image(prob: np.ndarray, human_mean: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """KL(Bernoulli(human_mean / 100) ‖ Bernoulli(prob)) per image, both clipped to [eps, 1 - eps] so that a unanimous
    0 or 100 stays finite (SQUID-E supplement D.4); training's table intervals resample these per-image values."""
    q = np.clip(np.asarray(prob, dtype=float), eps, 1 - eps)
    h = np.clip(np.asarray(human_mean, dtype=float) / 100.0, eps, 1 - eps)
    return h * np.log(h / q) + (1 - h) * np.log((1 - h) / (1 - q))


def bernoulli_kl(prob: np.ndarray, human_mean: np.ndarray, eps: float = 1e-6) -> float:
    """Mean over images of KL(Bernoulli(human) ‖ Bernoulli(model)) (`bernoulli_kl_per_image`; nan if empty)."""
    if len(prob) == 0:
        return float("nan")
    return float(np.mean(bernoulli_kl_per_image(prob, human_mean, eps)))
