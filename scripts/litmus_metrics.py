"""Rule litmus_metrics: accuracy, correlation with the soft labels, well-grounded shares, complement-set probability."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow import io, schemas
from squidflow.litmus.metrics import metrics_of_models

soft_labels = io.read_parquet(snakemake.input.soft_labels, schemas.LITMUS_SOFT_LABELS)
runs = [io.read_parquet(p, schemas.LITMUS_PROBABILITIES) for p in snakemake.input.probabilities]
metrics = metrics_of_models(soft_labels, runs, snakemake.params.taus, eval_split=snakemake.params.eval_split)
io.write_parquet(metrics, snakemake.output[0], schemas.LITMUS_METRICS)
