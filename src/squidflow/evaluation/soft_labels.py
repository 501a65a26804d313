"""The soft-label measures table: every model against the people with the uncertainty core, and the people
against themselves (results/tables/soft_label_measures.{csv,md,tex}; `squidflow evaluate` writes the same table).

Per model, from its predictions file (schemas.PREDICTIONS, scores read as probabilities) and the judged images of
`evaluation.variant` (squidflow.evaluation.judged):
- `prob`: the model's probability of the judged event = the sum of the scores of the event's labels
  (evaluation.label_map) among its ranked labels, clipped to [0, 1] (a label it does not rank counts 0);
- `confidence`, `correct`: the rank-1 score and whether the rank-1 label is one of the event's labels (top-label
  calibration);
- `ratings`: the image's first-round ratings of that prompt (0..100, NaN-padded), annotators excluded by the
  quality step dropped, as results/judgments/image_scores.parquet averages them.

Measures (definitions in squidflow.evaluation.uncertainty): the seven soft-label measures (mean over images),
the entropy correlation (Pearson, Spearman), top-label ECE with equal-width and equal-mass bins
(`evaluation.ece_bins`), smooth ECE, and the binary ECE of P(event) against the judged event being the image's own
event (1 for every variant A image; `evaluation.binary_ece_bins` equal-width bins, the SQUID-E authors' binary form). The
"people" row is the leave-one-rater-out ceiling (`people_ceiling`) of the soft-label measures.

Intervals (config `intervals`): a two-stage bootstrap, images drawn with replacement and each drawn image's
raters kept without replacement (Davison & Hinkley 1997, §3.8: redrawing an image's few raters with replacement
pairs raters with copies of themselves and adds noise to the soft label, which biases every divergence upward —
with three raters the percentile interval then need not even contain the point value). Every measure here is
symmetric in an image's raters, so the second stage changes nothing and the interval is the image bootstrap; in
this nested design (each image rated by its own raters) it carries the variation of the raters as well. One image
index matrix per model, all measures at once. The calibration errors (CALIBRATION: binned, smooth and binary ECE)
are biased upward on a resample, so theirs is the bias-adjusted percentile interval (squidflow.statistics.intervals.
bias_adjusted_from), which contains its estimate; the others follow `intervals.method`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from squidflow.evaluation import uncertainty as U
from squidflow.evaluation.labels import judged_events
from squidflow.evaluation.metrics import KEY, hits
from squidflow.presentation.table_format import latex_table, md_table, tex_escape, tex_row
from squidflow.statistics.intervals import (
    IntervalConfig,
    bias_adjusted_from,
    counts,
    image_resamples,
    interval_from,
    intervals_table,
    replicates,
)

SOFT = U.SOFT_LABEL_MEASURES
CORRELATIONS = ("entropy_pearson", "entropy_spearman")
CALIBRATION = ("ece_equal_width", "ece_equal_mass", "smooth_ece", "ece_binary")
MEASURES = (*SOFT, *CORRELATIONS, *CALIBRATION)
HEADERS = {
    "cross_entropy": "CE",
    "kl_human_model": "KL(h‖m)",
    "kl_model_human": "KL(m‖h)",
    "js_divergence": "JSD",
    "total_variation": "TV",
    "brier": "Brier",
    "wasserstein": "W1 (0–100)",
    "entropy_pearson": "H corr. (r)",
    "entropy_spearman": "H corr. (ρ)",
    "ece_equal_width": "ECE (width)",
    "ece_equal_mass": "ECE (mass)",
    "smooth_ece": "smECE",
    "ece_binary": "Binary ECE",
}
PEOPLE = "people (leave-one-rater-out)"
POINT = [*KEY, "event"]


@dataclass
class ModelPoints:
    """One model's judged images, aligned with their ratings."""

    name: str
    prob: np.ndarray  # (n,) P(judged event)
    confidence: np.ndarray  # (n,) rank-1 score
    correct: np.ndarray  # (n,) rank-1 label is right
    target: np.ndarray  # (n,) the judged event is the image's own (binary ECE)
    ratings: np.ndarray  # (n, R) 0..100, NaN-padded
    images: pl.DataFrame | None = None  # (n,) video_id, frame_index, event, ratings: which image each point is


# --- inputs -----------------------------------------------------------------------------------------------------
def image_ratings(
    judgments: pl.DataFrame,
    *,
    variant: str,
    label_map: Mapping[str, list[str]],
    events_config: Mapping | None = None,
    excluded: Sequence[str] = (),
) -> pl.DataFrame:
    """judgments (schemas.JUDGMENTS) -> per judged image (video_id, frame_index, event) its `ratings` (list of
    first-round ratings of annotators not excluded), as image_scores averages them."""
    j = judgments.filter((pl.col("variant") == variant) & ~pl.col("annotator").is_in(list(excluded)))
    if "round" in j.columns:
        j = j.filter(pl.col("round") == 1)
    j = j.with_columns(judged_events(j["event_prompt"], label_map, events_config).alias("event"))
    return (
        j.filter(pl.col("event").is_not_null())
        .group_by(POINT, maintain_order=True)
        .agg(pl.col("rating").sort_by("position", "annotator").cast(pl.Float64).alias("ratings"))
        .sort(POINT)
    )


def ratings_matrix(lists: Sequence[Sequence[float]]) -> np.ndarray:
    width = max((len(r) for r in lists), default=1)
    out = np.full((len(lists), max(width, 1)), np.nan)
    for i, r in enumerate(lists):
        out[i, : len(r)] = r
    return out


def model_points(name: str, predictions: pl.DataFrame, images: pl.DataFrame, ratings: pl.DataFrame) -> ModelPoints:
    """A model's predictions (schemas.PREDICTIONS) on the judged images (judged.judged_images: targets per image)
    joined with the images' ratings (image_ratings) -> its ModelPoints. Images without prediction or rating drop."""
    top = hits(predictions, images, 1).select(*POINT, "top1")
    scored = (
        predictions.select(*KEY, "rank", "label", "score")
        .join(images.select(*POINT, "targets"), on=KEY, how="inner", maintain_order="left")
        .group_by(POINT, maintain_order=True)
        .agg(
            (pl.col("score") * pl.col("label").is_in(pl.col("targets")).cast(pl.Float64)).sum().alias("prob"),
            pl.col("score").sort_by("rank").first().alias("confidence"),
        )
    )
    rows = (
        scored.join(top, on=POINT, maintain_order="left")
        .join(ratings, on=POINT, how="inner", maintain_order="left")
        .sort(POINT)
    )
    return ModelPoints(
        name=name,
        prob=np.clip(rows["prob"].to_numpy().astype(float), 0.0, 1.0),
        confidence=np.clip(rows["confidence"].to_numpy().astype(float), 0.0, 1.0),
        correct=rows["top1"].cast(pl.Float64).to_numpy(),
        target=np.ones(len(rows)),
        ratings=ratings_matrix(rows["ratings"].to_list()),
        images=rows.select(*POINT, "ratings"),
    )


def scores_are_probabilities(predictions: pl.DataFrame) -> bool:
    """Whether every score is in [0, 1] (only then are the soft-label and calibration measures defined)."""
    s = predictions["score"]
    return len(s) > 0 and bool(((s >= 0) & (s <= 1)).all())


# --- the table ----------------------------------------------------------------------------------------------------
def model_rows(m: ModelPoints, cfg: IntervalConfig, *, ece_bins: int, binary_bins: int) -> list[dict]:
    """One model's measures (measure, value, lo, hi, n), all on one image index matrix."""
    n = len(m.prob)
    if n == 0:
        return []
    index = image_resamples(n, cfg)
    weights = counts(index, n)
    soft = intervals_table(U.soft_label_measures(m.prob, m.ratings), cfg, index)
    out = [(r["measure"], r["value"], r["lo"], r["hi"]) for r in soft.iter_rows(named=True)]
    point = U.entropy_correlation(m.prob, m.ratings)
    reps = U.entropy_correlation(m.prob, m.ratings, weights=weights)
    for kind, name in (("pearson", "entropy_pearson"), ("spearman", "entropy_spearman")):
        out.append((name, *interval_from(point[kind], reps[kind], cfg)))
    sigma = U.smooth_ece_bandwidth(m.confidence, m.correct)
    calibration = {
        "ece_equal_width": lambda w: U.ece_equal_width(m.confidence, m.correct, ece_bins, weights=w),
        "ece_equal_mass": lambda w: U.ece_equal_mass(m.confidence, m.correct, ece_bins, weights=w),
        "smooth_ece": lambda w: U.smooth_ece(m.confidence, m.correct, weights=w, sigma=sigma),
        "ece_binary": lambda w: U.ece_equal_width(m.prob, m.target, binary_bins, weights=w),
    }
    for name, fn in calibration.items():  # biased by the resampling: bias-adjusted (module docstring)
        stat = lambda idx, fn=fn: np.atleast_1d(fn(counts(idx, n)))  # noqa: E731 - in chunks of resamples, as
        value = float(stat(np.arange(n)[None])[0])  # intervals.interval evaluates it (the same sums, bit for bit)
        out.append((name, *bias_adjusted_from(value, replicates(stat, index), cfg)[:3]))
    return [{"measure": k, "value": v, "lo": lo, "hi": hi, "n": n} for k, v, lo, hi in out]


def people_rows(ratings: np.ndarray, cfg: IntervalConfig) -> list[dict]:
    """The leave-one-rater-out ceiling of the soft-label measures, with its bootstrap interval."""
    per_image = U.people_ceiling(ratings)
    table = intervals_table({k: per_image[k] for k in SOFT}, cfg, image_resamples(len(ratings), cfg))
    return [{**r, "n": len(ratings)} for r in table.iter_rows(named=True)]


def soft_label_table(
    models: Sequence[ModelPoints], people: np.ndarray | None, cfg: IntervalConfig, *, ece_bins: int, binary_bins: int
) -> pl.DataFrame:
    """Long table: model, measure, value, lo, hi, n (images). `people`: the ratings matrix (n, R) of the judged
    images for the leave-one-rater-out row, or None."""
    rows = [
        {"model": m.name, **r} for m in models for r in model_rows(m, cfg, ece_bins=ece_bins, binary_bins=binary_bins)
    ]
    if people is not None and len(people):
        rows += [{"model": PEOPLE, **r} for r in people_rows(people, cfg)]
    rows = [{**r, "value": _num(r["value"]), "lo": _num(r["lo"]), "hi": _num(r["hi"])} for r in rows]
    return pl.DataFrame(
        rows,
        schema={
            "model": pl.Utf8,
            "measure": pl.Utf8,
            "value": pl.Float64,
            "lo": pl.Float64,
            "hi": pl.Float64,
            "n": pl.Int64,
        },
    )


def _num(v) -> float | None:
    v = float(v)
    return None if np.isnan(v) else v


# --- Markdown and LaTeX -------------------------------------------------------------------------------------------
def caption(
    table: pl.DataFrame,
    cfg: Mapping,
    *,
    variant: str,
    source: str,
    ece_bins: int,
    binary_bins: int,
    skipped: Sequence[str] = (),
) -> str:
    level = round(100 * cfg["level"])
    parts = [
        "Soft-label measures: each model's probability of the judged event against the people's ratings "
        f"(variant {variant} judged images; {source}), and the people against themselves.",
        "CE: cross-entropy H(h, m) to the human soft label h = mean rating / 100 (CIFAR-10H); KL both directions; "
        "JSD: Jensen–Shannon divergence; TV: total variation (half the Manhattan distance, LeWiDi 2025); Brier: "
        "(p − h)², whose mean is SQUID-E's HUJ MSE; W1: Wasserstein-1 distance between 100·p and the ratings; all "
        "in nats, natural log, means over images. H corr.: Pearson r and Spearman ρ between the model's predictive "
        "entropy and the entropy of h.",
        f"ECE (width)/(mass): top-label ECE of the rank-1 score, {ece_bins} equal-width / equal-mass bins "
        "(evaluation.ece_bins); smECE: smooth ECE (Błasiok & Nakkiran 2023); Binary ECE: P(event) against the "
        f"judged event being the image's own, {binary_bins} equal-width bins (evaluation.binary_ece_bins).",
        "The people row: each rater held out against the mean of the image's other raters (leave-one-rater-out), "
        "averaged over raters and images: how far the humans are from their own agreement.",
        f"[lo, hi]: {level}% {cfg['method']} bootstrap interval ({cfg['resamples']} resamples, seed {cfg['seed']}) "
        "over images, each drawn image keeping its own raters (two-stage bootstrap, raters not redrawn with "
        "replacement; every measure is symmetric in an image's raters): it covers which images and, since each "
        "image has its own raters, which raters were drawn; the calibration measures compare with ground truth. "
        "The four ECEs are biased upward on a resample (duplicated images fill bins unevenly, so a percentile or BCa "
        "interval can lie above its own estimate): theirs is the bias-adjusted percentile interval (the resampled "
        "values less their bootstrap bias, Efron & Tibshirani 1993 §10.2), the measured value's spread at this "
        "number of images.",
        "Predicted scores are read as probabilities: P(event) is the sum of the scores of the event's labels.",
    ]
    if skipped:
        parts.append("Left out (scores outside [0, 1], not probabilities): " + ", ".join(skipped) + ".")
    if source.startswith("SIMULATED"):
        parts.append("Demo: the numbers show that the pipeline runs, not how any model behaves.")
    return " ".join(parts)


def _rows(table: pl.DataFrame) -> tuple[list[str], list[list[str]]]:
    cells = {(r["model"], r["measure"]): r for r in table.iter_rows(named=True)}
    measures = [m for m in MEASURES if any(k[1] == m for k in cells)]
    models = list(dict.fromkeys(table["model"].to_list()))
    header = ["Model", *[HEADERS[m] for m in measures]]
    body = []
    for model in models:
        row = [model]
        for measure in measures:
            r = cells.get((model, measure))
            row.append("–" if r is None or r["value"] is None else _fmt(r["value"], r["lo"], r["hi"]))
        body.append(row)
    return header, body


def _fmt(value, lo, hi) -> str:
    if lo is None or hi is None:
        return f"{value:.3f}"
    return f"{value:.3f} [{lo:.3f}, {hi:.3f}]"


def to_markdown(table: pl.DataFrame, text: str) -> str:
    header, body = _rows(table)
    lines = [f"**{text}**", "", *md_table(header, body, data=(0,))]  # a model's name is data
    return "\n".join(lines) + "\n"


def to_latex(table: pl.DataFrame, text: str) -> str:
    header, body = _rows(table)
    return latex_table(
        caption=text,
        label="soft_label_measures",
        columns="l" + "c" * (len(header) - 1),
        head=[tex_row(map(tex_escape, header)), r"\midrule"],
        body=[tex_row(map(tex_escape, row)) for row in body],
        fit_width=True,
    )
