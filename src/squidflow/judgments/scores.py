"""Per image and prompt: the mean judgment and its spread, and the certainty bins the experiments use.

A certainty bin is one of 0-20, 20-40, 40-60, 60-80, 80-100 with the lower edge inclusive and 100 in the last bin
(the binning of Table 2 and of κ in Table 7). The "alt" bins of SQUID-E supplement D.3 bin every judgment on its own, so an
image rated 10, 50, 90 sits in three bins rather than in the bin of its mean. High certainty (SQUID-E §4.1,
Figure 3) is a mean at or above 95.
"""

from __future__ import annotations

from collections.abc import Collection

import polars as pl

from squidflow.contracts import schemas
from squidflow.statistics.certainty import CERTAINTY_BINS, certainty_bin  # the project's one binning

BIN_LABELS = list(CERTAINTY_BINS)
IMAGE_KEY = ["video_id", "frame_index", "event_prompt", "variant"]


def image_scores(judgments: pl.DataFrame, excluded: Collection[str] = (), high_certainty: float = 95.0) -> pl.DataFrame:
    """Aggregate first-round judgments of annotators not excluded; people_std is the population std (ddof=0)."""
    j = judgments.filter(~pl.col("annotator").is_in(list(excluded)))
    if "round" in j.columns:
        j = j.filter(pl.col("round") == 1)
    j = j.with_columns(certainty_bin(pl.col("rating").cast(pl.Float64)).alias("alt_bin"))
    out = (
        j.group_by(IMAGE_KEY, maintain_order=True)
        .agg(
            pl.col("rating").mean().alias("people_mean"),
            pl.col("rating").std(ddof=0).alias("people_std"),
            pl.len().cast(pl.Int64).alias("n"),
            pl.col("alt_bin").sort().alias("alt_bins"),
        )
        .with_columns(
            certainty_bin(pl.col("people_mean")).alias("certainty_bin"),
            (pl.col("people_mean") >= high_certainty).alias("high_certainty"),
        )
        .sort(IMAGE_KEY)
    )
    return out.select(list(schemas.IMAGE_SCORES.columns))


def high_certainty_share(scores: pl.DataFrame) -> pl.DataFrame:
    """Per variant: images, how many are high certainty, and their share (paper: A 16%, B 19%)."""
    return (
        scores.group_by("variant", maintain_order=True)
        .agg(pl.len().alias("n_images"), pl.col("high_certainty").sum().alias("n_high_certainty"))
        .with_columns((pl.col("n_high_certainty") / pl.col("n_images")).alias("share"))
        .sort("variant")
    )
