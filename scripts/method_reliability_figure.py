"""Rule method_reliability_figure: one Table 3 method's confidence against human judgments and against accuracy."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.training.figures import pooled_run_predictions, reliability_diagram

method = snakemake.wildcards.method
title = f"Table 3 (SQUID-E §5.3), method {method}: SE evaluation images, pooled over seeds"
if snakemake.params.choices.get("judgments_source") == "simulated":
    title += " — SIMULATED judgments, synthetic videos (demo)"
runs = {path: io.read_parquet(path, schemas.RUN_PREDICTIONS) for path in snakemake.input}
points = reliability_diagram(pooled_run_predictions(runs), snakemake.output[0], title)
log.info("reliability bins:\n%s", points)
