"""An MTurk batch-results CSV read with polars: a million assignments in seconds, the same judgments and the same
problems as reading it row by row (`squidflow.judgments.ingest.read_batch_row`).

Every check of a row is a column expression (empty ids, the variant, each slot's image id and rating, an image not
in the frame table, an image twice in one assignment). A row that fails one, or that shares a judgment (worker,
image, prompt, variant, round) with another row or with a batch read before, is handed to the row-by-row reader in
file order, so its message — and which of two rows keeps a shared judgment — is exactly that reader's. The other
rows cannot touch one another: their judgments are taken as they are, and their annotator position within their HIT
is counted once every row's fate is known. `benchmarks/ingest.py` times both readers on one file.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from squidflow import schemas
from squidflow.image_ids import split_image_id
from squidflow.io import FORMULA_START

# Python's str.strip() removes exactly these (str.isspace); polars' default strips a slightly different set
WHITESPACE = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
KEY = ["annotator", "video_id", "frame_index", "event_prompt", "variant", "round"]
SEEN_FRAMES = "__squidflow_seen_frames__"  # where a `seen` dict keeps the judgments of batches read with polars


def _text(col: str) -> pl.Expr:
    return pl.col(col).fill_null("").str.strip_chars(WHITESPACE)


def _unneutralise(expr: pl.Expr) -> pl.Expr:
    starts = pl.any_horizontal(expr.str.slice(1).str.starts_with(s) for s in FORMULA_START)
    return pl.when(expr.str.starts_with("'") & starts).then(expr.str.slice(1)).otherwise(expr)


def _python_map(values: pl.Series, fn, dtype) -> pl.Series:
    """`fn` over the distinct values only (the few a column expression does not parse)."""
    uniq = values.unique()
    return values.replace_strict(uniq, pl.Series([fn(v) for v in uniq.to_list()], dtype=dtype), return_dtype=dtype)


def _parse_slots(long: pl.DataFrame) -> pl.DataFrame:
    """video_id, frame_index and rating of each slot: `<video>_<digits>` and a 0..100 answer by column expressions,
    anything else (a Unicode digit, a frame number past int64, an odd answer) by the row reader's own functions."""
    parts = pl.col("image").str.extract_groups(r"(?s)^(.+)_([0-9]+)$")
    answer = pl.col("answer").str.strip_chars(WHITESPACE)
    long = long.with_columns(
        parts.struct.field("1").alias("video_id"),
        parts.struct.field("2").cast(pl.Int64, strict=False).alias("frame_index"),
        pl.when(answer.str.contains(r"^[0-9]{1,3}$")).then(answer.cast(pl.Int64, strict=False)).alias("rating"),
    ).with_columns(pl.when(pl.col("rating") <= 100).then(pl.col("rating")).alias("rating"))
    odd = long.filter(pl.col("frame_index").is_null())
    if len(odd):
        parsed = _python_map(odd["image"], _image, pl.Struct({"video_id": pl.Utf8, "frame_index": pl.Int64}))
        fixed = odd.with_columns(parsed.struct.field("video_id"), parsed.struct.field("frame_index"))
        long = pl.concat([long.filter(pl.col("frame_index").is_not_null()), fixed]).sort("_i", "slot")
    odd = long.filter(pl.col("rating").is_null())
    if len(odd):
        fixed = odd.with_columns(_python_map(odd["answer"], _rating, pl.Int64).alias("rating"))
        long = pl.concat([long.filter(pl.col("rating").is_not_null()), fixed]).sort("_i", "slot")
    return long


def _image(img: str):
    try:
        return split_image_id(img)
    except ValueError:
        return None


def _rating(value: str):
    from squidflow.judgments.ingest import parse_rating

    return parse_rating(value)


def seen_frames(seen: dict) -> pl.DataFrame:
    """The judgments of earlier batches: those `seen` holds as a frame, and its plain entries."""
    frames = list(seen.get(SEEN_FRAMES, []))
    plain = [(*k, v) for k, v in seen.items() if k != SEEN_FRAMES]
    if plain:
        frames.append(pl.DataFrame(plain, schema={**{c: schemas.JUDGMENTS.columns[c] for c in KEY}, "place": pl.Utf8},
                                   orient="row"))  # fmt: skip
    if not frames:
        return pl.DataFrame(schema={**{c: schemas.JUDGMENTS.columns[c] for c in KEY}, "place": pl.Utf8})
    return pl.concat(frames, how="vertical_relaxed")


def read_batch_frame(raw: pl.DataFrame, slots: list[int], path: Path, *, known_images, source: str, round_: int,
                     seen: dict, read_row) -> tuple[pl.DataFrame, list, int]:
    """(judgments, problems, rejected assignments) of one batch, as `read_mturk_batch` returns them."""
    rejected_mask = _text("AssignmentStatus") == "Rejected"
    rejected = int(raw.select(rejected_mask.sum()).item())
    rows = raw.filter(~rejected_mask).with_row_index("_i")
    base = rows.select(
        "_i", "_line",
        _text("WorkerId").alias("annotator"), _text("HITId").alias("hit"),
        _unneutralise(_text("Input.event_prompt")).alias("event_prompt"),
        _text("Input.variant").replace_strict({"a": "A", "b": "B", "A": "A", "B": "B"}, default=None).alias("variant"),
    )  # fmt: skip
    row_ok = (pl.col("annotator") != "") & (pl.col("hit") != "") & (pl.col("event_prompt") != "") & pl.col("variant").is_not_null()
    long = pl.concat([
        rows.select("_i", pl.lit(i).alias("slot"), _unneutralise(_text(f"Input.image_{i}_id")).alias("image"),
                    pl.col(f"Answer.rating_{i}").fill_null("").alias("answer"))
        for i in slots
    ]).filter(pl.col("image") != "")  # fmt: skip
    long = _parse_slots(long)
    slot_ok = pl.col("video_id").is_not_null() & pl.col("rating").is_not_null()
    if known_images is not None:
        slot_ok = slot_ok & pl.col("image").is_in(pl.Series(list(known_images), dtype=pl.Utf8).implode())
    long = long.join(base.select("_i", "annotator", "event_prompt", "variant"), on="_i").with_columns(
        pl.lit(round_, dtype=pl.Int64).alias("round"))
    keyed = long.filter(pl.col("video_id").is_not_null())
    prior = seen_frames(seen).with_columns(pl.col("round").cast(pl.Int64), pl.col("frame_index").cast(pl.Int64))
    # a judgment in two rows, or in an earlier batch: by its hash (a collision only sends a row to the row reader)
    keyed = keyed.with_columns(pl.struct(KEY).hash().alias("_h"))
    earlier = prior.select(pl.struct(KEY).hash().alias("_h"))["_h"]
    shared = keyed.filter(pl.col("_h").is_duplicated() | pl.col("_h").is_in(earlier.implode()))
    suspect = set(shared["_i"].to_list()) | set(long.filter(~slot_ok)["_i"].to_list()) | set(
        base.filter(~row_ok)["_i"].to_list())
    # the rows that need the row-by-row reader, in file order, with the earlier places of their judgments
    lookup = {}
    if suspect:
        mine = keyed.filter(pl.col("_i").is_in(list(suspect))).select(KEY).unique()
        for r in prior.join(mine, on=KEY, nulls_equal=True).unique(KEY, keep="first").iter_rows():
            lookup[tuple(r[:6])] = r[6]
    problems, accepted_suspects, extra = [], [], []
    for rec in rows.filter(pl.col("_i").is_in(list(suspect))).iter_rows(named=True):
        problem, judged = read_row(rec, slots, path, known_images, round_, lookup)
        if problem:
            problems.append(problem)
            continue
        accepted_suspects.append(rec["_i"])
        for k, (key, _vid, _frame, rating) in enumerate(judged):
            lookup[key] = f"{path}:{rec['_line']}"
            extra.append((rec["_i"], k, *key, rating))
    keep = base.filter(~pl.col("_i").is_in(list(suspect)) | pl.col("_i").is_in(accepted_suspects))
    keep = keep.with_columns(pl.int_range(pl.len()).over("hit", order_by="_i").alias("position"))
    clean = long.filter(~pl.col("_i").is_in(list(suspect))).select(
        "_i", pl.col("slot").cast(pl.Int64).alias("_k"), "video_id", "frame_index", "rating")
    if extra:
        clean = pl.concat([clean, pl.DataFrame(extra, schema=["_i", "_k", *KEY, "rating"], orient="row").select(
            pl.col("_i").cast(pl.UInt32), pl.col("_k").cast(pl.Int64), "video_id", pl.col("frame_index").cast(pl.Int64),
            pl.col("rating").cast(pl.Int64))])  # fmt: skip
    out = (clean.join(keep, on="_i").with_columns(pl.lit(round_).alias("round"), pl.lit(source).alias("source"))
           .sort("_i", "_k"))  # fmt: skip
    seen.setdefault(SEEN_FRAMES, []).append(
        out.select(*KEY, pl.format("{}:{}", pl.lit(str(path)), pl.col("_line")).alias("place")))
    judgments = out.select(list(schemas.JUDGMENTS.columns)).cast(schemas.JUDGMENTS.columns)
    return judgments, sorted(problems, key=lambda p: p.row), rejected
