"""Rule check_videos: the video manifest with frame extraction's verdict (undecodable videos become `corrupt`)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import polars as pl

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet, write_parquet
from squidflow.frames.extract import checked_manifest

status = pl.concat([read_parquet(p, schemas.EXTRACTION_STATUS) for p in snakemake.input.status])
checked = checked_manifest(read_parquet(snakemake.input.videos, schemas.VIDEOS), status)
log.info("%d videos corrupt", status.filter(pl.col("status") == "corrupt").height)
write_parquet(checked, snakemake.output[0], schemas.VIDEOS)
