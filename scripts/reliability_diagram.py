"""Rule reliability_diagram: one Table 3 method's confidence against human judgments and against accuracy."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.training.figures import read_run_predictions, reliability_diagram

method = snakemake.wildcards.method
title = f"Table 3 (SQUID-E §5.3), method {method}: SE evaluation images, pooled over seeds"
if snakemake.params.choices.get("judgments_source") == "simulated":
    title += " — SIMULATED judgments, synthetic videos (demo)"
points = reliability_diagram(read_run_predictions(snakemake.input), snakemake.output[0], title)
log.info("reliability bins:\n%s", points)
