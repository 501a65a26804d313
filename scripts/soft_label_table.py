"""Rule soft_label_table: every model's soft-label and calibration measures against the people, with intervals."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.evaluation.points import points_from_frame
from squidflow.evaluation.scoring import soft_label_outputs_of

p = snakemake.params
points, people, skipped = points_from_frame(io.read_parquet(snakemake.input.points, schemas.PER_IMAGE_POINTS))
table, markdown, latex = soft_label_outputs_of(
    points,
    people,
    skipped,
    variant=p.variant,
    intervals=p.intervals,
    ece_bins=p.ece_bins,
    binary_bins=p.binary_bins,
    source=p.source,
)
io.write_csv(table, snakemake.output.csv)
io.write_text(snakemake.output.md, markdown)
io.write_text(snakemake.output.tex, latex)
