"""Rule evaluation_table: Table 2 or Table 8 from the models' accuracy rows (long CSV, Markdown, LaTeX)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import json
from pathlib import Path

from squidflow.contracts import io, schemas
from squidflow.evaluation.tables import ModelInfo, build_table

p = snakemake.params
models = [ModelInfo(m["name"], m["reference_accuracy"], m["demo"]) for m in p.models]
accuracies = [io.read_parquet(path, schemas.MODEL_ACCURACY) for path in snakemake.input.accuracy]
summaries = [json.loads(Path(path).read_text(encoding="utf-8")) for path in snakemake.input.summary]
table, markdown, latex = build_table(
    accuracies,
    summaries,
    models,
    snakemake.wildcards.table,
    variant=p.variant,
    top_k=p.top_k,
    label_map=p.label_map,
    source=p.source,
    intervals=p.intervals,
)
io.write_csv(io.conform(table, schemas.MODEL_ACCURACY), snakemake.output.csv)
io.write_text(snakemake.output.md, markdown)
io.write_text(snakemake.output.tex, latex)
