"""Rule result_table: aggregate the runs' metrics.json into a table (csv long format, Markdown, LaTeX)."""

from squidflow.logs import setup

log = setup(snakemake)

import json
from pathlib import Path

from squidflow import io, schemas
from squidflow.training.tables import TABLES, aggregate_runs, read_run_metrics, to_latex, to_markdown

spec = TABLES[snakemake.wildcards.table]
order = snakemake.params.order
choices = dict(snakemake.params.choices)
sets = json.loads(Path(snakemake.input.sets).read_text(encoding="utf-8"))
table = io.conform(aggregate_runs(read_run_metrics(snakemake.input.metrics), spec), schemas.RESULT_TABLE)
io.write_csv(table, snakemake.output.csv)
io.write_text(snakemake.output.md, to_markdown(table, spec, order, snakemake.params.ece_bins, choices, sets))
io.write_text(snakemake.output.tex, to_latex(table, spec, order, snakemake.params.ece_bins, choices, sets))
