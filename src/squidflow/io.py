"""Reading and writing artifacts at the edges of the workflow.

Two promises: a file a rule leaves behind is either complete or absent (write to a temporary file in the same
folder, then rename — so a killed job never leaves a half-written Parquet that Snakemake would take as done), and a
Parquet file read by a rule has the columns its schema says (so a mismatch is reported where it is read, naming the
file, the column and the rule that makes it, rather than as a KeyError three functions deeper).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import polars as pl

from squidflow.schemas import ANY_WIDTH_F32, Schema


class SchemaError(ValueError):
    """An artifact does not have the columns or types its schema promises."""


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
                exprs.append(pl.col(col).cast(pl.List(pl.Float32)).list.to_array(int(width or 1)).alias(col))
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


def read_parquet(path: str | os.PathLike, schema: Schema) -> pl.DataFrame:
    """Read an artifact and check it against its schema."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: artifact '{schema.name}' not found; it is produced by {schema.produced_by}")
    return check(pl.read_parquet(path), schema, where=str(path))
