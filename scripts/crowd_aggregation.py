"""Rule crowd_aggregation: crowd-kit's annotator models beside the rubric -> skill, uncertainty and aggregation tables."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.judgments.crowd import crowd_tables

crowd_tables(
    snakemake.input.judgments,
    snakemake.input.report,
    annotators_csv=snakemake.output.annotators,
    items_csv=snakemake.output.item_table,
    table_csv=snakemake.output.csv,
    table_md=snakemake.output.md,
    default=snakemake.params.aggregation,
    pooling=snakemake.params.pooling,
    kappa_bins=tuple(snakemake.params.kappa_bins),
    **snakemake.params.crowd,
)
