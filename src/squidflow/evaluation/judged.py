"""The judged images a model is scored on, each with its event, correct labels and certainty bins.

SQUID-E §5.2 scores the verb models on the parade and protest images, binned by the human certainty of variant A
(each image rated for its own video's event). Here an image enters when its judgment under `evaluation.variant`
prompts an event of `evaluation.label_map`; that event's labels are the ones that count as correct. Only
results/judgments/image_scores.parquet is read, so the tables build from the release judgments alone, without
frames or videos.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import polars as pl

from squidflow.evaluation.labels import judged_events

log = logging.getLogger(__name__)


def judged_images(
    scores: pl.DataFrame,
    *,
    variant: str,
    label_map: Mapping[str, list[str]],
    events_config: Mapping | None = None,
) -> pl.DataFrame:
    """image_scores rows of `variant` whose prompt's event is in `label_map` -> video_id, frame_index, event,
    targets (the event's correct labels), people_mean, certainty_bin, alt_bins."""
    rows = scores.filter(pl.col("variant") == variant)
    if rows.is_empty():
        have = sorted(set(scores["variant"].to_list()))
        raise ValueError(
            f"evaluation.variant = {variant!r}: results/judgments/image_scores.parquet has no judgments of "
            f"that variant (it has {have}); set evaluation.variant to one of them"
        )
    rows = rows.with_columns(judged_events(rows["event_prompt"], label_map, events_config).alias("event"))
    images = rows.filter(pl.col("event").is_not_null())
    if images.is_empty():
        prompts = sorted(set(rows["event_prompt"].to_list()))
        raise ValueError(
            f"evaluation.label_map: none of its events {sorted(label_map)} is prompted in the variant "
            f"{variant} judgments (prompts: {prompts}); its keys must name judged events"
        )
    targets = pl.DataFrame(
        {"event": list(label_map), "targets": [list(v) for v in label_map.values()]},
        schema={"event": pl.Utf8, "targets": pl.List(pl.Utf8)},
    )
    out = (
        images.join(targets, on="event", how="left", maintain_order="left")
        .select(
            "video_id",
            "frame_index",
            "event",
            "targets",
            "people_mean",
            "certainty_bin",
            "alt_bins",
        )
        .sort("video_id", "frame_index", "event")
    )
    log.info(
        "%d judged images of variant %s in events %s",
        len(out),
        variant,
        dict(out.group_by("event", maintain_order=True).len().sort("event").iter_rows()),
    )
    return out
