"""Rule agreement_table: Table 7 (Spearman, Krippendorff's alpha, Fleiss' kappa) for variants A, B and A+B, each with
its bootstrap interval over images."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.intervals import IntervalConfig
from squidflow.judgments.agreement import write_table7

write_table7(
    snakemake.input.judgments,
    snakemake.input.report,
    snakemake.input.high_certainty,
    csv_path=snakemake.output.csv,
    md_path=snakemake.output.md,
    pooling=snakemake.params.pooling,
    kappa_bins=tuple(snakemake.params.kappa_bins),
    on_empty=snakemake.params.on_empty,
    intervals=IntervalConfig.from_config(snakemake.params.intervals),
)
