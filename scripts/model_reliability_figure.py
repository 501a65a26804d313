"""Rule model_reliability_figure: a reliability diagram per model with bootstrap bands and the smooth-ECE curve."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow import io, schemas
from squidflow.config import from_section
from squidflow.evaluation.figures import reliability_figure
from squidflow.evaluation.scoring import excluded_annotators, points_and_people
from squidflow.intervals import IntervalConfig

p = snakemake.params
judgments = io.read_parquet(snakemake.input.judgments, schemas.JUDGMENTS)
excluded = excluded_annotators(io.read_parquet(snakemake.input.report, schemas.ANNOTATOR_REPORT))
frames = io.read_parquet(snakemake.input.frames, schemas.FRAMES) if "frames" in snakemake.input.keys() else None
points, _, skipped = points_and_people(p.models, judgments, excluded, variant=p.variant, label_map=p.label_map,
                                       events_config=p.events, cache_dir=p.cache_dir, frames=frames)
note = "SIMULATED judgments, synthetic videos (demo)" if p.source == "simulated" else ""
reliability_figure(points, snakemake.output[0], from_section(IntervalConfig, p.intervals), n_bins=p.ece_bins,
                   title="Reliability of each model's rank-1 score", note=note)
