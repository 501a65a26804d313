"""Rule annotator_quality: each annotator's pitfall flags (SQUID-E §3.2) and who is excluded."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.judgments.quality import annotator_quality

annotator_quality(snakemake.input.judgments, snakemake.input.get("frames"), snakemake.output.report, snakemake.params.quality)
