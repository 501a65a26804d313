"""Rule run_predictions: a training run's SQUID-E images in the predictions format (every class ranked)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.evaluation.training_runs import run_predictions

run = io.read_parquet(snakemake.input.run, schemas.RUN_PREDICTIONS)
io.write_parquet(run_predictions(run, snakemake.params.classes), snakemake.output[0], schemas.PREDICTIONS)
