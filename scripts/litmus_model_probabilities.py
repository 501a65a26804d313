"""Rule litmus_model_probabilities: a configured guesser's first-turn probabilities, read and checked."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.fetch import fetch
from squidflow.litmus.probabilities import read_probabilities

games = io.read_parquet(snakemake.input.games, schemas.LITMUS_GAMES)
source = snakemake.params.source
probabilities = read_probabilities(
    fetch(source, snakemake.params.cache_dir), games, model=snakemake.wildcards.model, name=source
)
io.write_parquet(probabilities, snakemake.output[0], schemas.LITMUS_PROBABILITIES)
log.info("%s: probabilities for %d games", snakemake.wildcards.model, probabilities["game_id"].n_unique())
