"""Rule annotation_saturation_figure: human-vs-model measures and α as raters per image go from 1 to all."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow import io, schemas
from squidflow.evaluation.figures import saturation_figure
from squidflow.evaluation.scoring import excluded_annotators, points_and_people

p = snakemake.params
judgments = io.read_parquet(snakemake.input.judgments, schemas.JUDGMENTS)
excluded = excluded_annotators(io.read_parquet(snakemake.input.report, schemas.ANNOTATOR_REPORT))
frames = io.read_parquet(snakemake.input.frames, schemas.FRAMES) if "frames" in snakemake.input.keys() else None
points, people, _ = points_and_people(p.models, judgments, excluded, variant=p.variant, label_map=p.label_map,
                                      events_config=p.events, cache_dir=p.cache_dir, frames=frames)
note = "SIMULATED judgments, synthetic videos (demo)" if p.source == "simulated" else ""
saturation_figure(points, people, snakemake.output[0], repeats=p.repeats, seed=p.intervals["seed"],
                  level=p.intervals["level"], title="Annotation saturation: raters per image", note=note)
