"""Rule aggregate_judgments: per image and prompt mean, std, n, certainty bin and the alt bins (SQUID-E supplement D.3)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import polars as pl

from squidflow.contracts import io, schemas
from squidflow.judgments.scores import high_certainty_share, image_scores

judgments = io.read_parquet(snakemake.input.judgments, schemas.JUDGMENTS)
report = io.read_parquet(snakemake.input.report, schemas.ANNOTATOR_REPORT)
scores = image_scores(
    judgments, report.filter(pl.col("excluded"))["annotator"].to_list(), snakemake.params.high_certainty
)
io.write_parquet(scores, snakemake.output.scores, schemas.IMAGE_SCORES)
io.write_csv(high_certainty_share(scores), snakemake.output.high_certainty)
