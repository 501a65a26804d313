"""The classifiers this workflow trains, measured the way any model is (SQUID-E §5.1 and §5.3; supplement D.3, D.4).

Each training run leaves results/runs/{experiment}/{train_set}/{method}/seed{seed}/predictions.parquet
(schemas.RUN_PREDICTIONS: per evaluation image its ground-truth class, class probabilities and mean judgment). Two
things are made from them here:

- `run_predictions`: a run's SQUID-E images in the predictions format (every class ranked by probability), so a
  Table 1 classifier can stand in Tables 2 and 8 next to external models;
- `evaluate_runs`: per run, binning (mean, alt) and certainty bin, top-1 accuracy against the ground-truth label,
  and the model's probability of the judged event against the mean judgment (mean, MSE, Bernoulli KL) — the
  numbers reliability diagrams and the Table 1 plot draw. The judged event is the image's own event in the
  classification experiment (variant A judgments, as Table 1 bins them) and the target event in the calibration
  experiment (variant B judgments of the target prompt, as Tables 3 and 9 compare them).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import cast

import numpy as np
import polars as pl

from squidflow.contracts import schemas
from squidflow.contracts.image_ids import split_image_id
from squidflow.evaluation.metrics import KEY, probability_by_bin
from squidflow.statistics.certainty import BINNINGS, data_points
from squidflow.vocabulary.events import normalise_event, prompt_to_event

log = logging.getLogger(__name__)

EXPERIMENT_VARIANT = {"classification": "A", "calibration": "B"}


def _se_rows(run: pl.DataFrame) -> pl.DataFrame:
    """The run's SQUID-E evaluation images (the judged frames), keyed by video_id and frame_index."""
    se = run.filter(pl.col("eval_set") == "SE")
    keys = [split_image_id(i) for i in se["image_id"].to_list()]
    return se.with_columns(
        pl.Series("video_id", [k[0] for k in keys], dtype=pl.Utf8),
        pl.Series("frame_index", [k[1] for k in keys], dtype=pl.Int64),
    )


def run_predictions(run: pl.DataFrame, classes: Sequence[str]) -> pl.DataFrame:
    """A run's SE images as predictions (schemas.PREDICTIONS): every class ranked by probability (ties: lower class
    index first, as argmax decides), labelled with `classes` (the experiment's class names in index order)."""
    se = _se_rows(run)
    probs = np.asarray(se["probs"].to_list(), dtype=float).reshape(len(se), -1)
    if probs.shape[1] != len(classes):
        raise ValueError(
            f"the run has {probs.shape[1]} class probabilities per image but {len(classes)} class names "
            f"{list(classes)} were given (training.classification.events)"
        )
    order = np.argsort(-probs, axis=1, kind="stable")
    n, k = order.shape
    return pl.DataFrame(
        {
            "video_id": np.repeat(se["video_id"].to_numpy(), k),
            "frame_index": np.repeat(se["frame_index"].to_numpy(), k),
            "image": [None] * (n * k),
            "rank": np.tile(np.arange(1, k + 1), n),
            "label": np.asarray(classes, dtype=object)[order.ravel()],
            "score": np.take_along_axis(probs, order, axis=1).ravel(),
        },
        schema=schemas.PREDICTIONS.columns,
    )


def run_key(path: str | Path) -> dict:
    """…/{experiment}/{train_set}/{method}/seed{seed}/predictions.parquet -> its four parts."""
    p = Path(path)
    seed = p.parent.name
    if not seed.startswith("seed") or not seed[4:].isdigit():
        raise ValueError(
            f"{path}: not a run's predictions (expected …/{{experiment}}/{{train_set}}/{{method}}/seed{{N}}/predictions.parquet)"
        )
    return {
        "experiment": p.parents[3].name,
        "train_set": p.parents[2].name,
        "method": p.parents[1].name,
        "seed": int(seed[4:]),
    }


def evaluate_run(
    run: pl.DataFrame,
    scores: pl.DataFrame,
    *,
    experiment: str,
    classes: Sequence[str],
    events_config: Mapping | None = None,
    kl_eps: float = 1e-6,
) -> pl.DataFrame:
    """One run's rows of RUN_EVALUATION (without the run's key columns): per binning and bin, n, accuracy,
    mean_human, mean_prob, mse, kl. `classes`: class names in index order (calibration: [other, target])."""
    if experiment not in EXPERIMENT_VARIANT:
        raise ValueError(f"experiment {experiment!r}: must be one of {sorted(EXPERIMENT_VARIANT)}")
    se = _se_rows(run).filter(pl.col("human_mean").is_not_null())
    probs = np.asarray(se["probs"].to_list(), dtype=float).reshape(len(se), -1)
    labels = se["label"].to_numpy()
    if experiment == "classification":
        judged_class = labels  # the image's own event (variant A)
    else:
        judged_class = np.ones(len(se), dtype=int)  # the target event (variant B, target prompt)
    judged_event = np.asarray(classes, dtype=object)[judged_class] if len(se) else np.asarray([], dtype=object)
    points = se.select(*KEY, "human_mean").with_columns(
        pl.Series("event", judged_event, dtype=pl.Utf8),
        pl.Series("correct", probs.argmax(axis=1) == labels if len(se) else [], dtype=pl.Boolean),
        pl.Series("prob", probs[np.arange(len(se)), judged_class] if len(se) else [], dtype=pl.Float64),
    )
    variant = EXPERIMENT_VARIANT[experiment]
    mapping = prompt_to_event([c for c in classes], events_config)
    judged = (
        scores.filter(pl.col("variant") == variant)
        .with_columns(
            pl.col("event_prompt")
            .map_elements(lambda p: mapping.get(normalise_event(p)), return_dtype=pl.Utf8)
            .alias("event")
        )
        .filter(pl.col("event").is_not_null())
        .select(*KEY, "event", "people_mean", "certainty_bin", "alt_bins")
        .unique([*KEY, "event"], keep="first", maintain_order=True)
    )
    points = points.join(judged, on=[*KEY, "event"], how="left", maintain_order="left")
    unmatched = points.filter(pl.col("people_mean").is_null())
    if len(unmatched):
        first = unmatched.row(0, named=True)
        raise ValueError(
            f"{len(unmatched)} evaluation image(s) of the run have no variant {variant} judgment for their "
            f"judged event in results/judgments/image_scores.parquet (first: {first['video_id']} frame "
            f"{first['frame_index']}, event {first['event']}); the run is older than the judgments — rerun it"
        )
    drift = cast(float, (points["people_mean"] - points["human_mean"]).abs().max()) if len(points) else 0.0
    if drift and drift > 1e-9:
        log.warning("the run's human_mean differs from image_scores.parquet by up to %.3g; using image_scores", drift)
    points = points.with_columns(pl.col("people_mean").alias("human_mean"))
    parts = [
        probability_by_bin(data_points(points, b), eps=kl_eps).with_columns(pl.lit(b).alias("binning"))
        for b in BINNINGS
    ]
    return pl.concat(parts)


def evaluate_runs(
    runs: Mapping[str, pl.DataFrame],
    scores: pl.DataFrame,
    *,
    classification_events: Sequence[str],
    calibration_target: str,
    events_config: Mapping | None = None,
    kl_eps: float = 1e-6,
) -> pl.DataFrame:
    """Every run (path -> its RUN_PREDICTIONS frame) -> schemas.RUN_EVALUATION rows."""
    parts = []
    for path, run in runs.items():
        key = run_key(path)
        classes = (
            list(classification_events)
            if key["experiment"] == "classification"
            else [f"not {calibration_target}", calibration_target]
        )
        rows = evaluate_run(
            run, scores, experiment=key["experiment"], classes=classes, events_config=events_config, kl_eps=kl_eps
        )
        keys = [pl.lit(v, dtype=pl.Int64 if k == "seed" else pl.Utf8).alias(k) for k, v in key.items()]
        parts.append(rows.with_columns(*keys))
    if not parts:
        return pl.DataFrame(schema=schemas.RUN_EVALUATION.columns)
    return pl.concat(parts).select(list(schemas.RUN_EVALUATION.columns))
