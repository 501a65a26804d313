"""Rule result_table: aggregate the runs' metrics.json into a table with intervals (csv long format, Markdown, LaTeX)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import json
from pathlib import Path

from squidflow.contracts import io, schemas
from squidflow.training.tables import TABLES, runs_table, table_with_intervals, to_latex, to_markdown

p = snakemake.params
spec = TABLES[snakemake.wildcards.table]
choices = dict(p.choices)
sets = json.loads(Path(snakemake.input.sets).read_text(encoding="utf-8"))
predictions = {path: io.read_parquet(path, schemas.RUN_PREDICTIONS) for path in snakemake.input.predictions}
metrics = {path: json.loads(Path(path).read_text(encoding="utf-8")) for path in snakemake.input.metrics}
table = table_with_intervals(
    runs_table(metrics), predictions, spec, p.order, p.intervals, ece_bins=p.ece_bins, kl_eps=p.kl_eps, choices=choices
)
table = io.conform(table, schemas.RESULT_TABLE)
io.write_csv(table, snakemake.output.csv)
io.write_text(snakemake.output.md, to_markdown(table, spec, p.order, p.ece_bins, choices, sets, p.intervals))
io.write_text(snakemake.output.tex, to_latex(table, spec, p.order, p.ece_bins, choices, sets, p.intervals))
