"""Rule check_videos: the video manifest with frame extraction's verdict (undecodable videos become `corrupt`)."""

import polars as pl

from squidflow import schemas
from squidflow.frames.extract import checked_manifest
from squidflow.io import read_parquet, write_parquet
from squidflow.logs import setup

log = setup(snakemake)  # noqa: F821
status = pl.concat([read_parquet(p, schemas.EXTRACTION_STATUS) for p in snakemake.input.status])  # noqa: F821
checked = checked_manifest(read_parquet(snakemake.input.videos, schemas.VIDEOS), status)  # noqa: F821
log.info("%d videos corrupt", status.filter(pl.col("status") == "corrupt").height)
write_parquet(checked, snakemake.output[0], schemas.VIDEOS)  # noqa: F821
