"""An MTurk batch-results CSV read with polars: a million assignments in seconds, the same judgments and the same
problems as reading it row by row (`squidflow.judgments.ingest.read_batch_row`, handed in as `read_row`, so this
module imports nothing of ingest).

Every check of a row is a column expression (empty ids, the variant, each slot's image id and rating, an image not
in the frame table, an image twice in one assignment). A row that fails one, or that shares a judgment (worker,
image, prompt, variant, round) with another row or with a batch read before, is handed to the row-by-row reader in
file order, so its message — and which of two rows keeps a shared judgment — is exactly that reader's. The other
rows cannot touch one another: their judgments are taken as they are, and their annotator position within their HIT
is counted once every row's fate is known. `benchmarks/ingest.py` times it against 0.3.0's row-by-row reader
(`benchmarks/mturk_rows.py`, which the tests also compare it with).
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from squidflow.contracts import schemas
from squidflow.contracts.image_ids import clean_id, split_image_id
from squidflow.contracts.io import FORMULA_START
from squidflow.judgments.annotation import MTURK_UNSAFE

# Python's str.strip() removes exactly these (str.isspace); polars' default strips a slightly different set
WHITESPACE = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
KEY = ["annotator", "video_id", "frame_index", "event_prompt", "variant", "round"]
SEEN_FRAMES = "__squidflow_seen_frames__"  # where a `seen` dict keeps the judgments of batches read with polars


def _text(col: str) -> pl.Expr:
    return pl.col(col).fill_null("").str.strip_chars(WHITESPACE)


def _unneutralise(expr: pl.Expr) -> pl.Expr:
    starts = pl.any_horizontal(expr.str.slice(1).str.starts_with(s) for s in FORMULA_START)
    return pl.when(expr.str.starts_with("'") & starts).then(expr.str.slice(1)).otherwise(expr)


def _mturk_text(expr: pl.Expr) -> pl.Expr:
    """squidflow.judgments.annotation.mturk_text as an expression: the character references squidflow wrote undone."""
    for char, ref in MTURK_UNSAFE.items():
        expr = expr.str.replace_all(ref, char, literal=True)
    return expr


def _parse_slots(long: pl.DataFrame) -> pl.DataFrame:
    """video_id, frame_index and rating of each slot: `<video>_<digits>` and a 0..100 answer by column expressions,
    anything else (a Unicode digit, a frame number past int64, an odd answer) by the row reader's own functions."""
    frame = pl.col("image").str.extract(r"_([0-9]+)$", 1)
    vid = pl.col("image").str.slice(0, pl.col("image").str.len_chars() - frame.str.len_chars() - 1)
    answer = pl.col("answer")
    long = long.with_columns(
        pl.when(vid != "").then(vid).alias("video_id"),
        frame.cast(pl.Int64, strict=False).alias("frame_index"),
        pl.when(answer.str.contains(r"^[0-9]{1,3}$")).then(answer.cast(pl.Int64, strict=False)).alias("rating"),
    ).with_columns(
        pl.when(pl.col("rating") <= 100).then(pl.col("rating")).alias("rating"),
        pl.when(pl.col("frame_index").is_not_null()).then(pl.col("video_id")).alias("video_id"),
    )
    odd = long.filter(pl.col("frame_index").is_null())["image"].unique().to_list()
    if odd:
        parsed = pl.Series([_image(v) for v in odd], dtype=pl.Struct({"video_id": pl.Utf8, "frame_index": pl.Int64}))
        mapped = pl.col("image").replace_strict(odd, parsed, default=None, return_dtype=parsed.dtype)
        long = long.with_columns(
            pl.when(pl.col("frame_index").is_null()).then(mapped.struct.field("video_id")).otherwise("video_id").alias("video_id"),
            pl.when(pl.col("frame_index").is_null()).then(mapped.struct.field("frame_index")).otherwise("frame_index").alias("frame_index"),
        )  # fmt: skip
    odd = long.filter(pl.col("rating").is_null())["answer"].unique().to_list()
    if odd:
        mapped = pl.col("answer").replace_strict(
            odd, [parse_rating(v) for v in odd], default=None, return_dtype=pl.Int64
        )
        long = long.with_columns(pl.when(pl.col("rating").is_null()).then(mapped).otherwise("rating").alias("rating"))
    return long


def _image(img: str) -> dict | None:
    """An id as the row reader reads it: quotes and whitespace around it stripped (the release writes `-id_3` in triple quotes)."""
    try:
        video_id, frame_index = split_image_id(clean_id(img)[0])
    except ValueError:
        return None
    return {"video_id": video_id, "frame_index": frame_index}


def parse_rating(value) -> int | None:
    """An integer 0..100 (as MTurk's slider sends it), else None."""
    if value is None:
        return None
    text = str(value).strip()
    if not re.fullmatch(r"\d{1,3}", text):
        return None
    r = int(text)
    return r if 0 <= r <= 100 else None


def _seen_batches(seen: dict) -> list[tuple[str, pl.DataFrame]]:
    """The batches read before with polars, (file, judgments with KEY, `_line` and the key's hash `_h`), and the
    plain entries of `seen` (key -> "file:line") as one more."""
    batches = list(seen.get(SEEN_FRAMES, []))
    plain = [(*k, v) for k, v in seen.items() if k != SEEN_FRAMES]
    if plain:
        df = pl.DataFrame(plain, schema={**{c: schemas.JUDGMENTS.columns[c] for c in KEY}, "_place": pl.Utf8},
                          orient="row")  # fmt: skip
        batches.append(("", df.with_columns(pl.struct(KEY).hash().alias("_h"))))
    return batches


def _base_and_slots(rows: pl.DataFrame, slots: list[int], round_: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A batch's assignments (`_i`, `_line`, annotator, hit, event_prompt, variant) and its filled image slots, one a
    row, parsed (`_parse_slots`: video_id, frame_index, rating)."""
    base = rows.select(
        "_i", "_line",
        _text("WorkerId").alias("annotator"), _text("HITId").alias("hit"),
        _mturk_text(_unneutralise(_text("Input.event_prompt"))).alias("event_prompt"),
        _text("Input.variant").replace_strict({"a": "A", "b": "B", "A": "A", "B": "B"}, default=None).alias("variant"),
        pl.concat_list([pl.lit(i, dtype=pl.Int64) for i in slots]).alias("slot"),
        pl.concat_list([_unneutralise(_text(f"Input.image_{i}_id")) for i in slots]).alias("image"),
        pl.concat_list([pl.col(f"Answer.rating_{i}").fill_null("") for i in slots]).alias("answer"),
    )  # fmt: skip
    long = (base.select("_i", "annotator", "event_prompt", "variant", "slot", "image", "answer")
            .explode("slot", "image", "answer").filter(pl.col("image") != ""))  # fmt: skip
    long = _parse_slots(long).with_columns(pl.lit(round_, dtype=pl.Int64).alias("round"))
    return base.drop("slot", "image", "answer"), long


def _slot_ok(known_images) -> pl.Expr:
    """A slot the fast path takes: an image id, a rating, and (with `known_images`) an image of the dataset or of a
    video taken down since."""
    ok = pl.col("video_id").is_not_null() & pl.col("frame_index").is_not_null() & pl.col("rating").is_not_null()
    if known_images is None:
        return ok
    known = pl.col("image").is_in(pl.Series(list(known_images), dtype=pl.Utf8).implode())
    removed = sorted(getattr(known_images, "removed_videos", ()))  # a video taken down: its images count as known
    return ok & (known | pl.col("video_id").is_in(pl.Series(removed, dtype=pl.Utf8).implode()))


def _read_suspects(
    rows: pl.DataFrame,
    long: pl.DataFrame,
    suspect: pl.Series,
    path: Path,
    *,
    seen: dict,
    read_row,
    slots: list[int],
    known_images,
    round_: int,
) -> tuple[list[int], list]:
    """The rows that need the row-by-row reader, in file order, with the earlier places of their judgments -> the
    rows it accepts (`_i`) and its problems."""
    lookup: dict[tuple, str] = {}
    accepted: list[int] = []
    problems = []
    mine = long.filter(pl.col("_i").is_in(suspect.implode()) & pl.col("video_id").is_not_null()).select(*KEY, "_h")
    for file, batch in _seen_batches(seen):
        hits = batch.join(mine, on=[*KEY, "_h"], nulls_equal=True, maintain_order="left")
        place = pl.col("_place") if file == "" else pl.format("{}:{}", pl.lit(file), pl.col("_line")).alias("_place")
        for r in hits.select(*KEY, place).iter_rows():
            lookup.setdefault(tuple(r[:6]), r[6])
    for rec in rows.filter(pl.col("_i").is_in(suspect.implode())).iter_rows(named=True):
        problem, judged = read_row(rec, slots, path, known_images, round_, lookup)
        if problem:
            problems.append(problem)
            continue
        accepted.append(rec["_i"])
        for key, *_ in judged:
            lookup[key] = f"{path}:{rec['_line']}"
    return accepted, problems


def read_batch_frame(
    raw: pl.DataFrame, slots: list[int], path: Path, *, known_images, source: str, round_: int, seen: dict, read_row
) -> tuple[pl.DataFrame, list, int]:
    """(judgments, problems, rejected assignments) of one batch, as `read_mturk_batch` returns them."""
    rejected_mask = _text("AssignmentStatus") == "Rejected"
    rejected = int(raw.select(rejected_mask.sum()).item())
    rows = raw.filter(~rejected_mask).with_row_index("_i")
    base, long = _base_and_slots(rows, slots, round_)
    row_ok = (
        (pl.col("annotator") != "")
        & (pl.col("hit") != "")
        & (pl.col("event_prompt") != "")
        & pl.col("variant").is_not_null()
    )
    # a judgment in two rows, or in an earlier batch: by its hash (a collision only sends a row to the row reader)
    long = long.with_columns(pl.struct(KEY).hash().alias("_h"))
    earlier = [b.select("_h") for _, b in _seen_batches(seen)]
    shared = pl.col("_h").is_duplicated() & pl.col("video_id").is_not_null()
    if earlier:
        shared = shared | pl.col("_h").is_in(pl.concat(earlier)["_h"].implode())
    suspect = pl.concat(
        [long.filter(shared | ~_slot_ok(known_images)).select("_i"), base.filter(~row_ok).select("_i")]
    )["_i"].unique()
    accepted: list[int] = []
    problems: list = []
    if len(suspect):
        accepted, problems = _read_suspects(
            rows,
            long,
            suspect,
            path,
            seen=seen,
            read_row=read_row,
            slots=slots,
            known_images=known_images,
            round_=round_,
        )
    # an accepted row has no bad slot and no judgment given before: its judgments are its slots, as parsed
    dropped = suspect.filter(~suspect.is_in(pl.Series(accepted, dtype=suspect.dtype).implode()))
    keep = base.filter(~pl.col("_i").is_in(dropped.implode())).with_columns(
        pl.int_range(pl.len()).over("hit").alias("position")
    )
    out = long.join(keep.select("_i", "_line", "hit", "position"), on="_i", how="inner", maintain_order="left")
    seen.setdefault(SEEN_FRAMES, []).append((str(path), out.select(*KEY, "_line", "_h")))
    cols = {c: schemas.JUDGMENTS.columns[c] for c in schemas.JUDGMENTS.required}
    judgments = out.with_columns(pl.lit(source).alias("source")).select(list(cols))
    return judgments.cast(pl.Schema(cols)), problems, rejected
