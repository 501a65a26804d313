"""Every model against the people, from predictions files and judgments: what the evaluation rules compute, as one
library call that `squidflow evaluate` makes too (so the command and the workflow give the same numbers).

- `read_judgments`: the SQUID-E release CSV (huj_annotations.csv) or squidflow's judgments Parquet
  (schemas.JUDGMENTS), with the annotators to leave out (annotator_report.parquet's excluded, as the workflow's
  image_scores leaves them out);
- `per_image_points`: every model's points on the judged images and the people's ratings, one table
  (squidflow.evaluation.points) that the soft-label table and its figures read;
- `soft_label_outputs`: the soft-label measures table (squidflow.evaluation.soft_labels) of the models;
- `evaluate_predictions`: Tables 2 and 8 (squidflow.evaluation.models / tables) and the soft-label table of the
  models, as {name: (CSV frame, Markdown, LaTeX)}.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import polars as pl

from squidflow import io, schemas
from squidflow.config import from_section
from squidflow.evaluation.judged import judged_images
from squidflow.evaluation.models import evaluate_model, known_images
from squidflow.evaluation.points import points_frame, points_from_frame
from squidflow.evaluation.predictions import read_image_table, read_predictions
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
from squidflow.intervals import IntervalConfig
from squidflow.judgments.scores import image_scores
from squidflow.paths import DOWNLOADS_DIR

log = logging.getLogger(__name__)

SOFT_LABEL_TABLE = "soft_label_measures"


def excluded_annotators(report: pl.DataFrame | None) -> list[str]:
    """The annotators annotator_report.parquet (schemas.ANNOTATOR_REPORT) excludes, as image_scores leaves them out."""
    return [] if report is None else report.filter(pl.col("excluded"))["annotator"].to_list()


def read_judgments(path: str | Path, *, report: str | Path | None = None) -> tuple[pl.DataFrame, list[str]]:
    """(judgments, excluded annotators) from the release CSV or a judgments Parquet, plus an optional
    annotator_report.parquet whose `excluded` annotators are left out (as results/judgments/image_scores.parquet)."""
    from squidflow.judgments.ingest import read_release

    path = Path(path)
    if path.suffix.lower() in (".parquet", ".pq"):
        judgments = io.read_parquet(path, schemas.JUDGMENTS)
    else:
        judgments, _ = read_release(path)
    return judgments, excluded_annotators(io.read_parquet(report, schemas.ANNOTATOR_REPORT) if report else None)


def model_points_of(model: Mapping, scores: pl.DataFrame, ratings: pl.DataFrame, *, variant: str,
                    label_map: Mapping, events_config: Mapping | None, cache_dir: str | Path,
                    frames: pl.DataFrame | None = None) -> ModelPoints | None:
    """One model ({name, predictions, images}) on the judged images; None when its scores are not probabilities."""
    table = read_image_table(model["images"], cache_dir) if model.get("images") else None
    preds = read_predictions(model["predictions"], cache_dir=cache_dir, image_table=table,
                             known_images=known_images(scores, frames))
    if not scores_are_probabilities(preds):
        log.warning("%s: scores outside [0, 1] are not probabilities; left out of the soft-label table", model["name"])
        return None
    images = judged_images(scores, variant=variant, label_map=label_map, events_config=events_config)
    return model_points(model["name"], preds, images, ratings)


def per_image_points(models: Sequence[Mapping], judgments: pl.DataFrame, excluded: Sequence[str], *, variant: str,
                     label_map: Mapping, events_config: Mapping | None, cache_dir: str | Path = DOWNLOADS_DIR,
                     frames: pl.DataFrame | None = None) -> pl.DataFrame:
    """Every model's points on the judged images and the people's ratings of them (schemas.PER_IMAGE_POINTS): what
    rule per_image_points writes once for the soft-label table and its two figures."""
    scores = image_scores(judgments, list(excluded))
    ratings = image_ratings(judgments, variant=variant, label_map=label_map, events_config=events_config,
                            excluded=excluded)
    points, skipped = [], []
    for model in models:
        p = model_points_of(model, scores, ratings, variant=variant, label_map=label_map,
                            events_config=events_config, cache_dir=cache_dir, frames=frames)
        if p is None:
            skipped.append(model["name"])
        else:
            points.append(p)
    return points_frame(points, ratings, skipped)


def points_and_people(models: Sequence[Mapping], judgments: pl.DataFrame, excluded: Sequence[str], *, variant: str,
                      label_map: Mapping, events_config: Mapping | None, cache_dir: str | Path = DOWNLOADS_DIR,
                      frames: pl.DataFrame | None = None) -> tuple[list[ModelPoints], np.ndarray | None, list[str]]:
    """(the models' points, the judged images' ratings matrix for the people row, the models left out), through the
    same table the workflow writes (per_image_points), so `squidflow evaluate` measures what the rules measure."""
    return points_from_frame(per_image_points(models, judgments, excluded, variant=variant, label_map=label_map,
                                              events_config=events_config, cache_dir=cache_dir, frames=frames))


def soft_label_outputs_of(points: Sequence[ModelPoints], people: np.ndarray | None, skipped: Sequence[str], *,
                          variant: str, intervals: Mapping, ece_bins: int, binary_bins: int,
                          source: str) -> tuple[pl.DataFrame, str, str]:
    """(long CSV frame, Markdown, LaTeX) of the soft-label measures table of points already computed (rule
    soft_label_table reads them from per_image_points.parquet: points_from_frame)."""
    table = soft_label_table(points, people, from_section(IntervalConfig, intervals), ece_bins=ece_bins,
                             binary_bins=binary_bins)
    text = caption(table, intervals, variant=variant, source=SOURCES.get(source, source), ece_bins=ece_bins,
                   binary_bins=binary_bins, skipped=skipped)
    return table, to_markdown(table, text), to_latex(table, text)


def soft_label_outputs(models: Sequence[Mapping], judgments: pl.DataFrame, excluded: Sequence[str], *, variant: str,
                       label_map: Mapping, events_config: Mapping | None, intervals: Mapping, ece_bins: int,
                       binary_bins: int, source: str, cache_dir: str | Path = DOWNLOADS_DIR,
                       frames: pl.DataFrame | None = None) -> tuple[pl.DataFrame, str, str]:
    """(long CSV frame, Markdown, LaTeX) of the soft-label measures table, from the judgments and the models."""
    points, people, skipped = points_and_people(models, judgments, excluded, variant=variant, label_map=label_map,
                                                events_config=events_config, cache_dir=cache_dir, frames=frames)
    return soft_label_outputs_of(points, people, skipped, variant=variant, intervals=intervals, ece_bins=ece_bins,
                                 binary_bins=binary_bins, source=source)


def evaluate_predictions(models: Sequence[Mapping], judgments: pl.DataFrame, excluded: Sequence[str], *,
                         variant: str, top_k: int, label_map: Mapping, events_config: Mapping | None = None,
                         vocabulary: str | None = None, intervals: Mapping, ece_bins: int, binary_bins: int,
                         source: str, cache_dir: str | Path = DOWNLOADS_DIR,
                         frames: pl.DataFrame | None = None) -> dict[str, tuple[pl.DataFrame, str, str]]:
    """Tables 2 and 8 and the soft-label table of `models` (each {name, predictions, images, reference_accuracy})
    against `judgments`, computed as the workflow's rules model_accuracy, evaluation_table and soft_label_table
    compute them."""
    scores = image_scores(judgments, list(excluded))
    accuracies, summaries = [], []
    for m in models:
        acc, summary = evaluate_model(m["predictions"], scores, name=m["name"], variant=variant, top_k=top_k,
                                      label_map=label_map, events_config=events_config, vocabulary=vocabulary,
                                      image_table=m.get("images"), frames=frames, cache_dir=cache_dir,
                                      intervals=intervals)
        accuracies.append(io.conform(acc, schemas.MODEL_ACCURACY))
        summaries.append(summary)
    infos = [ModelInfo(m["name"], m.get("reference_accuracy"), bool(m.get("demo"))) for m in models]
    out = {}
    for table in ("table2_verbs", "table8_alt_bins"):
        df, md, tex = build_table(accuracies, summaries, infos, table, variant=variant, top_k=top_k,
                                  label_map=dict(label_map), source=source, intervals=dict(intervals))
        out[table] = (io.conform(df, schemas.MODEL_ACCURACY), md, tex)
    table, md, tex = soft_label_outputs(models, judgments, excluded, variant=variant, label_map=label_map,
                                           events_config=events_config, intervals=intervals, ece_bins=ece_bins,
                                           binary_bins=binary_bins, source=source, cache_dir=cache_dir, frames=frames)
    out[SOFT_LABEL_TABLE] = (table, md, tex)
    return out
