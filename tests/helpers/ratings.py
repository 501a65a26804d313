"""Judgments as a rating matrix, built apart from the library (squidflow.judgments.agreement builds its own by a
scatter): the reference through which the agreement tests compare the library's measures with other packages'."""

from __future__ import annotations

import numpy as np
import polars as pl

HIT_ITEM = ["video_id", "frame_index", "event_prompt", "hit"]  # an item: an image under a prompt in one HIT


def rating_matrix(judgments: pl.DataFrame) -> np.ndarray:
    """The first round's items × annotator positions, each cell the mean of that position's ratings of the item, NaN
    where it has none. Rows and columns in no particular order: α and κ do not depend on it."""
    first = judgments.filter(pl.col("round") == 1) if "round" in judgments.columns else judgments
    if first.is_empty():
        return np.empty((0, 0))
    wide = first.pivot(on="position", index=HIT_ITEM, values="rating", aggregate_function="mean")
    return wide.drop(HIT_ITEM).cast(pl.Float64).to_numpy()
