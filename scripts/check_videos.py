"""Rule check_videos: the video manifest with frame extraction's verdict (undecodable videos become `corrupt`)."""

from squidflow.logs import setup

log = setup(snakemake)

import polars as pl

from squidflow import schemas
from squidflow.frames.extract import checked_manifest
from squidflow.io import read_parquet, write_parquet

status = pl.concat([read_parquet(p, schemas.EXTRACTION_STATUS) for p in snakemake.input.status])
checked = checked_manifest(read_parquet(snakemake.input.videos, schemas.VIDEOS), status)
log.info("%d videos corrupt", status.filter(pl.col("status") == "corrupt").height)
write_parquet(checked, snakemake.output[0], schemas.VIDEOS)
