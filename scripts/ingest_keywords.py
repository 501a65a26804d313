"""Rule ingest_keywords: the keyword task's batch results read back into results/judgments/keywords.parquet."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.judgments.keywords import ingest_keywords

ingest_keywords(
    snakemake.output.keywords,
    snakemake.output.report,
    batches=snakemake.params.batches,
    frames=snakemake.input.frames,
    on_error=snakemake.params.on_error,
    max_length=snakemake.params.max_length,
    source=snakemake.params.source,
)
