"""Rule select_frames: six frames per video by k-means (or the release's listed frames), images, splits."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from pathlib import Path

import polars as pl

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet, write_parquet
from squidflow.frames.selection import SelectionConfig, build_dataset
from squidflow.frames.splits import SplitsConfig
from squidflow.videos.takedown import read_log

inp, params = snakemake.input, snakemake.params
frames = build_dataset(
    read_parquet(inp.features, schemas.FEATURES),
    pl.concat([read_parquet(p, schemas.EXTRACTED_FRAMES) for p in inp.frames]),
    pl.concat([read_parquet(p, schemas.EXTRACTION_STATUS) for p in inp.status]),
    read_parquet(inp.videos, schemas.VIDEOS),
    SelectionConfig.from_config(params.selection),
    SplitsConfig.from_config(params.splits),
    snakemake.output.images,
    annotations=params.annotations,
    removed=read_log(Path(inp.takedown_log).read_text(encoding="utf-8")).filter(pl.col("outcome") == "removed")
    if "takedown_log" in inp.keys()
    else None,
)
log.info("%d frames from %d videos", len(frames), frames["video_id"].n_unique())
write_parquet(frames, snakemake.output.frames, schemas.FRAMES)
