"""Rule annotator_quality: each annotator's pitfall flags (seed 000 §3.2) and who is excluded."""

from squidflow.logs import setup
from squidflow.quality import annotator_quality

log = setup(snakemake)
annotator_quality(snakemake.input.judgments, snakemake.input.get("frames"), snakemake.output.report, snakemake.config["judgments"]["quality"])
