"""Rule litmus_metrics: accuracy, correlation with the soft labels, well-grounded shares, complement-set probability;
and each metric's mean over seeds with its bootstrap interval over QA pairs."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.litmus.metrics import metric_intervals, metrics_of_models
from squidflow.statistics.intervals import IntervalConfig

soft_labels = io.read_parquet(snakemake.input.soft_labels, schemas.LITMUS_SOFT_LABELS)
runs = [io.read_parquet(p, schemas.LITMUS_PROBABILITIES) for p in snakemake.input.probabilities]
taus, split = snakemake.params.taus, snakemake.params.eval_split
io.write_parquet(
    metrics_of_models(soft_labels, runs, taus, eval_split=split), snakemake.output.metrics, schemas.LITMUS_METRICS
)
intervals = metric_intervals(
    soft_labels, runs, taus, IntervalConfig.from_config(snakemake.params.intervals), eval_split=split
)
io.write_parquet(intervals, snakemake.output.intervals, schemas.LITMUS_METRIC_INTERVALS)
