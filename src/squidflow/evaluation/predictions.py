"""Reading any model's predictions, in the one documented format, and refusing files that would score wrongly.

The format (schemas.PREDICTIONS) is one row per (image, rank): the image as `video_id` + `frame_index` (SQUID-E's
images are frames of videos) or as `image`, a file name that a mapping table (columns image, video_id,
frame_index) turns into them; `rank` (1 = the model's top label), `label` and `score`. Files may be Parquet, CSV
or JSON Lines, local or at a URL (fetched once into a cache). The model's own inference code stays its own: it only
has to write these rows (docs/evaluation.md, "Evaluate your own model").

A file that is wrong in a way that changes the numbers stops the run, naming the file, the row (CSV and JSON Lines:
the line, header = line 1; Parquet: the row, first = 1) and the problem: an image that is not among the judged
images or frames, an image without rank 1, a rank given twice, a rank that is not a positive integer, a score that
is not a number, an empty label.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import cast
from urllib.parse import urlparse

import polars as pl

from squidflow.config.bounds import gzip_lines, gzip_read, parquet_check
from squidflow.contracts import schemas
from squidflow.contracts.image_ids import id_expr, unknown_id_hint
from squidflow.contracts.io import json_lines
from squidflow.contracts.paths import DOWNLOADS_DIR
from squidflow.errors import UserError
from squidflow.fetch import fetch, is_url

log = logging.getLogger(__name__)

KEY = ["video_id", "frame_index"]
FORMATS = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
}
SHOW = 10
IMAGE_NAME = re.compile(r"^(?P<video_id>.+)_(?P<frame_index>\d+)(?:\.[A-Za-z0-9]+)?$")  # squidflow's {video}_{frame}


class PredictionsError(UserError, ValueError):
    """A predictions file that cannot be scored as it is; the message names the file, the rows and the problems."""


@dataclass(frozen=True)
class Problem:
    row: int  # the line (CSV, JSON Lines; header = 1) or row (Parquet; first = 1); 0 for the whole file
    problem: str


def file_format(source: str | Path) -> tuple[str, bool]:
    """('parquet' | 'csv' | 'jsonl', gzipped) from the file name (a URL's path counts)."""
    name = Path(urlparse(str(source)).path if is_url(str(source)) else str(source)).name.lower()
    gz = name.endswith(".gz")
    stem = name[:-3] if gz else name
    fmt = FORMATS.get(Path(stem).suffix)
    if fmt is None or (gz and fmt == "parquet"):
        raise PredictionsError(
            f"{source}: unknown predictions file type; name it .parquet, .csv, .jsonl (or .csv.gz, "
            ".jsonl.gz) and write one row per (image, rank) with rank, label, score and the image key"
        )
    return fmt, gz


def _read_raw(path: Path, fmt: str, gz: bool, where: str) -> tuple[pl.DataFrame, int]:
    """The file as a frame plus the number of the first data row (CSV/JSON Lines line numbers; Parquet rows)."""
    if fmt == "parquet":
        parquet_check(path, where, PredictionsError)  # a decompression bomb stops here, before any row is read
        try:
            return pl.read_parquet(path), 1
        except Exception as exc:  # noqa: BLE001 - polars raises several kinds for a damaged file
            raise PredictionsError(f"{where}: cannot be read as Parquet ({type(exc).__name__}: {exc})") from exc
    if fmt == "csv":
        from squidflow.contracts.io import read_csv_strings

        try:
            if gz:
                data = gzip_read(path, where, PredictionsError)
            else:
                with open(path, "rb") as raw:
                    data = raw.read()
        except (OSError, EOFError) as exc:
            raise PredictionsError(f"{where}: cannot be read ({exc})") from exc
        try:  # every field as text, errors naming the line (header = line 1)
            df = read_csv_strings(where, what="predictions CSV", data=data, line_column="_row")
        except UserError as exc:
            raise PredictionsError(str(exc)) from None
        return df.with_columns(pl.col(c).replace("", None) for c in df.columns if c != "_row"), 0
    records, lines = [], []
    try:
        with contextlib.ExitStack() as stack:
            fh: Iterable[bytes] = (
                gzip_lines(path, where, PredictionsError) if gz else stack.enter_context(open(path, "rb"))
            )
            for line_no, rec in json_lines(
                fh, where, what="one JSON object with rank, label, score and the image key", error=PredictionsError
            ):
                records.append({k: None if v is None else str(v) for k, v in rec.items()})
                lines.append(line_no)
    except OSError as exc:
        raise PredictionsError(f"{where}: cannot be read ({exc})") from exc
    columns = sorted({k for r in records for k in r})
    frame = pl.DataFrame([{c: r.get(c) for c in columns} for r in records], schema={c: pl.Utf8 for c in columns})
    return frame.with_columns(pl.Series("_row", lines, dtype=pl.Int64)), 0


def _column(df: pl.DataFrame, col: str, text: bool) -> pl.Expr:
    """A column as read: text columns as stripped strings, numbers as they are; empty strings and absent columns null."""
    if col not in df.columns:
        return pl.lit(None, dtype=pl.Utf8 if text else pl.Float64).alias(col)
    expr = pl.col(col)
    if text or df.schema[col] == pl.Utf8:
        expr = expr.cast(pl.Utf8).str.strip_chars().replace("", None)
    return expr.alias(col)


def _fail(where: str, problems: list[Problem], total: int | None = None) -> None:
    try:
        unit = "row" if file_format(where)[0] == "parquet" else "line"
    except PredictionsError:
        unit = "row"
    shown = "\n  ".join(
        f"{where}: {unit} {p.row}: {p.problem}" if p.row else f"{where}: {p.problem}" for p in problems[:SHOW]
    )
    n = total if total is not None else len(problems)
    more = f"\n  ... and {n - SHOW} more" if n > SHOW else ""
    raise PredictionsError(
        f"{n} problem(s) in predictions file {where}:\n  {shown}{more}\nFix the model's export: one row per (image, "
        "rank) with video_id + frame_index (or image + a mapping table), rank 1, 2, ... once each per image, a text "
        "label and a numeric score (docs/evaluation.md, 'Evaluate your own model')."
    )


def _check_shape(raw: pl.DataFrame, where: str) -> None:
    """The file's columns and rows before any row is read: the key, rank, label and score columns, none holding a
    list or bytes, and at least one row."""
    has_key = {"video_id", "frame_index"} <= set(raw.columns) or "image" in raw.columns
    missing = [c for c in ("rank", "label", "score") if c not in raw.columns]
    if missing or not has_key:
        need = missing + ([] if has_key else ["video_id + frame_index, or image"])
        has = [c for c in raw.columns if not c.startswith("_")]  # not the reader's own line/row columns
        raise PredictionsError(
            f"{where}: missing column(s) {need} (has {has}). Predictions need one row per "
            "(image, rank) with rank, label, score and the image key (docs/evaluation.md, 'Evaluate your own model')."
        )
    nested = [
        f"{c} ({raw.schema[c]})"
        for c in ("video_id", "image", "label", "frame_index", "rank", "score")
        if c in raw.columns and (raw.schema[c].is_nested() or raw.schema[c] in (pl.Binary, pl.Object, pl.Null))
    ]
    if nested:
        raise PredictionsError(
            f"{where}: column(s) {', '.join(nested)} hold lists, structs or bytes; each row needs "
            "one text label, one numeric score and rank, and a text image key. Write one row per "
            "(image, rank) instead of a list per image."
        )
    if raw.is_empty():
        raise PredictionsError(
            f"{where}: the predictions file has no rows (a header only, or nothing); export the "
            "model's predictions again: one row per (image, rank) with rank, label, score and the "
            "image key."
        )


def _row_checks() -> list[tuple[pl.Expr, Callable[[dict], str]]]:
    """(rows with the problem, the problem in words) for every row-level problem of a predictions file."""
    return [
        (pl.col("rank").is_null(), lambda r: "rank is empty"),
        (
            pl.col("rank").is_not_null() & pl.col("_rank").is_null(),
            lambda r: f"rank {r['rank']!r} is not a positive integer",
        ),
        (pl.col("label").is_null(), lambda r: "label is empty"),
        (pl.col("score").is_null(), lambda r: "score is empty (non-numeric)"),
        (pl.col("score").is_not_null() & pl.col("_score").is_null(), lambda r: f"score {r['score']!r} is not a number"),
        (
            pl.col("_score").is_not_null() & ~pl.col("_score").is_finite(),
            lambda r: f"score {r['score']!r} is not a finite number",
        ),
        (
            pl.col("video_id").is_null() & pl.col("image").is_null(),
            lambda r: "no image: video_id and image are both empty",
        ),
        (
            pl.col("video_id").is_not_null() & pl.col("_frame").is_null(),
            lambda r: (
                f"frame_index {r['frame_index']!r} is not a non-negative integer"
                if r["frame_index"]
                else "frame_index is empty"
            ),
        ),
    ]


def _parse_rows(raw: pl.DataFrame, first_row: int, where: str) -> pl.DataFrame:
    """Cast the columns, collecting every row-level problem; raises PredictionsError if there is any."""
    _check_shape(raw, where)
    if "_row" not in raw.columns:
        raw = raw.with_row_index("_row", offset=first_row).with_columns(pl.col("_row").cast(pl.Int64))
    df = raw.select(
        "_row",
        *[_column(raw, c, text=True) for c in ("video_id", "image", "label")],
        *[_column(raw, c, text=False) for c in ("frame_index", "rank", "score")],
    )
    # ids as people write them (the release's `"""-id"""`, pandas' `"-id"`): quotes and whitespace stripped; the id
    # as written is kept for the message when it is unknown
    df = df.with_columns(pl.coalesce("video_id", "image").alias("_written"), id_expr("video_id"), id_expr("image"))
    rank_f = pl.col("rank").cast(pl.Float64, strict=False)
    frame_f = pl.col("frame_index").cast(pl.Float64, strict=False)
    df = df.with_columns(
        pl.when(rank_f.is_finite() & (rank_f == rank_f.floor()) & (rank_f >= 1))
        .then(rank_f)
        .cast(pl.Int64)
        .alias("_rank"),
        pl.when(frame_f.is_finite() & (frame_f == frame_f.floor()) & (frame_f >= 0))
        .then(frame_f)
        .cast(pl.Int64)
        .alias("_frame"),
        pl.col("score").cast(pl.Float64, strict=False).alias("_score"),
    )
    problems: list[Problem] = []
    total = 0
    for mask, say in _row_checks():
        bad = df.filter(mask)
        total += len(bad)
        problems += [Problem(r["_row"], say(r)) for r in bad.head(SHOW).iter_rows(named=True)]
    if problems:
        problems.sort(key=lambda p: p.row)
        _fail(where, problems, total)
    return df.select(
        "_row",
        "_written",
        "video_id",
        pl.col("_frame").alias("frame_index"),
        "image",
        pl.col("_rank").alias("rank"),
        "label",
        pl.col("_score").alias("score"),
    )


def _resolve_images(df: pl.DataFrame, image_table: pl.DataFrame | None, where: str) -> pl.DataFrame:
    """Fill video_id/frame_index of rows keyed by `image`: through the mapping table, else from squidflow's own
    image names ({video_id}_{frame_index}, or .../{video_id}/{frame_index}.jpg)."""
    by_image = df.filter(pl.col("video_id").is_null())
    if by_image.is_empty():
        return df
    names = by_image.select("image").unique(maintain_order=True)
    if image_table is not None:
        mapping = image_table.select(
            pl.col("image").cast(pl.Utf8),
            pl.col("video_id").cast(pl.Utf8).alias("_vid"),
            pl.col("frame_index").cast(pl.Int64).alias("_fi"),
        ).unique("image", keep="first", maintain_order=True)
    else:
        rows = []
        for name in names["image"].to_list():
            p = Path(name)
            m = IMAGE_NAME.match(p.name)
            if p.stem.isdigit() and p.parent.name:
                rows.append({"image": name, "_vid": p.parent.name, "_fi": int(p.stem)})
            elif m:
                rows.append({"image": name, "_vid": m["video_id"], "_fi": int(m["frame_index"])})
        mapping = pl.DataFrame(rows, schema={"image": pl.Utf8, "_vid": pl.Utf8, "_fi": pl.Int64})
    out = (
        df.join(mapping, on="image", how="left", maintain_order="left")
        .with_columns(
            pl.coalesce("video_id", "_vid").alias("video_id"),
            pl.coalesce("frame_index", "_fi").alias("frame_index"),
        )
        .drop("_vid", "_fi")
    )
    unresolved = out.filter(pl.col("video_id").is_null())
    if not unresolved.is_empty():
        how = (
            "not in the model's image mapping table"
            if image_table is not None
            else "not a squidflow image name ({video_id}_{frame_index} or {video_id}/{frame_index}.jpg) and the model "
            "has no mapping table (evaluation.models[].images)"
        )
        first = unresolved.unique("image", keep="first", maintain_order=True)
        known = mapping["image"].to_list()
        _fail(
            where,
            [
                Problem(r["_row"], f"unknown image {r['image']!r}: {how}{unknown_id_hint(r['_written'], known)}")
                for r in first.head(SHOW).iter_rows(named=True)
            ],
            len(first),
        )
    return out


def check_predictions(df: pl.DataFrame, known_images: pl.DataFrame | None, where: str) -> None:
    """Unknown images, duplicate ranks, images without rank 1: each named with its row."""
    problems: list[Problem] = []
    total = 0
    if known_images is not None:
        known = known_images.select(pl.col("video_id").cast(pl.Utf8), pl.col("frame_index").cast(pl.Int64)).unique(
            maintain_order=True
        )
        unknown = df.join(known, on=KEY, how="anti", maintain_order="left").unique(
            KEY, keep="first", maintain_order=True
        )
        total += len(unknown)
        videos = known["video_id"].unique(maintain_order=True).to_list()
        for r in unknown.head(SHOW).iter_rows(named=True):
            if r["video_id"] in set(videos):
                frames = sorted(known.filter(pl.col("video_id") == r["video_id"])["frame_index"].to_list())
                hint = f"; that video's judged frames: {frames[:10]}{' ...' if len(frames) > 10 else ''}"
            else:
                hint = unknown_id_hint(r.get("_written") or r["video_id"], videos)
            problems.append(
                Problem(
                    r["_row"],
                    f"unknown image: video_id {r['video_id']!r}, frame_index "
                    f"{r['frame_index']} is not among the judged images or the dataset's frames{hint}",
                )
            )
    dup = df.with_columns(pl.col("_row").min().over([*KEY, "rank"]).alias("_first")).filter(
        pl.col("_row") != pl.col("_first")
    )
    total += len(dup)
    problems += [
        Problem(
            r["_row"],
            f"duplicate rank {r['rank']} for image ({r['video_id']}, {r['frame_index']}) "
            f"(first given at {r['_first']})",
        )
        for r in dup.head(SHOW).iter_rows(named=True)
    ]
    no_top = (
        df.group_by(KEY, maintain_order=True)
        .agg(pl.col("_row").min(), (pl.col("rank") == 1).any().alias("has_top"), pl.col("rank").min().alias("lowest"))
        .filter(~pl.col("has_top"))
        .sort("_row")
    )
    total += len(no_top)
    problems += [
        Problem(
            r["_row"], f"image ({r['video_id']}, {r['frame_index']}) has no rank 1 (its best rank is {r['lowest']})"
        )
        for r in no_top.head(SHOW).iter_rows(named=True)
    ]
    if problems:
        problems.sort(key=lambda p: p.row)
        _fail(where, problems, total)


def read_image_table(source: str | Path, cache_dir: str | Path) -> pl.DataFrame:
    """A mapping table image -> video_id, frame_index (CSV or Parquet, local or URL)."""
    path = fetch(source, cache_dir)
    if str(path).endswith((".parquet", ".pq")):
        parquet_check(path, str(source), PredictionsError)
    try:
        table = (
            pl.read_parquet(path) if str(path).endswith((".parquet", ".pq")) else pl.read_csv(path, infer_schema=False)
        )
    except Exception as exc:  # noqa: BLE001
        raise PredictionsError(f"{source}: cannot read the image mapping table ({exc})") from exc
    missing = [c for c in ("image", "video_id", "frame_index") if c not in table.columns]
    if missing:
        raise PredictionsError(
            f"{source}: the image mapping table lacks column(s) {missing} (has {table.columns}); it "
            "maps each image file name to the video_id and frame_index of the judged frame"
        )
    return table


def read_predictions(
    source: str | Path,
    *,
    cache_dir: str | Path = DOWNLOADS_DIR,
    image_table: pl.DataFrame | None = None,
    known_images: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """A checked predictions file (schemas.PREDICTIONS; every row keyed by video_id and frame_index), sorted by
    image and rank. Raises PredictionsError naming the file, the rows and the problems."""
    where = str(source)
    fmt, gz = file_format(source)
    path = fetch(source, cache_dir)
    raw, first_row = _read_raw(Path(path), fmt, gz, where)
    df = _parse_rows(raw, first_row, where)
    df = _resolve_images(df, image_table, where)
    check_predictions(df, known_images, where)
    log.info(
        "%s: %d rows, %d images, ranks up to %d",
        where,
        len(df),
        df.select(KEY).n_unique(),
        int(cast(int, df["rank"].max()) or 0),
    )
    return df.drop("_row").sort([*KEY, "rank"]).select(list(schemas.PREDICTIONS.columns))
