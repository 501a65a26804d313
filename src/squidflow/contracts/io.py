"""Reading and writing artifacts at the edges of the workflow.

Two promises: a file a rule leaves behind is either complete or absent (write to a temporary file in the same
folder, then rename — so a killed job never leaves a half-written Parquet that Snakemake would take as done), and a
Parquet file read by a rule has the columns its schema says (so a mismatch is reported where it is read, naming the
file, the column and the rule that makes it, rather than as a KeyError three functions deeper).

Files people open are written safely, by the helpers here and nowhere else:

- every CSV meant for a spreadsheet or a crowdsourcing site goes through `write_csv`, which neutralises cells a
  spreadsheet would run as a formula (`neutralise`; `unneutralise` reads such a cell back);
- every piece of data put into Markdown goes through `md_escape` (table cells, lists), into HTML through `html_text`
  (text and attribute values), so a video title or a worker id is never markup or a link;
- a CSV a person hands us (a URL list, MTurk batch results) is read with `read_csv_strings`, whose errors name the
  file and the line.
"""

from __future__ import annotations

import contextlib
import csv
import html
import io
import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import cast

import polars as pl

from squidflow.contracts.schemas import ANY_WIDTH_F32, Schema
from squidflow.errors import InputError, UserError


class SchemaError(UserError, ValueError):
    """An artifact does not have the columns or types its schema promises."""


def inside(folder: str | os.PathLike, name: str | os.PathLike, *, what: str = "a name from the data") -> Path:
    """`folder / name`, resolved, when it stays inside `folder`; else an InputError naming both.

    Every path built from data (an event, a project key, an image's src) goes through here, so an absolute name, a
    `../` or a link out of the folder can never make squidflow read or write elsewhere."""
    text = os.fspath(name)
    base = Path(folder).resolve()
    bad = "\0" in text or not text.strip()
    path = base if bad else (base / text).resolve()
    if bad or path == base or not path.is_relative_to(base):
        raise InputError(
            f"{what} {text[:80]!r} would make a path outside {folder} ({str(path)[:120]}); "
            "only plain names are accepted there: rename it."
        )
    return path


def current_umask() -> int:
    """The process umask (reading it means setting it, so it is set straight back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def permissions_for_new_file() -> int:
    """What `open()` would give a new file: 0o666 less the umask (0644 under umask 022)."""
    return 0o666 & ~current_umask()


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside `path`; on success rename it over `path`, on failure remove it.

    `mkstemp` creates the temporary file 0600 whatever the umask; the result gets the permissions a plainly written
    file would have, so a lab group on a shared cluster (or the web server that shows task images to annotators)
    can read what the workflow wrote.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=f".tmp{path.suffix}", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        if tmp_path.exists():
            os.chmod(tmp_path, permissions_for_new_file())
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json_lines(path: str | os.PathLike, records: Iterable[dict]) -> None:
    """One JSON object a line, atomically; gzip-compressed when `path` ends in .gz (the GuessWhat?! games format)."""
    import gzip

    with (
        atomic_path(path) as tmp,
        gzip.open(tmp, "wt", encoding="utf-8") if str(path).endswith(".gz") else open(tmp, "w", encoding="utf-8") as fh,
    ):
        for record in records:
            fh.write(json.dumps(record) + "\n")


def marked_folder(folder: str | os.PathLike, marker: str, text: str) -> Path:
    """Make `folder` (a rule's directory() output) and put the file `marker` in it, saying what the folder holds: on
    object storage an empty directory() output is no object at all, and Snakemake takes it for missing, so a folder
    where a job may legitimately write nothing else (a shard without a video) is never empty."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / marker).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    return folder


def link_or_copy(src: str | os.PathLike, dest: str | os.PathLike) -> Path:
    """`dest` as the same file as `src`: a hard link (no second copy on disk), a copy where the filesystem has none
    (another device); an existing `dest` is replaced."""
    import shutil

    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.unlink(missing_ok=True)
    try:
        os.link(src, dest)
    except OSError:
        shutil.copy2(src, dest)
    return dest


def _is_any_width_f32(dtype: pl.DataType) -> bool:
    return isinstance(dtype, pl.Array) and dtype.inner == pl.Float32


def conform(df: pl.DataFrame, schema: Schema, *, where: str = "") -> pl.DataFrame:
    """Return `df` with exactly the schema's columns, in order and cast to their types.

    Optional columns that are missing become nulls; a missing required column or a value that cannot be cast is an
    error naming the column.
    """
    missing = [c for c in schema.required if c not in df.columns]
    if missing:
        raise SchemaError(
            f"{where or schema.name}: missing required column(s) {missing} for artifact '{schema.name}' "
            f"(has {df.columns}); it is produced by {schema.produced_by}"
        )
    exprs = []
    for col, dtype in schema.columns.items():
        if col not in df.columns:
            exprs.append(pl.lit(None, dtype=dtype).alias(col))
        elif dtype == ANY_WIDTH_F32:
            have = df.schema[col]
            if _is_any_width_f32(have):
                exprs.append(pl.col(col))
            else:
                width = df[col].list.len().max() if len(df) else 1
                exprs.append(pl.col(col).cast(pl.List(pl.Float32)).list.to_array(int(cast(int, width) or 1)).alias(col))
        else:
            exprs.append(pl.col(col).cast(dtype, strict=True).alias(col))
    try:
        return df.select(exprs)
    except (pl.exceptions.InvalidOperationError, pl.exceptions.ComputeError) as exc:
        raise SchemaError(f"{where or schema.name}: cannot cast to the '{schema.name}' schema: {exc}") from exc


def check(df: pl.DataFrame, schema: Schema, *, where: str) -> pl.DataFrame:
    """Raise if `df` lacks a column of `schema` or has it with another type; return `df` unchanged otherwise."""
    problems = []
    for col, dtype in schema.columns.items():
        if col not in df.columns:
            if col not in schema.optional:
                problems.append(f"column '{col}' is missing")
            continue
        have = df.schema[col]
        ok = _is_any_width_f32(have) if dtype == ANY_WIDTH_F32 else have == dtype
        if not ok:
            problems.append(f"column '{col}' is {have}, expected {dtype}")
    if problems:
        raise SchemaError(
            f"{where}: does not match the '{schema.name}' schema: {'; '.join(problems)}. "
            f"It is produced by {schema.produced_by}; delete it and rerun snakemake to rebuild it."
        )
    return df


def write_parquet(df: pl.DataFrame, path: str | os.PathLike, schema: Schema) -> pl.DataFrame:
    """Conform `df` to `schema` and write it atomically; returns what was written."""
    out = conform(df, schema, where=str(path))
    with atomic_path(path) as tmp:
        out.write_parquet(tmp)
    return out


def write_parquet_sorted(
    df: pl.DataFrame, path: str | os.PathLike, schema: Schema, by: list[str], *, block_rows: int = 8192
) -> None:
    """write_parquet of `df` sorted by `by`, a block of rows at a time: a sort copies a frame whole, and a wide one
    (features: 2,560 floats a row, 820 MB at 80,000 frames) then took 2.5 GB to gather (issue 61). The order comes
    from the key columns; each block of rows is taken in that order, conformed and written as a row group."""
    import pyarrow.parquet as pq

    order = df.select(pl.arg_sort_by(by)).to_series()
    with atomic_path(path) as tmp:
        writer = None
        for start in range(0, max(len(order), 1), block_rows):
            block = conform(df[order[start : start + block_rows]], schema, where=str(path)).to_arrow()
            writer = writer or pq.ParquetWriter(tmp, block.schema)
            writer.write_table(block)
        if writer is not None:
            writer.close()


def read_parquet(path: str | os.PathLike, schema: Schema) -> pl.DataFrame:
    """Read an artifact and check it against its schema."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: artifact '{schema.name}' not found; it is produced by {schema.produced_by}")
    return check(pl.read_parquet(path), schema, where=str(path))


# --- files people open: CSV for spreadsheets and crowdsourcing sites, Markdown, HTML -----------------------------
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def neutralise(cell) -> str:
    """A cell a spreadsheet would run as a formula gets a leading apostrophe (OWASP CSV injection advice).

    Numbers (including negative ones, `-0.25`) are left as they are: they are not formulas, and tables stay numeric.
    """
    text = "" if cell is None else str(cell)
    if text.startswith(FORMULA_START) and not (isinstance(cell, int | float) or _PLAIN_NUMBER.fullmatch(text)):
        return "'" + text
    return text


def unneutralise(cell: str) -> str:
    """Undo `neutralise` (YouTube ids may start with '-', so ids round-trip through MTurk with the apostrophe)."""
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(FORMULA_START) else cell


def _csv_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"  # as polars writes them
    if isinstance(value, float):
        return repr(value) if value == value else "NaN"  # as polars writes them
    if isinstance(value, list | tuple):
        return ";".join("" if v is None else str(v) for v in value)
    return value


def write_csv(df: pl.DataFrame, path: str | os.PathLike, *, float_precision: int | None = None) -> None:
    """The one CSV writer for files people open: atomic, UTF-8, every cell through `neutralise`.

    `float_precision` rounds float columns (tables). List cells are joined with `;`.
    """
    if float_precision is not None:
        df = df.with_columns(pl.selectors.float().round(float_precision))
    with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow([neutralise(c) for c in df.columns])
        for row in df.iter_rows():
            writer.writerow([neutralise(_csv_value(v)) for v in row])


_MD_SPECIAL = re.compile(r"([\\`*\[\]|])")  # code, emphasis, link/image brackets, table cells


def md_escape(value) -> str:
    """Data as inert Markdown text: no HTML, no link or image, no emphasis, no table break, on one line.

    `<`, `>`, `&` become entities; backslash, backtick, `*`, `[`, `]` and `|` are backslash-escaped (no link,
    image, code span, emphasis or table break can start; `_` stays as is: ids are full of it and GFM ignores it
    inside words); line breaks become spaces.
    """
    text = "" if value is None else str(value)
    text = html.escape(text, quote=False)
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return re.sub(r"[\r\n\t\v\f]+", " ", text)


def html_text(value) -> str:
    """Data as HTML text or a quoted attribute value (quotes escaped too)."""
    return html.escape("" if value is None else str(value), quote=True)


# --- CSVs people hand us ----------------------------------------------------------------------------------------
def _csv_text(path: Path, data: bytes | None, what: str, tail: str) -> str:
    """The file's text: UTF-8 (a BOM is fine), not empty; else an InputError naming the file, the line and the fix."""
    try:
        raw = path.read_bytes() if data is None else data
    except FileNotFoundError:
        raise InputError(f"{path}: {what} not found.{tail}") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder, expected a {what} (a .csv file).{tail}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        byte = raw[exc.start : exc.start + 1].hex()
        raise InputError(
            f"{path} line {line}: byte 0x{byte} is not UTF-8 (the file looks like Latin-1 or Windows-1252). Save it "
            f"as UTF-8, e.g. `iconv -f latin1 -t utf-8 {path} > fixed.csv`.{tail}"
        ) from None
    if not text.strip():
        raise InputError(f"{path}: the {what} is empty (not even a header line).{tail}")
    return text


def _csv_rows(text: str, path: Path, tail: str) -> tuple[list[str], list[list[str]], list[int]]:
    """Python's csv reader on the text -> header, rows and each row's line in the file; blank lines skipped, a row
    with more or fewer fields than the header, or a header naming a column twice, an InputError naming the line."""
    reader = csv.reader(io.StringIO(text, newline=""))  # csv handles \r\n and quoted line breaks itself
    try:
        header = [h.strip() for h in next(reader)]
        rows, lines, start = [], [], reader.line_num + 1
        for rec in reader:
            if not rec or not any(c.strip() for c in rec):
                start = reader.line_num + 1
                continue  # blank lines carry nothing
            if len(rec) != len(header):
                raise InputError(
                    f"{path} line {start}: {len(rec)} fields, but the header has {len(header)} "
                    f"({', '.join(header)}). Quote fields that contain commas, or fix the row.{tail}"
                )
            rows.append(rec)
            lines.append(start)
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(f"{path} line {reader.line_num}: not valid CSV ({exc}).{tail}") from None
    duplicated = sorted({h for h in header if header.count(h) > 1})
    if duplicated:
        raise InputError(f"{path} line 1: column(s) {duplicated} appear more than once in the header.{tail}")
    return header, rows, lines


def read_csv_strings(
    path: str | os.PathLike,
    *,
    what: str = "CSV file",
    fix: str = "",
    line_column: str | None = None,
    data: bytes | None = None,
) -> pl.DataFrame:
    """Read a CSV someone made (every column as strings), with errors that name the file and the line.

    The file must be UTF-8 (a BOM is fine): a byte that is not, an empty file, or a row with more or fewer fields
    than the header is an InputError naming the file, the line and what to do. `what` says what the file is for
    ("URL list", "MTurk batch results"), `fix` is appended to every error. With `line_column`, a column of that name
    holds each row's line number in the file (header = line 1), for messages that name the row. `data`: the file's
    bytes when the caller has them already (a decompressed .csv.gz), `path` then only names it.
    """
    path = Path(path)
    tail = f" {fix}" if fix else ""
    text = _csv_text(path, data, what, tail)
    fast = _read_csv_fast(text)
    if fast is not None:  # the same frame, from polars' reader (a million-row MTurk batch in seconds)
        return (
            fast.with_columns(pl.int_range(2, fast.height + 2, dtype=pl.Int64).alias(line_column))
            if line_column
            else fast
        )
    header, rows, lines = _csv_rows(text, path, tail)
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in header]
    df = pl.DataFrame(
        {h: list(col) for h, col in zip(header, columns, strict=True)}, schema={h: pl.Utf8 for h in header}
    )
    return df.with_columns(pl.Series(line_column, lines, dtype=pl.Int64)) if line_column else df


FAST_CSV_BYTES = 1 << 20  # smaller files go through Python's csv module, whose errors name the line


def _read_csv_fast(text: str) -> pl.DataFrame | None:
    """`text` read by polars, every column a string, when that is certainly what Python's csv module gives: one
    record per line (no quoted line break, no blank or all-empty row, no lone CR), quotes only around whole fields,
    every row as long as the header; else None, and the caller reads it line by line (and names a bad line)."""
    if len(text) < FAST_CSV_BYTES or text.count("\r") != text.count("\r\n"):
        return None
    lines = pl.Series([text.rstrip("\n")]).str.split("\n").explode().str.replace_all('""', "", literal=True)
    if ("," + lines + ",").str.contains(r'[^,]"[^,\r]').any():  # a quote that neither opens nor closes a field
        return None
    try:
        df = pl.read_csv(
            io.StringIO(text),
            infer_schema=False,
            has_header=True,
            quote_char='"',
            empty_string_is_null=False,
            raise_if_empty=True,
            truncate_ragged_lines=False,
        )
    except Exception:  # noqa: BLE001 - any doubt: the careful reader decides
        return None
    first = text.split("\n", 1)[0].removesuffix("\r")
    header = [h.strip() for h in next(csv.reader([first]))]  # polars renames duplicates and keeps "" in names
    if (
        header != [h.strip() for h in df.columns]
        or len(set(header)) != len(header)
        or len(lines) != df.height + 1
        or not df.height
    ):
        return None
    # every line as many fields as the header (polars fills a short row with empty strings)
    if (lines.str.replace_all(r'"[^"]*"', "").str.count_matches(",") + 1 != len(header)).any():
        return None
    df.columns = header
    stripped = [pl.col(c).str.strip_chars() == "" for c in header]
    if (
        df.select(pl.any_horizontal(pl.col(c).is_null() for c in header).any()).item()
        or df.select(pl.all_horizontal(stripped).any()).item()
    ):
        return None
    return df


def json_lines(
    lines: Iterable[str | bytes], where: str, *, what: str, error: type[Exception] = InputError
) -> Iterator[tuple[int, dict]]:
    """(line number, object) for every non-blank line of a JSON Lines file (the one reader of the format people hand
    us: GuessWhat?! games, predictions). A line that is not one JSON object raises `error` naming `where`, the line,
    what is wrong, and `what` each line must hold. `lines` may be bytes (a file opened "rb", plain or gzip): a byte
    that is not UTF-8, or a gzip stream that breaks off, is then `error` naming the line too."""
    numbered = enumerate(lines, start=1)
    line_no = 0
    while True:
        try:
            line_no, line = next(numbered)
        except StopIteration:
            return
        except (OSError, EOFError) as exc:  # a damaged or cut gzip stream
            raise error(f"{where}, line {line_no + 1}: cannot be read ({exc}); is the file complete?") from None
        if isinstance(line, bytes):
            raw = line
            try:
                line = raw.decode("utf-8-sig" if line_no == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise error(
                    f"{where}, line {line_no}: byte 0x{raw[exc.start : exc.start + 1].hex()} is not UTF-8; save "
                    "the file as UTF-8"
                ) from None
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(
                f"{where}, line {line_no}: not valid JSON ({exc.msg} at column {exc.colno}); each line must be {what}"
            ) from exc
        except RecursionError:
            raise error(f"{where}, line {line_no}: JSON nested too deeply; each line must be {what}") from None
        if not isinstance(rec, dict):
            raise error(
                f"{where}, line {line_no}: a JSON {type(rec).__name__}, not an object; each line must be {what}"
            )
        yield line_no, rec
