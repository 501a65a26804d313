"""Frame extraction by seeking: a few frames of a video without decoding all of it.

Two modes (SQUID-E supplement A.1 and the SQUID-E release script):

* **even** — N frames (default 36) at even intervals: target i is at i × duration / N from the first frame, as in
  the release (its frame numbers are multiples of one step per video, frame 0 included). Decoding from a keyframe to
  an arbitrary frame costs up to a whole GOP, and the paper needs coverage, not exact timestamps; so a target takes
  the nearest keyframe when one lies within `keyframe_tolerance` × spacing and is not taken yet (one decoded frame),
  and otherwise the frame nearest the target time (decoded from its keyframe). `exact_times=True` decodes every
  target exactly. `frame_index` is still the frame's exact decode-order number.
* **exact** — the SQUID-E release lists decode-order frame numbers: frame k is the k-th frame OpenCV's sequential
  `cv2.VideoCapture.read()` delivers. Decoders deliver frames in presentation order, and OpenCV neither drops nor
  duplicates frames of a variable-frame-rate (VFR) video, so frame k is the k-th smallest presentation timestamp
  among the stream's packets (packets the container marks as discarded, flag `D`, are never delivered and are left
  out).

The frame table (every frame's timestamp and keyframe flag) is in `squidflow.frames.frame_table`, the decoders and
the letterbox rule in `squidflow.frames.decode`; this module plans which frames to take and writes a shard of
videos' frames and rows.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from squidflow.config.validation import defaults_from_schema, from_section
from squidflow.contracts.image_ids import shard_of
from squidflow.contracts.paths import DOWNLOAD_REPORT
from squidflow.frames.decode import decode_ranks, letterbox
from squidflow.frames.frame_table import ExtractionError, FrameTable, frame_table, resolve_decoder

log = logging.getLogger("squidflow.frames.extract")


@dataclass(frozen=True)
@defaults_from_schema("frames")
class FramesConfig:
    """The `frames` config section (workflow/schemas/config.schema.yaml documents each key)."""

    n: int
    mode: str  # auto | even | exact
    exact_times: bool
    keyframe_tolerance: float
    shards: int
    letterbox: bool
    letterbox_below: float
    letterbox_to: float
    frames_per_call: int
    decoder: str  # auto | torchcodec | ffmpeg

    @classmethod
    def from_config(cls, section: dict | None) -> FramesConfig:
        return from_section(cls, section)


def even_targets(table: FrameTable, n: int, *, exact_times: bool = False, tolerance: float = 0.25) -> list[int]:
    """Frame ranks for N evenly spaced targets (see the module docstring); all frames when the video has <= N."""
    if table.n_frames <= n:
        return list(range(table.n_frames))
    times = table.times
    start, duration = times[0], table.duration_s
    spacing = duration / n
    targets = start + spacing * np.arange(n)
    key_times = times[table.keyframe_ranks]
    chosen: list[int] = []
    taken: set[int] = set()
    for t in targets:
        rank = None
        if not exact_times and len(key_times):
            j = int(np.argmin(np.abs(key_times - t)))
            kr = int(table.keyframe_ranks[j])
            if abs(key_times[j] - t) <= tolerance * spacing and kr not in taken:
                rank = kr
        if rank is None:
            rank = int(np.clip(np.searchsorted(times, t), 1, len(times) - 1))
            rank = rank if abs(times[rank] - t) <= abs(times[rank - 1] - t) else rank - 1
            # never return the same frame twice: step to the nearest free neighbour
            step = 1
            while rank in taken and step < len(times):
                for cand in (rank + step, rank - step):
                    if 0 <= cand < len(times) and cand not in taken:
                        rank = cand
                        break
                step += 1
        taken.add(rank)
        chosen.append(rank)
    return chosen


# --- a shard of videos -> frame images + rows ----------------------------------------------------------------------


def targets_for(table: FrameTable, release_frames: Sequence[int] | None, cfg: FramesConfig) -> tuple[str, list[int]]:
    """(mode, frame ranks) for one video: the release's listed frames in exact mode, else N evenly spaced frames."""
    listed = [int(f) for f in release_frames] if release_frames is not None else []
    mode = cfg.mode
    if mode == "auto":
        mode = "exact" if listed else "even"
    if mode == "exact":
        if not listed:
            raise ExtractionError(f"{table.path}: frames.mode is 'exact' but the manifest lists no release_frames")
        return mode, listed
    return mode, even_targets(table, cfg.n, exact_times=cfg.exact_times, tolerance=cfg.keyframe_tolerance)


def save_image(frame: np.ndarray, path: Path, *, image_format: str = "jpg", quality: int = 95) -> None:
    """Write an RGB frame atomically (JPEG or PNG)."""
    from PIL import Image

    from squidflow.contracts.io import atomic_path

    with atomic_path(path) as tmp:
        img = Image.fromarray(frame)
        if image_format in ("jpg", "jpeg"):
            img.save(tmp, format="JPEG", quality=quality)
        else:
            img.save(tmp, format="PNG")


SHARD_MARKER = ".squidflow-frames"  # the file every shard folder holds (extract_videos)


def extract_videos(
    videos,
    cfg: FramesConfig,
    image_dir: str | Path,
    *,
    workdir: str | Path = ".",
    image_format: str = "jpg",
    quality: int = 95,
    workers: int | None = None,
):
    """Extract the frames of every `ok` video in `videos` (schemas.VIDEOS rows) into `image_dir/{video_id}/`.

    Returns (frames, status): frames has schemas.EXTRACTED_FRAMES columns; status has one row per video
    (schemas.EXTRACTION_STATUS) — `ok`, or `corrupt` with the decoder's error, so one bad file never stops the
    workflow. While one video decodes, the previous one's images are encoded by a second thread (the JPEG encoder
    releases the GIL).
    """
    from squidflow.contracts.io import marked_folder
    from squidflow.contracts.paths import job_file
    from squidflow.runtime.logs import progress

    # never an empty folder, even for a shard without a decodable video (contracts.io.marked_folder)
    image_dir = marked_folder(
        image_dir, SHARD_MARKER, "the frames extracted from this shard's videos: <video_id>/<frame>.<ext>"
    )
    rows, status = [], []
    has_release = "release_frames" in videos.columns
    decoder = resolve_decoder(cfg.decoder)
    log.info("decoder: %s", decoder)

    def save_all(items: list[tuple[np.ndarray, Path]]) -> None:
        for frame, out in items:
            if cfg.letterbox:
                frame = letterbox(frame, below=cfg.letterbox_below, to=cfg.letterbox_to)
            save_image(frame, out, image_format=image_format, quality=quality)

    writer = ThreadPoolExecutor(max_workers=1)
    pending = None
    for v in progress(videos.iter_rows(named=True), total=len(videos), desc="extract", unit="video"):
        vid = v["video_id"]
        path = Path(job_file(Path(workdir) / v["path"]))  # the job's local copy on object storage
        try:
            table = frame_table(path, decoder=decoder)
            mode, ranks = targets_for(table, v.get("release_frames") if has_release else None, cfg)
            frames = decode_ranks(table, ranks, frames_per_call=cfg.frames_per_call, workers=workers, decoder=decoder)
        except (ExtractionError, OSError) as exc:
            log.warning("video %s (%s) cannot be used: %s", vid, path, exc)
            status.append(_status_row(vid, "corrupt", error=str(exc)))
            continue
        outs = [image_dir / vid / f"{rank}.{image_format}" for rank in ranks]
        if pending is not None:
            pending.result()  # at most one video's images in memory besides the one decoding
        pending = writer.submit(save_all, list(zip(frames, outs, strict=True)))
        rows += _frame_rows(vid, table, ranks, outs)
        status.append(_status_row(vid, "ok", mode=mode, n_frames=len(ranks), video=table))
        log.info("%s: %d frames (%s mode, %d keyframes)", vid, len(ranks), mode, int(table.is_key[ranks].sum()))
    if pending is not None:
        pending.result()
    writer.shutdown()
    return _tables(rows, status)


def _frame_rows(vid: str, table: FrameTable, ranks: list[int], outs: list[Path]) -> list[dict]:
    """One video's rows of schemas.EXTRACTED_FRAMES."""
    from squidflow.contracts.paths import recorded_path

    return [
        {
            "video_id": vid,
            "frame_index": rank,
            "pts_s": float(table.pts[rank] * table.time_base),
            "is_keyframe": bool(table.is_key[rank]),
            "image_path": recorded_path(out),  # the path in the workflow, wherever this job wrote it
        }
        for rank, out in zip(ranks, outs, strict=True)
    ]


def _status_row(
    vid: str, status: str, *, error: str | None = None, mode: str | None = None, n_frames: int = 0, video=None
) -> dict:
    """One video's row of schemas.EXTRACTION_STATUS: `ok` with its mode, frame counts and displayed size (from its
    frame table `video`), or `corrupt` with the decoder's error."""
    width, height = video.display_size if video is not None else (None, None)
    return {
        "video_id": vid,
        "status": status,
        "error": error,
        "mode": mode,
        "n_frames": n_frames,
        "video_frames": video.n_frames if video is not None else None,
        "width": width,
        "height": height,
    }


def _tables(rows: list[dict], status: list[dict]):
    """(frames, status) as tables with schemas.EXTRACTED_FRAMES and schemas.EXTRACTION_STATUS columns."""
    import polars as pl

    frames_df = pl.DataFrame(
        rows,
        schema={
            "video_id": pl.Utf8,
            "frame_index": pl.Int64,
            "pts_s": pl.Float64,
            "is_keyframe": pl.Boolean,
            "image_path": pl.Utf8,
        },
    )
    status_df = pl.DataFrame(
        status,
        schema={
            "video_id": pl.Utf8,
            "status": pl.Utf8,
            "error": pl.Utf8,
            "mode": pl.Utf8,
            "n_frames": pl.Int64,
            "video_frames": pl.Int64,
            "width": pl.Int64,
            "height": pl.Int64,
        },
    )
    return frames_df, status_df


def shard_videos(videos, shard: int, n_shards: int, *, report: str = DOWNLOAD_REPORT):
    """The `ok` videos of the manifest that fall into `shard` (crc32 of the id modulo `n_shards`).

    A manifest without a single `ok` video stops here, the first step after acquisition, with one line saying so
    and where the reasons are (`report`), rather than as missing outputs a few rules later.
    """
    import polars as pl

    from squidflow.errors import EmptyError

    ok = videos.filter(pl.col("status") == "ok")
    if ok.is_empty():
        counts = ", ".join(
            f"{n} {s}" for s, n in sorted(videos.group_by("status", maintain_order=True).len().iter_rows())
        )
        raise EmptyError(
            f"no video is ok ({len(videos)} listed" + (f": {counts}" if counts else "") + "), so there is nothing to "
            f"extract frames from. Why each one failed: {report}. Fix the sources (or the network), then rerun: a "
            "replaced local file is checked again without a flag; `--config retry_failed=true` downloads the failed "
            "downloads again and checks unchanged local files again."
        )
    keep = [shard_of(v, n_shards) == shard for v in ok["video_id"].to_list()]
    return ok.filter(pl.Series(keep, dtype=pl.Boolean))


def checked_manifest(videos, statuses):
    """The manifest with extraction's verdict applied: a video the frames stage could not decode becomes `corrupt`
    with reason `frames_undecodable` and the decoder's error; a decoded one gets its frame count as decoded (OpenCV's
    count, where the container's header may list one more or less) and its displayed size from the frame table."""
    import polars as pl

    if "reason" not in videos.columns:
        videos = videos.with_columns(pl.lit(None, dtype=pl.Utf8).alias("reason"))
    facts = [c for c in ("video_frames", "width", "height") if c in statuses.columns]
    st = statuses.select("video_id", pl.col("status").alias("_st"), pl.col("error").alias("_err"),
                         *[pl.col(c).alias(f"_{c}") for c in facts])  # fmt: skip
    out = videos.join(st.unique("video_id", keep="last", maintain_order=True), on="video_id", how="left")
    bad = pl.col("_st") == "corrupt"
    updates = [
        pl.when(bad).then(pl.lit("corrupt")).otherwise(pl.col("status")).alias("status"),
        pl.when(bad).then(pl.format("frame extraction: {}", pl.col("_err"))).otherwise(pl.col("error")).alias("error"),
        pl.when(bad & pl.col("_err").str.contains("above the decoding cap", literal=True))
        .then(pl.lit("too_large"))
        .when(bad)
        .then(pl.lit("frames_undecodable"))
        .otherwise(pl.col("reason"))
        .alias("reason"),
    ]
    if "video_frames" in facts and "n_frames" in videos.columns:
        updates.append(pl.coalesce(pl.col("_video_frames"), pl.col("n_frames")).alias("n_frames"))
    for c in ("width", "height"):
        if c in facts and c in videos.columns:
            updates.append(pl.coalesce(pl.col(f"_{c}"), pl.col(c)).alias(c))
    return out.with_columns(updates).drop("_st", "_err", *[f"_{c}" for c in facts])
