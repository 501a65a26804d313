"""Rule litmus_soft_labels: question types and rule soft labels (category; spatial R1-R3) for every first turn."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import polars as pl

from squidflow.contracts import io, schemas
from squidflow.litmus.soft_labels import label_games

games = io.read_parquet(snakemake.input[0], schemas.LITMUS_GAMES)
labels = label_games(games, snakemake.params.normalisation)
io.write_parquet(labels, snakemake.output[0], schemas.LITMUS_SOFT_LABELS)
per_qa = labels.group_by("game_id").agg(pl.col("question_type").first(), pl.col("soft_label").is_null().all())
for qtype, n, unlabelled in (
    per_qa.group_by("question_type").agg(pl.len(), pl.col("soft_label").sum()).sort("question_type").iter_rows()
):
    log.info("%s: %d first turns (%d without a soft label)", qtype, n, unlabelled)
