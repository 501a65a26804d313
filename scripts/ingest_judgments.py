"""Rule ingest_judgments: MTurk batch results, Label Studio exports, the simulated panel's or the SQUID-E release's
judgments -> judgments.parquet."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.judgments.ingest import ingest_to
from squidflow.judgments.label_studio.run_exports import ingest_exports_to

if snakemake.params.exports:
    ingest_exports_to(
        snakemake.output.judgments,
        snakemake.output.report,
        exports=snakemake.params.exports,
        source=snakemake.params.source,
        frames=snakemake.input.get("frames"),
        on_error=snakemake.params.on_error,
        on_empty=snakemake.params.on_empty,
        takedown=snakemake.input.get("takedown"),
        counts_path=snakemake.output.counts,
    )
else:
    ingest_to(
        snakemake.output.judgments,
        snakemake.output.report,
        source=snakemake.params.source,
        release_csv=snakemake.params.release_csv,
        batches=snakemake.params.batches,
        frames=snakemake.input.get("frames"),
        on_error=snakemake.params.on_error,
        on_empty=snakemake.params.on_empty,
        cache_dir=snakemake.params.cache_dir,
        takedown=snakemake.input.get("takedown"),
        counts_path=snakemake.output.counts,
    )
