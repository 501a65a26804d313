"""Rule make_demo_subtitles: every demo video's SYNTHETIC subtitles (WebVTT), written from its per-frame truth."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from pathlib import Path

import polars as pl

from squidflow.contracts import io, schemas
from squidflow.demo.subtitles import demo_subtitles

# one job for the whole corpus: writing a file costs less than starting a job
truth = io.read_parquet(snakemake.input.truth, schemas.TRUTH)
for path in map(Path, snakemake.output.vtt):
    video_id = path.name.removesuffix(".en.vtt")
    rows = truth.filter(pl.col("video_id") == video_id)
    if rows.height == 0:
        raise ValueError(
            f"{snakemake.input.truth}: no truth rows for {video_id}, so {path} cannot be written; "
            "rerun rule demo_corpus"
        )
    io.write_text(path, demo_subtitles(rows, seed=snakemake.params.seed))
