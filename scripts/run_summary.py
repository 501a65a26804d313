"""Rule run_summary: what ran, with which config files, and how long each step took (from Snakemake's records)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.report.summary import write_run_summary

per_rule = write_run_summary(
    snakemake.output[0],
    configfiles=snakemake.params.configfiles,
    stages=snakemake.params.stages,
    data_note=snakemake.params.note,
    repo=snakemake.params.repo,
)
log.info("steps and their job time:\n%s", per_rule)
