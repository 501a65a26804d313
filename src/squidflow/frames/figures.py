"""Figures that show which frames were selected (SQUID-E supplement A.1: k-means on frame features, six per video).

A dataset built from videos is checked by looking at it. Two figures:

- `contact_sheets`: one sheet per event, one row per video, its selected frames left to right in time order, each
  labelled with its timestamp and k-means cluster and, where people judged it, the mean variant A judgment for the
  video's event and its certainty bin (the quantity Tables 1 and 2 bin by). Blank or near-duplicate frames, and a
  cluster that took only the ambiguous stretch, are seen at a glance.
- `frame_spread`: where in each video the selected frames fall (fraction of the video's duration): per event a
  strip per video, and the pooled distribution per event. Selection that crowds the start or the end of videos (an
  intro card, a black tail) shows up here before it shows up in the judgments.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import numpy as np
import polars as pl

from squidflow.contracts.io import inside
from squidflow.contracts.paths import job_file
from squidflow.presentation import style


def _thumbnail(path: str, width: int = 240):
    """The image at `path` shrunk to `width` pixels (an array), or None when it cannot be read."""
    from PIL import Image

    try:
        with Image.open(job_file(path)) as opened:
            image = opened.convert("RGB")
            if image.width > width:
                image = image.resize((width, max(1, round(image.height * width / image.width))))
            return np.asarray(image)
    except OSError:
        return None


def judged_certainty(scores: pl.DataFrame | None, event: str, events_config: dict | None = None) -> pl.DataFrame:
    """Per frame of `event`, the mean variant A judgment under the event's own prompt, and its certainty bin.

    Variant A shows six images of the prompted event (variant B mixes in a similar event), so this is the number a
    reader expects beside a frame: how sure people were that it shows the event its video is about. The prompt is the
    wording annotators saw (config `events.<id>.prompt`, squidflow.vocabulary.events.event_prompt)."""
    from squidflow.vocabulary.events import event_prompt

    columns = {"video_id": pl.Utf8, "frame_index": pl.Int64, "people_mean": pl.Float64, "certainty_bin": pl.Utf8}
    if scores is None or scores.is_empty():
        return pl.DataFrame(schema=columns)
    prompts = {event, event_prompt(event, events_config)}
    return (
        scores.filter((pl.col("variant") == "A") & pl.col("event_prompt").is_in(list(prompts)))
        .unique(["video_id", "frame_index"], keep="first", maintain_order=True)
        .select(list(columns))
    )


def sheet_rows(frames: pl.DataFrame, event: str, max_videos: int) -> pl.DataFrame:
    """The selected frames of `event`'s first `max_videos` videos (by id), in time order within each video."""
    videos = sorted(frames.filter(pl.col("event") == event)["video_id"].unique().to_list())[:max_videos]
    return frames.filter(pl.col("video_id").is_in(videos)).sort(["video_id", "pts_s"])


def _draw_frame(ax, row: dict, video_id: str | None) -> None:
    """One frame's thumbnail, framed in its split's colour, with its time, cluster and judgment below; `video_id` on
    the left of a row's first frame."""
    image = _thumbnail(row["image_path"])
    if image is None:
        ax.text(0.5, 0.5, "image\nmissing", ha="center", va="center", transform=ax.transAxes)
    else:
        ax.imshow(image)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    for spine in ax.spines.values():
        spine.set_visible(True)
        spine.set_color(style.SPLIT_COLOURS.get(row["split"], style.GREY))
        spine.set_linewidth(1.5)
    label = f"{row['pts_s']:.1f} s · cluster {row['cluster']}"
    if row.get("people_mean") is not None:
        label += f"\njudged {row['people_mean']:.0f} ({row['certainty_bin']})"
    ax.set_xlabel(label, fontsize=style.FONT_SIZE - 2, labelpad=2)
    if video_id is not None:
        ax.set_ylabel(video_id, fontsize=style.FONT_SIZE - 1, rotation=0, ha="right", va="center", labelpad=4)


def contact_sheet(
    frames: pl.DataFrame,
    event: str,
    path: str | Path,
    *,
    scores: pl.DataFrame | None = None,
    events_config: dict | None = None,
    max_videos: int = 12,
    note: str = "",
) -> int:
    """Write the contact sheet of one event to `path`; returns its panel count (one per frame drawn)."""
    rows = sheet_rows(frames, event, max_videos)
    rows = rows.join(
        judged_certainty(scores, event, events_config),
        on=["video_id", "frame_index"],
        how="left",
        maintain_order="left",
    )
    videos = rows["video_id"].unique(maintain_order=True).to_list()
    per_video = max(int(cast(int, rows.group_by("video_id", maintain_order=True).len()["len"].max()) or 1), 1)
    n_all = frames.filter(pl.col("event") == event)["video_id"].n_unique()
    thumb_h = style.PAGE_WIDTH_IN / per_video * 0.75
    fig, axes = style.figure(
        max(len(videos), 1),
        per_video,
        width=style.PAGE_WIDTH_IN,
        height=min(40.0, 0.5 + len(videos) * (thumb_h + 0.35)),
    )
    for r, video_id in enumerate(videos):
        video_rows = rows.filter(pl.col("video_id") == video_id)
        for c in range(per_video):
            ax = axes[r][c]
            if c >= video_rows.height:
                ax.set_visible(False)
                continue
            _draw_frame(ax, video_rows.row(c, named=True), video_id if c == 0 else None)
    judged = int(rows["people_mean"].is_not_null().sum())
    shown = f"{len(videos)} of {n_all} videos" if n_all > len(videos) else f"{len(videos)} videos"
    fig.suptitle(
        f"Selected frames of {event}: {shown}, {rows.height} frames, {judged} judged "
        f"(frame border: split — blue train, orange val, green test)"
    )
    style.note(fig, note)
    return style.save(
        fig,
        path,
        title=f"Contact sheet: {event}",
        description=f"{len(videos)} videos, {rows.height} frames, {judged} judged",
    )


def contact_sheets(
    frames: pl.DataFrame,
    folder: str | Path,
    *,
    scores: pl.DataFrame | None = None,
    events_config: dict | None = None,
    max_videos: int = 12,
    note: str = "",
) -> dict[str, int]:
    """One contact sheet per event, `folder`/{event}.png; returns event -> panel count."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return {
        event: contact_sheet(
            frames,
            event,
            inside(folder, f"{event}.png", what="event"),
            scores=scores,
            events_config=events_config,
            max_videos=max_videos,
            note=note,
        )
        for event in sorted(frames["event"].unique().to_list())
    }


def relative_positions(frames: pl.DataFrame, videos: pl.DataFrame) -> pl.DataFrame:
    """Each selected frame's position in its video as a fraction of the video's duration (0 = start, 1 = end).

    The duration is the manifest's (the stream's, else the container's: squidflow.videos.probe.best_duration);
    where it is missing or 0, n_frames / fps; failing both, the last selected frame's timestamp (which then reads
    as 1)."""

    def known(column: pl.Expr) -> pl.Expr:
        return pl.when(column > 0).then(column)

    meta = videos.select(
        "video_id",
        pl.coalesce(known(pl.col("duration_s")), known(pl.col("n_frames").cast(pl.Float64) / pl.col("fps"))).alias(
            "duration_s"
        ),
    )
    out = frames.join(meta, on="video_id", how="left", maintain_order="left").with_columns(
        pl.coalesce("duration_s", pl.col("pts_s").max().over("video_id")).alias("duration_s")
    )
    return out.with_columns(
        (pl.col("pts_s") / pl.col("duration_s")).clip(0.0, 1.0).fill_nan(0.0).alias("position")
    ).sort(["event", "video_id", "pts_s"])


def _event_strips(ax, ev: pl.DataFrame, event: str, i: int, max_videos: int) -> None:
    """One event's panel: a strip per video (its first `max_videos`), a tick where each selected frame falls."""
    video_ids = ev["video_id"].unique(maintain_order=True).to_list()
    shown = video_ids[:max_videos]
    for y, video_id in enumerate(shown):
        x = ev.filter(pl.col("video_id") == video_id)["position"].to_numpy()
        ax.hlines(y, 0, 1, color=style.GREY, linewidth=0.6)
        ax.plot(
            x,
            np.full_like(x, y),
            linestyle="none",
            marker="|",
            markersize=8,
            markeredgewidth=1.5,
            color=style.SERIES[i % len(style.SERIES)],
        )
    ax.set_yticks(range(len(shown)), shown, fontsize=style.FONT_SIZE - 2)
    ax.invert_yaxis()
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("position in video (fraction of duration)")
    more = f", first {len(shown)} of {len(video_ids)} videos" if len(video_ids) > len(shown) else ""
    ax.set_title(f"{event}{more}")
    ax.grid(axis="y", visible=False)
    style.panel_letter(ax, i)


def _add_to_histogram(hist_ax, ev: pl.DataFrame, event: str, i: int, bins: np.ndarray) -> None:
    """One event's line in the pooled panel: the share of its selected frames in each tenth of the videos."""
    counts, _ = np.histogram(ev["position"].to_numpy(), bins=bins)
    share = counts / max(counts.sum(), 1)
    hist_ax.plot(
        (bins[:-1] + bins[1:]) / 2,
        share,
        marker=style.MARKERS[i % len(style.MARKERS)],
        color=style.SERIES[i % len(style.SERIES)],
        label=f"{event} ({ev.height} frames)",
    )


def frame_spread(
    frames: pl.DataFrame, videos: pl.DataFrame, path: str | Path, *, max_videos: int = 12, note: str = ""
) -> int:
    """Write the spread figure: one strip panel per event and the pooled distribution; returns its panel count."""
    positions = relative_positions(frames, videos)
    events = sorted(positions["event"].unique().to_list())
    n_panels = len(events) + 1
    ncols = min(3, n_panels)
    nrows = -(-n_panels // ncols)
    fig, axes = style.figure(nrows, ncols, height=min(12.0, 0.6 + nrows * 2.5))
    flat = [ax for row in axes for ax in row]
    bins = np.linspace(0, 1, 11)
    hist_ax = flat[len(events)]
    for i, event in enumerate(events):
        ev = positions.filter(pl.col("event") == event)
        _event_strips(flat[i], ev, event, i, max_videos)
        _add_to_histogram(hist_ax, ev, event, i, bins)
    hist_ax.axhline(0.1, color=style.GREY, linestyle="--", linewidth=1, label="uniform")
    hist_ax.set_xlim(0, 1)
    hist_ax.set_ylim(bottom=0)
    hist_ax.set_xlabel("position in video (fraction of duration)")
    hist_ax.set_ylabel("share of selected frames (10 bins)")
    hist_ax.set_title("all videos, per event")
    hist_ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2, frameon=False)
    style.panel_letter(hist_ax, len(events))
    for ax in flat[n_panels:]:
        ax.set_visible(False)
    fig.suptitle("Where the selected frames fall in their videos")
    style.note(fig, note)
    return style.save(
        fig,
        path,
        title="Spread of the selected frames over each video's duration",
        description=f"{len(events)} events, {positions['video_id'].n_unique()} videos, {positions.height} frames",
    )
