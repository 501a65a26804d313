"""Rule per_image_points: every Table 2 model's points on the judged images and the people's ratings, computed once
for the soft-label table and its two figures."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.evaluation.scoring import excluded_annotators, per_image_points

p = snakemake.params
judgments = io.read_parquet(snakemake.input.judgments, schemas.JUDGMENTS)
excluded = excluded_annotators(io.read_parquet(snakemake.input.report, schemas.ANNOTATOR_REPORT))
frames = io.read_parquet(snakemake.input.frames, schemas.FRAMES) if "frames" in snakemake.input.keys() else None
points = per_image_points(
    p.models,
    judgments,
    excluded,
    variant=p.variant,
    label_map=p.label_map,
    events_config=p.events,
    cache_dir=p.cache_dir,
    frames=frames,
)
io.write_parquet(points, snakemake.output[0], schemas.PER_IMAGE_POINTS)
log.info("%d rows: %s", len(points), dict(points["role"].value_counts().iter_rows()))
