"""Rule cooccurring_text: per selected frame, its video's metadata and the subtitles around its timestamp."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import polars as pl

from squidflow.contracts import io, schemas
from squidflow.text.cooccurring import cooccurring_report, cooccurring_text

window_s = snakemake.params.window_s
frames = io.read_parquet(snakemake.input.frames, schemas.FRAMES)
videos = io.read_parquet(snakemake.input.videos, schemas.VIDEOS)
subtitles = io.read_parquet(snakemake.input.subtitles, schemas.SUBTITLES)
cooc = io.write_parquet(
    cooccurring_text(frames, videos, subtitles, window_s=window_s), snakemake.output.cooccurring, schemas.COOCCURRING
)
io.write_text(snakemake.output.report, cooccurring_report(cooc, subtitles, window_s=window_s))
log.info(
    "co-occurring text: %d frames, %d with subtitle text in their window",
    cooc.height,
    cooc.filter(pl.col("subtitles") != "").height,
)
