"""Parquet shards in the layout the `datasets` library reads: data/<config>/<split>-XXXXX-of-YYYYY.parquet, each file
carrying its `datasets` features (the `huggingface` key of the Parquet schema's metadata), so that the Image feature
of the `images` config decodes to PIL images and lists stay lists.

A config's rows are cut into shards of at most `shard_size` bytes of Arrow data (publish.shard_size; the `datasets`
library's default, datasets.config.MAX_SHARD_SIZE, when unset), as `Dataset.push_to_hub` cuts them.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import datasets
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from datasets.utils.py_utils import convert_file_size_to_int
from polars._typing import PolarsDataType

from squidflow.contracts import schemas
from squidflow.contracts.io import atomic_path
from squidflow.publish.tables import SPLIT_ORDER

IMAGE_COLUMN = "image"

_VALUES: dict[PolarsDataType, str] = {pl.Utf8: "string", pl.Int64: "int64", pl.Float64: "float64", pl.Boolean: "bool"}


@dataclass(frozen=True)
class Shard:
    """One written file: its config, split, path relative to the dataset folder, rows and sha256."""

    config: str
    split: str
    path: str
    rows: int
    sha256: str
    bytes: int


def _feature(dtype: PolarsDataType):
    if isinstance(dtype, pl.List):
        return datasets.List(_feature(dtype.inner))
    return datasets.Value(_VALUES[dtype.base_type()])


def features(schema: schemas.Schema, *, image: bool = False) -> datasets.Features:
    """A published schema's columns as `datasets` features (plus `image`, the datasets.Image feature, in embed mode)."""
    out = {name: _feature(dtype) for name, dtype in schema.columns.items()}
    if image:
        out[IMAGE_COLUMN] = datasets.Image()
    return datasets.Features(out)


_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(KB|MB|GB|KiB|MiB|GiB)\s*$")
_UNITS = {"KB": 10**3, "MB": 10**6, "GB": 10**9, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}  # as `datasets` reads them


def shard_size(size: str | None) -> int:
    """publish.shard_size in bytes ("500MB", "1.5GB"); None: the `datasets` library's default shard size. A value the
    schema's pattern lets through always parses here (`datasets`' own reader takes no decimals)."""
    if size is None:
        return convert_file_size_to_int(datasets.config.MAX_SHARD_SIZE)
    match = _SIZE.match(str(size))
    if not match:
        from squidflow.errors import UserError

        raise UserError(
            f"publish.shard_size = {str(size)[:40]!r} is not a size: write a number and KB, MB, GB, KiB, "
            'MiB or GiB (e.g. "500MB" or "1.5GB").'
        )
    return max(1, int(float(match.group(1)) * _UNITS[match.group(2)]))


def sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def digest(written: Sequence[Shard]) -> str:
    """One sha256 over every data file (its path in the folder and its sha256, in path order): what the card records
    beside the version, so that `publish check` finds data that changed while the version did not."""
    lines = sorted(f"{s.path} {s.sha256}" for s in written)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def folder_digest(folder: str | Path) -> str:
    """`digest` of the data files in a published folder as they are now (data/<config>/*.parquet)."""
    folder = Path(folder)
    lines = sorted(f"{p.relative_to(folder).as_posix()} {sha256(p)}" for p in folder.glob("data/*/*.parquet"))
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _arrow(table: pl.DataFrame, feats: datasets.Features, images: Sequence[bytes | None] | None) -> pa.Table:
    columns = [c for c in feats if c != IMAGE_COLUMN]
    arrow = table.select(columns).to_arrow()
    if images is not None:
        names = [f"{i}.jpg" for i in table["image_id"].to_list()]
        struct = pa.array(
            [{"bytes": b, "path": n} for b, n in zip(images, names, strict=True)],
            type=feats.arrow_schema.field(IMAGE_COLUMN).type,
        )
        arrow = arrow.append_column(IMAGE_COLUMN, struct)
    return arrow.cast(feats.arrow_schema)


def write_config(
    folder: str | Path,
    config: str,
    table: pl.DataFrame,
    feats: datasets.Features,
    max_bytes: int,
    images: Sequence[bytes | None] | None = None,
) -> list[Shard]:
    """The config's rows (with a `split` column in the `datasets` library's names) as shards under
    folder/data/<config>/; `images`: the JPEG bytes of each row (embed mode). An empty config is one empty shard of
    split `test`, so that it still loads."""
    folder = Path(folder)
    out = []
    if table.is_empty():
        table = table.with_columns(pl.lit("test").alias("split"))
        parts = {"test": (table, images)}
    else:
        parts = {}
        for split in [s for s in SPLIT_ORDER if s in set(table["split"].to_list())]:
            mask = (table["split"] == split).to_numpy()
            rows = table.filter(pl.Series(mask))
            parts[split] = (rows, None if images is None else [b for b, m in zip(images, mask, strict=True) if m])
    for split, (rows, imgs) in parts.items():
        arrow = _arrow(rows, feats, imgs)
        n_shards = max(1, math.ceil(arrow.nbytes / max_bytes))
        per = math.ceil(max(arrow.num_rows, 1) / n_shards)
        for k in range(n_shards):
            rel = f"data/{config}/{split}-{k:05d}-of-{n_shards:05d}.parquet"
            path = folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(path) as tmp:
                pq.write_table(arrow.slice(k * per, per), tmp)
            out.append(
                Shard(config, split, rel, min(per, max(arrow.num_rows - k * per, 0)), sha256(path), path.stat().st_size)
            )
    return out
