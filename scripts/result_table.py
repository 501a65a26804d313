"""Rule result_table: aggregate the runs' metrics.json into a table (csv long format, Markdown, LaTeX)."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow import io, schemas  # noqa: E402
from squidflow.training.tables import TABLES, aggregate_runs, read_run_metrics, to_latex, to_markdown  # noqa: E402

spec = TABLES[snakemake.wildcards.table]
order = snakemake.params.order
table = io.conform(aggregate_runs(read_run_metrics(snakemake.input), spec), schemas.RESULT_TABLE)
with io.atomic_path(snakemake.output.csv) as tmp:
    table.write_csv(tmp)
io.write_text(snakemake.output.md, to_markdown(table, spec, order, snakemake.params.ece_bins))
io.write_text(snakemake.output.tex, to_latex(table, spec, order, snakemake.params.ece_bins))
