"""The per-image points of every Table 2 model and the people's ratings, as one Parquet table (schemas.PER_IMAGE_POINTS).

The soft-label table and its two figures (reliability diagrams, annotation saturation) measure the same points:
each model's P(judged event), rank-1 score and hit on the judged images, next to the images' ratings
(squidflow.evaluation.scoring.per_image_points). Rule per_image_points computes them once and the three rules read
them back, so reading the judgments and every model's predictions happens in one job, and the three outputs cannot
disagree about which images they measure.

The round trip is exact: values are stored as float64 and the ratings as the lists the matrices were built from, so
`points_from_frame(points_frame(...))` gives arrays equal to the ones computed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from squidflow.contracts import io, schemas
from squidflow.evaluation.soft_labels import ModelPoints, ratings_matrix

MODEL, PEOPLE, LEFT_OUT, NO_IMAGES = "model", "people", "left_out", "no_images"
KEY = ("video_id", "frame_index", "event")


def points_frame(points: Sequence[ModelPoints], people: pl.DataFrame | None, skipped: Sequence[str]) -> pl.DataFrame:
    """(the models' points, the judged images with their `ratings` (soft_labels.image_ratings) or None, the models
    left out) -> one frame of schemas.PER_IMAGE_POINTS."""
    parts = []
    for m in points:
        if len(m.prob) == 0:
            parts.append(pl.DataFrame({"role": [NO_IMAGES], "model": [m.name]}))
            continue
        if m.images is None:
            raise ValueError(f"points_frame: model {m.name!r} has points but not the images they are of")
        parts.append(
            m.images.select(*KEY, "ratings").with_columns(
                role=pl.lit(MODEL),
                model=pl.lit(m.name),
                prob=pl.Series(m.prob, dtype=pl.Float64),
                confidence=pl.Series(m.confidence, dtype=pl.Float64),
                correct=pl.Series(m.correct, dtype=pl.Float64),
                target=pl.Series(m.target, dtype=pl.Float64),
            )
        )
    if people is not None and len(people):
        parts.append(people.select(*KEY, "ratings").with_columns(role=pl.lit(PEOPLE)))
    parts += [pl.DataFrame({"role": [LEFT_OUT], "model": [name]}) for name in skipped]
    return pl.concat([_filled(p) for p in parts]) if parts else schemas.empty(schemas.PER_IMAGE_POINTS)


def _filled(part: pl.DataFrame) -> pl.DataFrame:
    """A part with the columns its role leaves empty added as nulls, conformed to the schema."""
    columns = schemas.PER_IMAGE_POINTS.columns
    missing = [pl.lit(None, dtype=t).alias(c) for c, t in columns.items() if c not in part.columns]
    return io.conform(part.with_columns(missing), schemas.PER_IMAGE_POINTS)


def points_from_frame(table: pl.DataFrame) -> tuple[list[ModelPoints], np.ndarray | None, list[str]]:
    """schemas.PER_IMAGE_POINTS -> (the models' points in table order, the people's ratings matrix or None, the
    models left out): what the soft-label table is computed from (scoring.soft_label_outputs_of)."""
    models = table.filter(pl.col("role").is_in([MODEL, NO_IMAGES]))["model"].unique(maintain_order=True).to_list()
    points = [
        _model_points(name, table.filter((pl.col("role") == MODEL) & (pl.col("model") == name))) for name in models
    ]
    people = table.filter(pl.col("role") == PEOPLE)
    skipped = table.filter(pl.col("role") == LEFT_OUT)["model"].to_list()
    return points, (ratings_matrix(people["ratings"].to_list()) if len(people) else None), skipped


def _model_points(name: str, rows: pl.DataFrame) -> ModelPoints:
    return ModelPoints(
        name=name,
        prob=rows["prob"].to_numpy().astype(float),
        confidence=rows["confidence"].to_numpy().astype(float),
        correct=rows["correct"].to_numpy().astype(float),
        target=rows["target"].to_numpy().astype(float),
        ratings=ratings_matrix(rows["ratings"].to_list()),
        images=rows.select(*KEY, "ratings"),
    )
