"""Rule litmus_games: every configured GuessWhat?! games file, one row per game with its first turn."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import polars as pl

from squidflow.contracts import io, schemas
from squidflow.litmus.games import load_games

games = load_games(snakemake.params.sources, snakemake.params.cache_dir)
io.write_parquet(games, snakemake.output[0], schemas.LITMUS_GAMES)
for split, n, na, none in (
    games.group_by("split")
    .agg(pl.len(), (pl.col("answer") == "n/a").sum(), (pl.col("n_turns") == 0).sum())
    .sort("split")
    .iter_rows()
):
    log.info(
        "%s: %d games; first answer N/A in %d, no turn in %d (both left out of the litmus test)", split, n, na, none
    )
