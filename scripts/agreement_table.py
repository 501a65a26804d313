"""Rule agreement_table: Table 7 (Spearman, Krippendorff's alpha, Fleiss' kappa) for variants A, B and A+B, each with
its bootstrap interval over images."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import polars as pl

from squidflow.contracts import io, schemas
from squidflow.judgments.tables import table7
from squidflow.statistics.intervals import IntervalConfig

p = snakemake.params
table, md = table7(
    io.read_parquet(snakemake.input.judgments, schemas.JUDGMENTS),
    io.read_parquet(snakemake.input.report, schemas.ANNOTATOR_REPORT),
    pl.read_csv(snakemake.input.high_certainty),
    report_name=p.report_name,
    pooling=p.pooling,
    kappa_bins=tuple(p.kappa_bins),
    on_empty=p.on_empty,
    intervals=IntervalConfig.from_config(p.intervals),
    policy=p.exclude,
)
io.write_csv(table, snakemake.output.csv, float_precision=4)
io.write_text(snakemake.output.md, md)
