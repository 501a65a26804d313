"""Annotation waves: the first wave (the task, round 1, and its repeat, round 2: SQUID-E §4.2's intra-annotator
agreement) and each next round of ratings (annotation.next_round: the images whose next rating shrinks the
uncertainty most), ingested as a wave of its own, `round2`, `round3`, ...

A wave is not a `round`: `round: 2` stays SQUID-E's repeat of the same task by the same annotator. A next-round file
says its wave by its name (a Label Studio export of project `A_round2`, `A_round2.json`; an MTurk batch
`batch_results_round2.csv`) or by the `wave` key of its entry in judgments.label_studio.exports or judgments.batches.
The soft labels and image scores use every wave; Table 7 stays the first wave's, as in the paper.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import polars as pl

from squidflow.statistics.intervals import IntervalConfig, item_mean_intervals

FIRST = "first"
_NEXT = re.compile(r"(?:^|[_\-.\s])round[_\-]?(\d+)$", re.IGNORECASE)


def wave_of(path) -> str:
    """`round<n>` (n >= 2) when a file's name ends so (A_round2.json, batch_results_round2.csv), else `first`."""
    m = _NEXT.search(Path(str(path)).stem)
    return f"round{int(m.group(1))}" if m and int(m.group(1)) >= 2 else FIRST


def first_wave(judgments: pl.DataFrame) -> pl.DataFrame:
    """Only the first wave's ratings (Table 7 and the quality checks that compare with the paper)."""
    if "wave" not in judgments.columns:
        return judgments
    return judgments.filter(pl.col("wave").fill_null(FIRST) == FIRST)


def per_wave(judgments: pl.DataFrame) -> dict[str, int]:
    """wave -> ratings, the first wave first."""
    if judgments.is_empty():
        return {}
    waves = judgments.select(
        pl.col("wave").fill_null(FIRST) if "wave" in judgments.columns else pl.lit(FIRST).alias("wave")
    )
    counts = dict(waves.group_by("wave").len().iter_rows())
    return {w: counts[w] for w in in_order(counts)}


def in_order(waves) -> list[str]:
    """Waves in the order they were collected: first, round2, round3, ..., round10."""
    return sorted(set(waves), key=lambda w: (w != FIRST, len(w), w))


ITEM = ["video_id", "frame_index", "event_prompt", "variant"]  # a soft label's unit: image, prompt, variant
NARROWING = {
    "wave": pl.Utf8,
    **{c: pl.Utf8 if c in ("video_id", "event_prompt", "variant") else pl.Int64 for c in ITEM},
    "n_before": pl.Int64,
    "n_after": pl.Int64,
    "interval_width_before": pl.Float64,
    "interval_width_after": pl.Float64,
}


def narrowing(judgments: pl.DataFrame, cfg: IntervalConfig, excluded: Iterable[str] = ()) -> pl.DataFrame:
    """Per next-round wave (round2, ...) and each image, prompt and variant it rated: the ratings and the width of
    the interval of the mean (squidflow.statistics.intervals.item_mean_intervals: the published soft labels' `mean_lo`,
    `mean_hi`) before the wave (the waves collected before it) and after it. The ratings the soft labels use: round 1
    (not SQUID-E's repeat), the excluded raters left out; a width is NaN where fewer than two ratings make no
    interval."""
    j = judgments.filter((pl.col("round") == 1) & ~pl.col("annotator").is_in(list(excluded)))
    j = j.with_columns(pl.col("wave").fill_null(FIRST) if "wave" in j.columns else pl.lit(FIRST).alias("wave"))
    j = j.sort("hit", "position", maintain_order=True)
    order = in_order(j["wave"].to_list())
    parts = []
    for k, wave in enumerate(order[1:], start=1):
        items = j.filter(pl.col("wave") == wave).select(ITEM).unique(maintain_order=True).sort(ITEM)
        sides = {}
        for when, waves in (("before", order[:k]), ("after", order[: k + 1])):
            lists = (
                j.filter(pl.col("wave").is_in(waves))
                .group_by(ITEM, maintain_order=True)
                .agg(pl.col("rating").alias("r"))
            )
            got = items.join(lists, on=ITEM, how="left", maintain_order="left")["r"].to_list()
            ratings = [list(r) if r is not None else [] for r in got]
            lo, hi = item_mean_intervals(ratings, cfg)
            sides[when] = (ratings, hi - lo)
        parts.append(
            items.with_columns(
                pl.lit(wave).alias("wave"),
                pl.Series("n_before", [len(r) for r in sides["before"][0]], dtype=pl.Int64),
                pl.Series("n_after", [len(r) for r in sides["after"][0]], dtype=pl.Int64),
                pl.Series("interval_width_before", sides["before"][1], dtype=pl.Float64),
                pl.Series("interval_width_after", sides["after"][1], dtype=pl.Float64),
            ).select(list(NARROWING))
        )
    return pl.concat(parts) if parts else pl.DataFrame(schema=NARROWING)


def narrowing_summary(per_item: pl.DataFrame, judgments: pl.DataFrame) -> list[dict]:
    """Per next-round wave: the ratings it added (its rows in `judgments`), the items it rated, the median interval
    width of those items before and after it (over the items that had an interval before), how many narrowed, and
    how many had too few ratings for an interval before and have one after."""
    added = per_wave(judgments)
    out = []
    for wave in in_order(per_item["wave"].to_list()):
        w = per_item.filter(pl.col("wave") == wave)
        before, after = w["interval_width_before"].to_numpy(), w["interval_width_after"].to_numpy()
        both = np.isfinite(before) & np.isfinite(after)
        out.append(
            {
                "wave": wave,
                "ratings": added.get(wave, 0),
                "items": w.height,
                "median_before": float(np.median(before[both])) if both.any() else float("nan"),
                "median_after": float(np.median(after[both])) if both.any() else float("nan"),
                "narrower": int((after[both] < before[both]).sum()),
                "compared": int(both.sum()),
                "first_interval": int((~np.isfinite(before) & np.isfinite(after)).sum()),
            }
        )
    return out


def summary_line(s: dict) -> str:
    """One wave's summary in words (the card and next_round.md say it so)."""
    line = f"{s['wave']} added {s['ratings']:,} ratings to {s['items']:,} images × prompts × variants"
    if s["compared"]:
        line += (
            f"; the median width of the interval of the mean went from {s['median_before']:.1f} to "
            f"{s['median_after']:.1f} rating points, narrower for {s['narrower']} of {s['compared']}"
        )
    if s["first_interval"]:
        line += f"; {s['first_interval']} had too few ratings for an interval before and have one now"
    return line
