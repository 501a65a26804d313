"""Image ids: a frame of a video is named `<video_id>_<frame_index>` in every table, batch file and experiment set.

Video ids may contain underscores (UCF ids, YouTube ids), frame indices never do, so the id splits at its last `_`.
"""

from __future__ import annotations

import polars as pl


def image_id(video_id: str, frame_index: int) -> str:
    """(video_id, frame_index) -> `<video_id>_<frame_index>`."""
    return f"{video_id}_{frame_index}"


def image_id_expr(video_id: str = "video_id", frame_index: str = "frame_index") -> pl.Expr:
    """The same as a polars expression over two columns, named `image_id`."""
    return pl.format("{}_{}", video_id, frame_index).alias("image_id")


def split_image_id(image: str) -> tuple[str, int]:
    """`{video_id}_{frame_index}` -> (video_id, frame_index); video ids may contain underscores, frame indices don't."""
    video_id, _, frame = str(image).rpartition("_")
    if not video_id or not frame.isdigit() or len(frame) > 18:  # a frame index fits in int64
        raise ValueError(f"image id {str(image)[:80]!r} is not of the form <video_id>_<frame_index>")
    return video_id, int(frame)
