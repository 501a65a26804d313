"""The acquisition figure: how many videos of each event were acquired, and why the others were not.

At scale most of acquisition is failures (SQUID-E §3.1 downloads from YouTube; links die, sites refuse), and what a
person does next depends on the mix: a bar of `removed` videos is gone for good, a bar of `rate_limited` asks for a
slower pace and `retry_failed`. So the figure puts (a) videos per event × status next to (b) the failure reasons,
each reason coloured by the status it leads to (squidflow.videos.failures.REASONS).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from squidflow.presentation import style

if TYPE_CHECKING:
    from matplotlib.axes import Axes

STATUSES = ("ok", "unavailable", "failed", "corrupt", "pending")


def status_counts(videos: pl.DataFrame) -> pl.DataFrame:
    """event × status -> number of videos (every status of STATUSES a column, zeros included), events sorted."""
    counts = videos.group_by("event", "status", maintain_order=True).len()
    rows = []
    for event in sorted(videos["event"].drop_nulls().unique().to_list()):
        row = {"event": event}
        for status in STATUSES:
            hit = counts.filter((pl.col("event") == event) & (pl.col("status") == status))
            row[status] = int(hit["len"].sum()) if hit.height else 0
        rows.append(row)
    return pl.DataFrame(rows, schema={"event": pl.Utf8, **{s: pl.Int64 for s in STATUSES}})


def failure_reasons(videos: pl.DataFrame) -> pl.DataFrame:
    """reason, status, n over the videos that are not ok, most frequent first.

    A video without a `reason` (a manifest written before reasons existed, or one that frame extraction found
    undecodable) is counted under its status, so every failed video appears in the figure."""
    bad = videos.filter(pl.col("status") != "ok")
    if "reason" not in bad.columns:
        bad = bad.with_columns(pl.lit(None, dtype=pl.Utf8).alias("reason"))
    bad = bad.with_columns(pl.coalesce("reason", "status").alias("reason"))
    return (
        bad.group_by("reason", "status", maintain_order=True).len("n").sort(["n", "reason"], descending=[True, False])
    )


def _events_panel(ax: Axes, counts: pl.DataFrame) -> None:
    """Panel a: one stacked bar per event, a segment per status (pending only where a video is), the total beside."""
    events = counts["event"].to_list()
    left = [0] * len(events)
    for status in STATUSES:
        values = counts[status].to_list()
        if status == "pending" and not any(values):
            continue
        ax.barh(
            events,
            values,
            left=left,
            color=style.STATUS_COLOURS[status],
            hatch=style.STATUS_HATCHES[status],
            edgecolor="white",
            linewidth=0.5,
            label=f"{status} ({sum(values)})",
        )
        left = [a + b for a, b in zip(left, values, strict=True)]
    for y, total in enumerate(left):
        ax.annotate(
            str(total), (total, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=style.FONT_SIZE - 1
        )
    ax.invert_yaxis()
    ax.set_xlabel("videos")
    ax.set_title("videos per event and status")
    ax.legend(
        loc="upper center",
        bbox_to_anchor=(0.5, -0.2),
        ncol=len(STATUSES),
        frameon=False,
        handlelength=1.2,
        columnspacing=0.8,
    )
    ax.grid(axis="y", visible=False)


def _reasons_panel(ax: Axes, reasons: pl.DataFrame, n_videos: int) -> None:
    """Panel b: a bar per failure reason, coloured by the status it leads to; a sentence when every video is ok."""
    if reasons.height:
        ax.barh(
            reasons["reason"].to_list(),
            reasons["n"].to_list(),
            color=[style.STATUS_COLOURS.get(s, style.GREY) for s in reasons["status"]],
            hatch=None,
            edgecolor="white",
        )
        for y, (n, status) in enumerate(zip(reasons["n"], reasons["status"], strict=True)):
            ax.annotate(
                f"{n} ({status})",
                (n, y),
                xytext=(3, 0),
                textcoords="offset points",
                va="center",
                fontsize=style.FONT_SIZE - 1,
            )
        ax.invert_yaxis()
        ax.set_xlabel("videos not ok")
        ax.grid(axis="y", visible=False)
    else:
        ax.text(0.5, 0.5, f"every video is ok ({n_videos})", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
        ax.set_yticks([])
    ax.set_title("why videos are not ok (reason)")


def acquisition_figure(videos: pl.DataFrame, path: str | Path, *, note: str = "") -> int:
    """Write the two-panel acquisition figure of the manifest `videos` to `path`; returns its panel count."""
    counts = status_counts(videos)
    reasons = failure_reasons(videos)
    n_events = max(counts.height, 1)
    height = max(2.6, min(9.0, 0.9 + 0.28 * max(n_events, reasons.height)))
    fig, axes = style.figure(1, 2, height=height, width=style.PAGE_WIDTH_IN)
    ax_events, ax_reasons = axes[0]
    _events_panel(ax_events, counts)
    _reasons_panel(ax_reasons, reasons, videos.height)
    for i, ax in enumerate((ax_events, ax_reasons)):
        style.panel_letter(ax, i)
    style.note(fig, note)
    total_ok = int(counts["ok"].sum())
    return style.save(
        fig,
        path,
        title="Video acquisition: videos per event and status, failure reasons",
        description=f"{videos.height} videos, {total_ok} ok, {reasons['n'].sum() or 0} not ok",
    )
