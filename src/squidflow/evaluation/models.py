"""One model measured against the human judgments: its predictions read and checked, its labels checked against
the vocabulary, its accuracy per certainty bin (the rows it contributes to Tables 2 and 8 of SQUID-E
(Sanders et al., 2022) §5.2 and supplement D.3).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from squidflow.config.validation import from_section
from squidflow.contracts.paths import DOWNLOADS_DIR
from squidflow.evaluation.judged import judged_images
from squidflow.evaluation.labels import check_vocabulary, read_vocabulary
from squidflow.evaluation.metrics import KEY, model_accuracy
from squidflow.evaluation.predictions import read_image_table, read_predictions
from squidflow.fetch import fetch
from squidflow.statistics.intervals import IntervalConfig

log = logging.getLogger(__name__)


def known_images(scores: pl.DataFrame, frames: pl.DataFrame | None = None) -> pl.DataFrame:
    """The images a prediction may name: every judged image (any variant) and, when there are frames, every frame."""
    parts = [scores.select(*KEY)]
    if frames is not None:
        parts.append(frames.select(*KEY))
    return pl.concat(parts).unique(maintain_order=True)


def evaluate_model(
    predictions: str | Path,
    scores: pl.DataFrame,
    *,
    name: str,
    variant: str,
    top_k: int,
    label_map: Mapping[str, list[str]],
    events_config: Mapping | None = None,
    vocabulary: str | Path | None = None,
    image_table: str | Path | None = None,
    frames: pl.DataFrame | None = None,
    cache_dir: str | Path = DOWNLOADS_DIR,
    intervals: Mapping | None = None,
) -> tuple[pl.DataFrame, dict]:
    """A model's predictions file -> (its MODEL_ACCURACY rows, a summary of what was checked and left out).

    `scores` is results/judgments/image_scores.parquet; `frames` (optional) widens the images a prediction may name
    to every frame of the dataset (a model may predict unjudged frames; they are not scored). `intervals`
    (config `intervals`) adds each accuracy's image-bootstrap interval (lo, hi).
    """
    preds = read_model_predictions(predictions, scores, image_table=image_table, frames=frames, cache_dir=cache_dir)
    return model_accuracy_of(
        preds,
        scores,
        name=name,
        predictions=predictions,
        variant=variant,
        top_k=top_k,
        label_map=label_map,
        events_config=events_config,
        vocabulary=vocabulary,
        cache_dir=cache_dir,
        intervals=intervals,
    )


def read_model_predictions(
    predictions: str | Path,
    scores: pl.DataFrame,
    *,
    image_table: str | Path | None = None,
    frames: pl.DataFrame | None = None,
    cache_dir: str | Path = DOWNLOADS_DIR,
) -> pl.DataFrame:
    """A model's predictions file (and its image table), checked against the images a prediction may name."""
    table = read_image_table(image_table, cache_dir) if image_table else None
    return read_predictions(
        predictions, cache_dir=cache_dir, image_table=table, known_images=known_images(scores, frames)
    )


def model_accuracy_of(
    preds: pl.DataFrame,
    scores: pl.DataFrame,
    *,
    name: str,
    predictions: str | Path,
    variant: str,
    top_k: int,
    label_map: Mapping[str, list[str]],
    events_config: Mapping | None = None,
    vocabulary: str | Path | None = None,
    cache_dir: str | Path = DOWNLOADS_DIR,
    intervals: Mapping | None = None,
) -> tuple[pl.DataFrame, dict]:
    """`evaluate_model` of predictions already read (`predictions` names their file in the summary)."""
    images = judged_images(scores, variant=variant, label_map=label_map, events_config=events_config)
    vocab = read_vocabulary(fetch(vocabulary, cache_dir)) if vocabulary else None
    report = check_vocabulary(preds["label"], label_map, vocab, where=f"{name} ({predictions})")
    cfg = None if intervals is None else from_section(IntervalConfig, intervals)
    accuracy = model_accuracy(preds, images, model=name, top_k=top_k, intervals=cfg)
    predicted = preds.select(*KEY).unique(maintain_order=True)
    scored = images.join(predicted, on=KEY, how="semi", maintain_order="left")
    summary = {
        "model": name,
        "predictions": str(predictions),
        "rows": len(preds),
        "images_predicted": len(predicted),
        "judged_images": len(images),
        "judged_images_scored": len(scored),
        "judged_images_without_prediction": len(images) - len(scored),
        "vocabulary": None if report is None else str(vocabulary),
        **({} if report is None else report.to_dict()),
    }
    log.info("%s: %d of %d judged images scored", name, len(scored), len(images))
    return accuracy, summary


def model_id(name: str) -> str:
    """A model's name as a file name (results/evaluation/models/{id}.parquet): runs of other characters become `_`."""
    slug = re.sub(r"[^A-Za-z0-9.-]+", "_", name.strip()).strip("_.")
    if not slug:
        raise ValueError(
            f"evaluation.models: the model name {name!r} has no letter or digit; give it a name like 'JSL'"
        )
    return slug
