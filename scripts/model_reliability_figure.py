"""Rule model_reliability_figure: a reliability diagram per model with bootstrap bands and the smooth-ECE curve."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.config.validation import from_section
from squidflow.contracts import io, schemas
from squidflow.evaluation.figures import reliability_figure
from squidflow.evaluation.points import points_from_frame
from squidflow.statistics.intervals import IntervalConfig

p = snakemake.params
points, _, _ = points_from_frame(io.read_parquet(snakemake.input.points, schemas.PER_IMAGE_POINTS))
note = "SIMULATED judgments, synthetic videos (demo)" if p.source == "simulated" else ""
reliability_figure(
    points,
    snakemake.output[0],
    from_section(IntervalConfig, p.intervals),
    n_bins=p.ece_bins,
    title="Reliability of each model's rank-1 score",
    note=note,
)
