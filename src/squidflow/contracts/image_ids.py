"""Image ids: a frame of a video is named `<video_id>_<frame_index>` in every table, batch file and experiment set.

Video ids may contain underscores (UCF ids, YouTube ids), frame indices never do, so the id splits at its last `_`.
A video's shard (`shard_of`), the job of a sharded stage that handles it, is a function of its id alone.
"""

from __future__ import annotations

import zlib

import polars as pl


def shard_of(video_id: str, shards: int) -> int:
    """The shard of a video among `shards`: crc32 of its id modulo the count, the same in every process, run and
    machine (unlike Python's salted hash()). The download shards, the frame shards and the manifest's pointer to a
    failed video's log all use it, so a video's shards can be found from its id alone."""
    return zlib.crc32(video_id.encode("utf-8")) % max(1, int(shards))


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


# --- ids as people write them ---------------------------------------------------------------------------------------
# The SQUID-E release writes an id starting with `-` as `"""-jmFL0i8_ZU"""` (a spreadsheet's guard against
# formulas); read back with pandas it is `"-jmFL0i8_ZU"`. Every reader of video or image ids strips whitespace and
# surrounding quotes, and says so when an id is unknown, with the closest known one.
QUOTES = "\"'"
HINTS = 5  # the unknown ids of one message that get the closest-id hint (each one compares with every known id)


def id_expr(column: str) -> pl.Expr:
    """A text column of ids as written -> the ids: surrounding whitespace and quotes stripped ("" -> null)."""
    return (
        pl.col(column)
        .cast(pl.Utf8)
        .str.strip_chars()
        .str.strip_chars(QUOTES)
        .str.strip_chars()
        .replace("", None)
        .alias(column)
    )


def clean_id(written: object) -> tuple[str, str]:
    """An id as written -> (the id, what was stripped: "", "quotes", "whitespace" or "quotes and whitespace")."""
    text = "" if written is None else str(written)
    once = text.strip()
    bare = once.strip(QUOTES).strip()
    parts = [
        p
        for p, changed in (("quotes", bare != once), ("whitespace", once != text or bare != once.strip(QUOTES)))
        if changed
    ]
    return bare, " and ".join(parts)


def closest_id(value: str, known) -> str | None:
    """The known id most like `value` (difflib's ratio, at least 0.6), None when none is close."""
    import difflib

    found = difflib.get_close_matches(str(value), [str(k) for k in known], n=1, cutoff=0.6)
    return found[0] if found else None


def unknown_id_hint(written: object, known) -> str:
    """What to add to an "unknown id" message: what was stripped from the id as written, and the closest known id."""
    bare, stripped = clean_id(written)
    hint = f" (read as {bare!r}: {stripped} stripped from {str(written)!r})" if stripped else ""
    near = closest_id(bare, known)
    return hint + (f"; closest known id: {near!r}" if near is not None else "; no known id is close")
