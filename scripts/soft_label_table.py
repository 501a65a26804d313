"""Rule soft_label_table: every model's soft-label and calibration measures against the people, with intervals."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow import io, schemas
from squidflow.evaluation.scoring import excluded_annotators, soft_label_outputs

p = snakemake.params
judgments = io.read_parquet(snakemake.input.judgments, schemas.JUDGMENTS)
excluded = excluded_annotators(io.read_parquet(snakemake.input.report, schemas.ANNOTATOR_REPORT))
frames = io.read_parquet(snakemake.input.frames, schemas.FRAMES) if "frames" in snakemake.input.keys() else None
table, markdown, latex = soft_label_outputs(
    p.models, judgments, excluded, variant=p.variant, label_map=p.label_map, events_config=p.events,
    intervals=p.intervals, ece_bins=p.ece_bins, binary_bins=p.binary_bins, source=p.source, cache_dir=p.cache_dir,
    frames=frames,
)
io.write_csv(table, snakemake.output.csv)
io.write_text(snakemake.output.md, markdown)
io.write_text(snakemake.output.tex, latex)
