"""Every model against the people, from predictions files and judgments: what the evaluation rules compute, as one
library call that `squidflow evaluate` makes too (so the command and the workflow give the same numbers).

- `read_judgments`: the SQUID-E release CSV (huj_annotations.csv) or squidflow's judgments Parquet
  (schemas.JUDGMENTS), with the annotators to leave out (annotator_report.parquet's excluded, as the workflow's
  image_scores leaves them out);
- `per_image_points`: every model's points on the judged images and the people's ratings, one table
  (squidflow.evaluation.points) that the soft-label table and its figures read;
- `soft_label_outputs_of`: the soft-label measures table (squidflow.evaluation.soft_labels) of the models' points;
- `evaluate_predictions`: Tables 2 and 8 (squidflow.evaluation.models / tables) and the soft-label table of the
  models, as {name: (CSV frame, Markdown, LaTeX)}, measured as `Scoring` says.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from squidflow.config.validation import from_section
from squidflow.contracts import io, schemas
from squidflow.contracts.paths import DOWNLOADS_DIR
from squidflow.evaluation.judged import judged_images
from squidflow.evaluation.models import model_accuracy_of, read_model_predictions
from squidflow.evaluation.points import points_frame, points_from_frame
from squidflow.evaluation.soft_labels import (
    ModelPoints,
    caption,
    image_ratings,
    model_points,
    scores_are_probabilities,
    soft_label_table,
    to_latex,
    to_markdown,
)
from squidflow.evaluation.tables import SOURCES, ModelInfo, build_table
from squidflow.judgments.scores import image_scores
from squidflow.statistics.intervals import IntervalConfig

log = logging.getLogger(__name__)

SOFT_LABEL_TABLE = "soft_label_measures"


def excluded_annotators(report: pl.DataFrame | None) -> list[str]:
    """The annotators annotator_report.parquet (schemas.ANNOTATOR_REPORT) excludes, as image_scores leaves them out."""
    return [] if report is None else report.filter(pl.col("excluded"))["annotator"].to_list()


def read_judgments(path: str | Path, *, report: str | Path | None = None) -> tuple[pl.DataFrame, list[str]]:
    """(judgments, excluded annotators) from the release CSV or a judgments Parquet, plus an optional
    annotator_report.parquet whose `excluded` annotators are left out (as results/judgments/image_scores.parquet)."""
    from squidflow.config.bounds import parquet_check
    from squidflow.errors import InputError
    from squidflow.judgments.ingest import read_release

    path = Path(path)
    for handed in (path, report):  # files someone hands over: their footers checked before a row is read
        if handed is not None and Path(handed).suffix.lower() in (".parquet", ".pq"):
            parquet_check(handed, str(handed), InputError)
    if path.suffix.lower() in (".parquet", ".pq"):
        judgments = io.read_parquet(path, schemas.JUDGMENTS)
    else:
        judgments, _ = read_release(path)
    return judgments, excluded_annotators(io.read_parquet(report, schemas.ANNOTATOR_REPORT) if report else None)


def model_points_of(
    name: str,
    preds: pl.DataFrame,
    scores: pl.DataFrame,
    ratings: pl.DataFrame,
    *,
    variant: str,
    label_map: Mapping,
    events_config: Mapping | None,
) -> ModelPoints | None:
    """One model's predictions (read: `read_model_predictions`) on the judged images; None when its scores are not
    probabilities."""
    if not scores_are_probabilities(preds):
        log.warning("%s: scores outside [0, 1] are not probabilities; left out of the soft-label table", name)
        return None
    images = judged_images(scores, variant=variant, label_map=label_map, events_config=events_config)
    return model_points(name, preds, images, ratings)


def per_image_points(
    models: Sequence[Mapping],
    judgments: pl.DataFrame,
    excluded: Sequence[str],
    *,
    variant: str,
    label_map: Mapping,
    events_config: Mapping | None,
    cache_dir: str | Path = DOWNLOADS_DIR,
    frames: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Every model's points on the judged images and the people's ratings of them (schemas.PER_IMAGE_POINTS): what
    rule per_image_points writes once for the soft-label table and its two figures."""
    scores = image_scores(judgments, list(excluded))
    ratings = image_ratings(
        judgments, variant=variant, label_map=label_map, events_config=events_config, excluded=excluded
    )
    points, skipped = [], []
    for model in models:
        preds = read_model_predictions(
            model["predictions"], scores, image_table=model.get("images"), frames=frames, cache_dir=cache_dir
        )
        p = model_points_of(
            model["name"], preds, scores, ratings, variant=variant, label_map=label_map, events_config=events_config
        )
        if p is None:
            skipped.append(model["name"])
        else:
            points.append(p)
    return points_frame(points, ratings, skipped)


def soft_label_outputs_of(
    points: Sequence[ModelPoints],
    people: np.ndarray | None,
    skipped: Sequence[str],
    *,
    variant: str,
    intervals: Mapping,
    ece_bins: int,
    binary_bins: int,
    source: str,
) -> tuple[pl.DataFrame, str, str]:
    """(long CSV frame, Markdown, LaTeX) of the soft-label measures table of points already computed (rule
    soft_label_table reads them from per_image_points.parquet: points_from_frame)."""
    table = soft_label_table(
        points, people, from_section(IntervalConfig, intervals), ece_bins=ece_bins, binary_bins=binary_bins
    )
    text = caption(
        table,
        intervals,
        variant=variant,
        source=SOURCES.get(source, source),
        ece_bins=ece_bins,
        binary_bins=binary_bins,
        skipped=skipped,
    )
    return table, to_markdown(table, text), to_latex(table, text)


@dataclass(frozen=True)
class Scoring:
    """How `evaluate_predictions` measures (the evaluation rules' params): `evaluation`'s variant, top_k, label_map,
    ece_bins and binary_ece_bins, the `intervals` section, the judgments' source, the events, the label vocabulary
    file, where downloads go, and the frames a prediction may name besides the judged images."""

    variant: str
    top_k: int
    label_map: Mapping
    intervals: Mapping
    ece_bins: int
    binary_bins: int
    source: str
    events_config: Mapping | None = None
    vocabulary: str | None = None
    cache_dir: str | Path = DOWNLOADS_DIR
    frames: pl.DataFrame | None = None


def _score_model(
    m: Mapping, scores: pl.DataFrame, ratings: pl.DataFrame, how: Scoring
) -> tuple[pl.DataFrame, Any, ModelPoints | None]:
    """One model's predictions file, read once and scored: its accuracy rows, its summary, and its per-image points
    (None where its scores are not probabilities)."""
    preds = read_model_predictions(
        m["predictions"], scores, image_table=m.get("images"), frames=how.frames, cache_dir=how.cache_dir
    )
    acc, summary = model_accuracy_of(
        preds,
        scores,
        name=m["name"],
        predictions=m["predictions"],
        variant=how.variant,
        top_k=how.top_k,
        label_map=how.label_map,
        events_config=how.events_config,
        vocabulary=how.vocabulary,
        cache_dir=how.cache_dir,
        intervals=how.intervals,
    )
    p = model_points_of(
        m["name"],
        preds,
        scores,
        ratings,
        variant=how.variant,
        label_map=how.label_map,
        events_config=how.events_config,
    )
    return io.conform(acc, schemas.MODEL_ACCURACY), summary, p


def evaluate_predictions(
    models: Sequence[Mapping], judgments: pl.DataFrame, excluded: Sequence[str], how: Scoring
) -> dict[str, tuple[pl.DataFrame, str, str]]:
    """Tables 2 and 8 and the soft-label table of `models` (each {name, predictions, images, reference_accuracy})
    against `judgments`, computed as the workflow's rules model_accuracy, evaluation_table, per_image_points and
    soft_label_table compute them: the people's image scores once, each predictions file read once."""
    scores = image_scores(judgments, list(excluded))
    ratings = image_ratings(
        judgments, variant=how.variant, label_map=how.label_map, events_config=how.events_config, excluded=excluded
    )
    accuracies, summaries, points, skipped = [], [], [], []
    for m in models:
        acc, summary, p = _score_model(m, scores, ratings, how)
        accuracies.append(acc)
        summaries.append(summary)
        if p is None:
            skipped.append(m["name"])
        else:
            points.append(p)
    infos = [ModelInfo(m["name"], m.get("reference_accuracy"), bool(m.get("demo"))) for m in models]
    out = {}
    for table in ("table2_verbs", "table8_alt_bins"):
        df, md, tex = build_table(
            accuracies,
            summaries,
            infos,
            table,
            variant=how.variant,
            top_k=how.top_k,
            label_map=dict(how.label_map),
            source=how.source,
            intervals=dict(how.intervals),
        )
        out[table] = (io.conform(df, schemas.MODEL_ACCURACY), md, tex)
    # through the table rule per_image_points writes, as rule soft_label_table reads it
    model_points_read, people, left_out = points_from_frame(points_frame(points, ratings, skipped))
    out[SOFT_LABEL_TABLE] = soft_label_outputs_of(
        model_points_read,
        people,
        left_out,
        variant=how.variant,
        intervals=how.intervals,
        ece_bins=how.ece_bins,
        binary_bins=how.binary_bins,
        source=how.source,
    )
    return out
