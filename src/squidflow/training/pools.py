"""The two image pools of SQUID-E §5 (the experiment sets drawn from them are squidflow.training.sets).

- SE: the selected ambiguous frames (results/dataset/frames.parquet), labelled with their video's event.
- SD: standard "high-certainty" images. At paper scale they come from `standard_data.path` (a folder
  `<root>/<event>/*.jpg` or a Parquet file with image_path and event, optionally split); in the demo they are the
  clean frames of the demo videos: frames where one event's visible evidence is at least
  `standard_data.min_evidence` (0.95), labelled with that event and decoded straight from the video.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import polars as pl

from squidflow.contracts.image_ids import image_id_expr

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".bmp")


def _hash_split(key: str, val_fraction: float) -> str:
    """A stable train/val split from a hash of `key` (the same on every machine and run)."""
    h = int(hashlib.sha1(key.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "val" if h < val_fraction else "train"


def se_pool(frames: pl.DataFrame) -> pl.DataFrame:
    """The SE pool: one row per selected frame, its JPEG as source."""
    return frames.select(
        "image_id",
        pl.lit("SE").alias("pool"),
        "event",
        "split",
        "video_id",
        pl.col("image_path").alias("source_path"),
        pl.lit(None, dtype=pl.Int64).alias("frame_index"),
    ).sort("image_id")


def _cap_per_event(df: pl.DataFrame, per_event: int | None, seed: int) -> pl.DataFrame:
    if not per_event:
        return df
    parts = []
    for (_event, _split), group in df.sort("image_id").group_by(["event", "split"], maintain_order=True):
        parts.append(group if len(group) <= per_event else group.sample(per_event, seed=seed).sort("image_id"))
    return pl.concat(parts) if parts else df


def sd_pool_from_demo(
    truth: pl.DataFrame,
    videos: pl.DataFrame,
    frames: pl.DataFrame,
    *,
    events: list[str],
    min_evidence: float = 0.95,
    frame_step: int = 1,
    max_per_event: int | None = None,
    val_fraction: float = 0.2,
    seed: int = 0,
) -> pl.DataFrame:
    """Clean frames of the demo videos: one event's evidence >= `min_evidence`, labelled with that event.

    Frames that are also selected SE frames are left out, so no image is in both pools. A video keeps the split the
    frames stage gave its SE frames (so SD validation frames come from videos SE does not train on); a video without
    SE frames gets a hashed split.
    """
    ok = videos.filter(pl.col("status") == "ok").select("video_id", pl.col("path").alias("source_path"))
    video_split = (
        frames.group_by("video_id", maintain_order=True).agg(pl.col("split").mode().sort().first().alias("split"))
        if len(frames)
        else pl.DataFrame(schema={"video_id": pl.Utf8, "split": pl.Utf8})
    )
    clean = (
        truth.filter(pl.col("frame_index") % max(frame_step, 1) == 0)
        .select("video_id", "frame_index", "evidence")
        .explode("evidence")
        .with_columns(
            pl.col("evidence").struct.field("event").alias("event"),
            pl.col("evidence").struct.field("weight").alias("weight"),
        )
    )
    clean = (
        clean.filter((pl.col("weight") >= min_evidence) & pl.col("event").is_in(events))
        .with_columns(image_id_expr())
        .filter(~pl.col("image_id").is_in(frames["image_id"].implode()))
        .unique(["image_id"], keep="first", maintain_order=True)
        .join(ok, on="video_id", how="inner", maintain_order="left")
        .join(video_split, on="video_id", how="left", maintain_order="left")
    )
    clean = clean.with_columns(
        pl.when(pl.col("split").is_null())
        .then(pl.col("video_id").map_elements(lambda v: _hash_split(v, val_fraction), return_dtype=pl.Utf8))
        .otherwise(pl.col("split"))
        .alias("split")
    )
    out = clean.select(
        "image_id", pl.lit("SD").alias("pool"), "event", "split", "video_id", "source_path", "frame_index"
    ).sort("video_id", "frame_index")
    return _cap_per_event(out, max_per_event, seed).sort("video_id", "frame_index")


def _standard_images(path: Path) -> pl.DataFrame:
    """(source_path, event[, split]) of the standard images: a folder `<root>/<event>/*.jpg`, or a Parquet file
    (image_path, event[, split]) whose relative paths are read from its own folder."""
    if path.is_dir():
        rows = [
            {"source_path": str(p), "event": event_dir.name}
            for event_dir in sorted(path.iterdir())
            if event_dir.is_dir()
            for p in sorted(event_dir.rglob("*"))
            if p.suffix.lower() in IMAGE_SUFFIXES
        ]
        df = pl.DataFrame(rows, schema={"source_path": pl.Utf8, "event": pl.Utf8})
    elif path.suffix == ".parquet":
        df = pl.read_parquet(path)
        missing = {"image_path", "event"} - set(df.columns)
        if missing:
            raise ValueError(
                f"{path}: standard_data Parquet needs columns image_path and event; missing {sorted(missing)}"
            )
        df = df.rename({"image_path": "source_path"})
        base = path.parent
        df = df.with_columns(
            pl.col("source_path").map_elements(
                lambda p: p if Path(p).is_absolute() else str(base / p), return_dtype=pl.Utf8
            )
        )
    else:
        raise ValueError(
            f"standard_data.path = {str(path)!r}: expected a folder <root>/<event>/*.jpg or a .parquet file"
        )
    return df


def sd_pool_from_standard_data(
    path: str | Path,
    *,
    events: list[str],
    max_per_event: int | None = None,
    val_fraction: float = 0.2,
    seed: int = 0,
) -> pl.DataFrame:
    """Standard images from a folder `<root>/<event>/*.jpg` or a Parquet file (image_path, event[, split])."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(
            f"standard_data.path = {str(path)!r} does not exist: put the standard images under {path}/<event>/*.jpg "
            f"for the events {events} (e.g. subsets of Visual Genome, WIDER, USED, UCLA Protest), or point it at a "
            "Parquet file with image_path and event; leave it empty to use the demo videos' clean frames"
        )
    df = _standard_images(path)
    df = df.filter(pl.col("event").is_in(events))
    found = set(df["event"].unique())
    if not set(events) <= found:
        raise ValueError(
            f"{path}: no standard images for event(s) {sorted(set(events) - found)}; "
            f"add {path}/<event>/*.jpg or rows with that event"
        )
    if "split" not in df.columns:
        df = df.with_columns(
            pl.col("source_path")
            .map_elements(lambda p: _hash_split(p, val_fraction), return_dtype=pl.Utf8)
            .alias("split")
        )
    df = df.with_columns(
        pl.col("source_path")
        .map_elements(lambda p: "sd_" + hashlib.sha1(p.encode()).hexdigest()[:12], return_dtype=pl.Utf8)
        .alias("image_id"),
        pl.lit("SD").alias("pool"),
        pl.lit(None, dtype=pl.Utf8).alias("video_id"),
        pl.lit(None, dtype=pl.Int64).alias("frame_index"),
    )
    out = df.select("image_id", "pool", "event", "split", "video_id", "source_path", "frame_index").sort("image_id")
    return _cap_per_event(out, max_per_event, seed)


# --- entry point for the rule ---------------------------------------------------------------------------------
def pool_images(pool: str, inputs: dict[str, pl.DataFrame], standard_data: dict, training: dict) -> pl.DataFrame:
    """The images of pool SE (selected frames) or SD (standard_data.path, else the demo videos' clean frames)."""
    events = list(training["events"])
    frames = inputs["frames"]
    if pool == "SE":
        return se_pool(frames)
    if standard_data["path"]:
        return sd_pool_from_standard_data(
            standard_data["path"],
            events=events,
            max_per_event=standard_data["max_per_event"],
            val_fraction=standard_data["val_fraction"],
            seed=training["data_seed"],
        )
    if "truth" not in inputs:
        raise ValueError(
            "standard_data.path is empty, so SD images are the demo videos' clean frames, but "
            "results/videos/demo/truth.parquet is not an input; set standard_data.path for non-demo sources"
        )
    return sd_pool_from_demo(
        inputs["truth"],
        inputs["videos"],
        frames,
        events=events,
        min_evidence=standard_data["min_evidence"],
        frame_step=standard_data["frame_step"],
        max_per_event=standard_data["max_per_event"],
        val_fraction=standard_data["val_fraction"],
        seed=training["data_seed"],
    )
