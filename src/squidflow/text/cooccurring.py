"""The text that co-occurs with each selected frame: its video's title, description and tags, and what is said
around the frame's timestamp.

"Apples to Oranges" builds its baselines from the text that surrounds an image (a news article, a web page); for a
video frame that is the upload's metadata plus the subtitles near the frame. `read_video_subtitles` finds and reads
each video's subtitle file once (schemas.SUBTITLES: a video without one is a row with status `none`, an unreadable
file a row with status `unreadable` and the reader's error, never a failed job); `cooccurring_text` gives every
frame its metadata and the cues overlapping [pts − w, pts + w] (schemas.COOCCURRING; empty when there are none), and
`cooccurring_report` counts the frames and videos that have no subtitle text, so an empty column is never silent.
"""

from __future__ import annotations

import logging

import polars as pl

from squidflow.contracts import schemas
from squidflow.contracts.paths import job_file, recorded_path
from squidflow.presentation.table_format import md_escape, md_table
from squidflow.text.subtitles import SubtitleError, in_window, read_subtitles, subtitle_file

log = logging.getLogger(__name__)


def read_video_subtitles(videos: pl.DataFrame, languages: list[str] | tuple[str, ...]) -> pl.DataFrame:
    """schemas.SUBTITLES: one row per `ok` video of the manifest (paths relative to the working directory)."""
    rows = []
    for vid, path in videos.filter(pl.col("status") == "ok").select("video_id", "path").iter_rows():
        row = {
            "video_id": vid,
            "status": "none",
            "language": None,
            "path": None,
            "error": None,
            "n_cues": 0,
            "cues": [],
        }
        found = subtitle_file(job_file(path), languages) if path else None  # object storage: the job's copies
        if found is not None:
            code, sub_path = found
            row |= {"language": code, "path": recorded_path(sub_path)}
            try:
                cues = read_subtitles(sub_path)
                row |= {
                    "status": "found",
                    "n_cues": cues.height,
                    "cues": cues.select("start_s", "end_s", "text").to_dicts(),
                }
            except (SubtitleError, OSError) as exc:
                log.warning("%s", exc)
                row |= {"status": "unreadable", "error": str(exc)}
        rows.append(row)
    if not rows:
        return schemas.empty(schemas.SUBTITLES)
    return pl.DataFrame(rows, schema=schemas.SUBTITLES.columns)


def cooccurring_text(
    frames: pl.DataFrame, videos: pl.DataFrame, subtitles: pl.DataFrame, *, window_s: float
) -> pl.DataFrame:
    """schemas.COOCCURRING: per frame of frames.parquet, its video's metadata and the subtitle cues in its window."""
    if window_s < 0:
        raise ValueError(f"text.subtitles.window_s = {window_s}: the half-width of the window must be >= 0 seconds")
    meta = {
        r["video_id"]: r
        for r in videos.select("video_id", "language", "title", "description", "tags").iter_rows(named=True)
    }
    subs = {r["video_id"]: r for r in subtitles.iter_rows(named=True)}
    cue_frames = {
        vid: pl.DataFrame(r["cues"] or [], schema=schemas.CUE.to_schema()).with_row_index("cue")
        for vid, r in subs.items()
    }
    missing = sorted(set(frames["video_id"].to_list()) - set(meta))
    if missing:
        raise ValueError(
            f"frames.parquet has frames of videos that results/videos/videos.parquet does not list: {missing[:5]}; "
            "rerun the frames stage (snakemake -R select_frames)"
        )
    rows = []
    for rec in frames.sort("video_id", "frame_index").iter_rows(named=True):
        vid, t = rec["video_id"], float(rec["pts_s"])
        m, s = meta[vid], subs.get(vid) or {}
        cues = cue_frames.get(vid)
        picked = in_window(cues, t, window_s).drop("cue").to_dicts() if cues is not None and cues.height else []
        rows.append(
            {
                "image_id": rec["image_id"],
                "video_id": vid,
                "frame_index": rec["frame_index"],
                "pts_s": t,
                "language": m["language"],
                "title": m["title"] or "",
                "description": m["description"] or "",
                "tags": m["tags"] or [],
                "subtitle_status": s.get("status", "none"),
                "subtitle_language": s.get("language"),
                "window_start_s": t - window_s,
                "window_end_s": t + window_s,
                "cues": picked,
                "subtitles": "\n".join(c["text"] for c in picked),
            }
        )
    if not rows:
        return schemas.empty(schemas.COOCCURRING)
    return pl.DataFrame(rows, schema=schemas.COOCCURRING.columns)


def cooccurring_report(cooc: pl.DataFrame, subtitles: pl.DataFrame, *, window_s: float) -> str:
    """Markdown: how many videos have subtitles, how many frames have none in their window, what could not be read."""
    n_frames = cooc.height
    empty = cooc.filter(pl.col("subtitles") == "")
    counts = dict(subtitles.group_by("status", maintain_order=True).len().iter_rows()) if subtitles.height else {}
    lines = [
        "# Co-occurring text per frame",
        "",
        f"Frames: {n_frames}. Subtitle window: ±{window_s:g} s around each frame's timestamp.",
        "",
        *md_table(["videos", "count"], [(status, counts.get(status, 0)) for status in ("found", "none", "unreadable")]),
        "",
        f"Frames with no subtitle text in their window: {empty.height} of {n_frames} "
        f"({empty.filter(pl.col('subtitle_status') == 'found').height} of them in videos that have subtitles).",
        f"Frames with an empty title: {cooc.filter(pl.col('title') == '').height}; "
        f"an empty description: {cooc.filter(pl.col('description') == '').height}; "
        f"no tags: {cooc.filter(pl.col('tags').list.len() == 0).height}.",
        "",
    ]
    bad = subtitles.filter(pl.col("status") == "unreadable")
    if bad.height:
        lines += [
            "## Unreadable subtitle files (left out)",
            "",
            *md_table(["video", "error"], bad.select("video_id", "error").iter_rows(), data=(0, 1)),
            "",
        ]
    none = subtitles.filter(pl.col("status") == "none")["video_id"].to_list()
    if none:
        lines += ["## Videos without subtitles", "", ", ".join(md_escape(v) for v in none), ""]
    return "\n".join(lines)
