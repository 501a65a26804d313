"""Rule evaluate_runs: every training run measured against the human judgments per certainty bin (runs.parquet)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.evaluation.training_runs import evaluate_runs

p = snakemake.params
scores = io.read_parquet(snakemake.input.scores, schemas.IMAGE_SCORES)
runs = {path: io.read_parquet(path, schemas.RUN_PREDICTIONS) for path in snakemake.input.runs}
table = evaluate_runs(
    runs,
    scores,
    classification_events=p.classification_events,
    calibration_target=p.calibration_target,
    events_config=p.events,
    kl_eps=p.kl_eps,
)
io.write_parquet(table, snakemake.output[0], schemas.RUN_EVALUATION)
