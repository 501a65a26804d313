"""Rule gather_features: one features file per backbone from its shards."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import polars as pl

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet, write_parquet

parts = [read_parquet(p, schemas.FEATURES) for p in snakemake.input]
parts = [p for p in parts if len(p)] or parts[:1]
write_parquet(pl.concat(parts).sort("video_id", "frame_index"), snakemake.output[0], schemas.FEATURES)
