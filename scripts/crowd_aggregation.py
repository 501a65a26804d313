"""Rule crowd_aggregation: crowd-kit's annotator models beside the rubric -> skill, uncertainty and aggregation tables."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.judgments.crowd import crowd_tables
from squidflow.statistics.intervals import IntervalConfig

p, out = snakemake.params, snakemake.output
tables = crowd_tables(
    io.read_parquet(snakemake.input.judgments, schemas.JUDGMENTS),
    io.read_parquet(snakemake.input.report, schemas.ANNOTATOR_REPORT),
    default=p.aggregation,
    pooling=p.pooling,
    kappa_bins=tuple(p.kappa_bins),
    intervals=IntervalConfig.from_config(p.intervals),
    **p.crowd,
)
io.write_csv(tables["annotators"], out.annotators, float_precision=4)
io.write_csv(tables["items"], out.item_table, float_precision=4)
io.write_csv(tables["table"], out.csv, float_precision=4)
io.write_text(out.md, tables["markdown"])
