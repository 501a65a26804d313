"""Rule gather_features: one features file per backbone from its shards."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import polars as pl

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet, write_parquet_sorted

parts = [read_parquet(p, schemas.FEATURES) for p in snakemake.input]
parts = [p for p in parts if len(p)] or parts[:1]
# the shards held once, written in order a block at a time (a sort of 80,000 frames' features took 2.5 GB)
write_parquet_sorted(
    pl.concat(parts, rechunk=False), snakemake.output[0], schemas.FEATURES, ["video_id", "frame_index"]
)
