"""Rule agreement_figure: Table 7 (inter-annotator agreement) as a chart beside the paper's values."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import polars as pl

from squidflow.judgments.figures import agreement_figure

table7 = pl.read_csv(snakemake.input[0], schema_overrides={"variant": pl.Utf8}, null_values=["", "nan", "NaN"])
agreement_figure(table7, snakemake.output[0], note=snakemake.params.note)
log.info("wrote %s", snakemake.output[0])
