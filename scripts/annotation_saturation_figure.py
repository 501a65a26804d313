"""Rule annotation_saturation_figure: human-vs-model measures and α as raters per image go from 1 to all."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.evaluation.figures import saturation_figure
from squidflow.evaluation.points import points_from_frame

p = snakemake.params
points, people, _ = points_from_frame(io.read_parquet(snakemake.input.points, schemas.PER_IMAGE_POINTS))
note = "SIMULATED judgments, synthetic videos (demo)" if p.source == "simulated" else ""
saturation_figure(
    points,
    people,
    snakemake.output[0],
    repeats=p.repeats,
    seed=p.intervals["seed"],
    level=p.intervals["level"],
    title="Annotation saturation: raters per image",
    note=note,
)
