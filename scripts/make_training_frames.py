"""Rule make_training_frames: a pool's training images as whole frames at a 2·crop short side (for GA and AU)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import polars as pl

from squidflow.contracts import io, schemas
from squidflow.training.cache import build_frame_cache

pool = io.read_parquet(snakemake.input.index, schemas.TRAINING_IMAGES)
training_images = pool.filter(pl.col("split") == "train")
index = build_frame_cache(training_images, snakemake.output.cache, snakemake.params.short_side)
io.write_parquet(index, snakemake.output.index, schemas.TRAINING_FRAMES)
