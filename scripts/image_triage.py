"""Rule image_triage: each image and prompt as clear, ambiguous, contested or undecided, with its reason."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.judgments.image_triage import image_triage, image_triage_markdown, triage_figure
from squidflow.judgments.triage import TriageConfig, crowdlab, event_probabilities, first_round
from squidflow.statistics.intervals import IntervalConfig

p, out = snakemake.params, snakemake.output
judgments = io.read_parquet(snakemake.input.judgments, schemas.JUDGMENTS)
triage = io.read_parquet(snakemake.input.triage, schemas.RATER_TRIAGE)
cfg = TriageConfig.from_config(p.triage)
probability, consensus = None, None
if snakemake.input.get("predictions"):
    predictions = io.read_parquet(snakemake.input.predictions, schemas.PREDICTIONS)
    probability = event_probabilities(predictions, judgments, p.events, p.events_config)
    consensus = crowdlab(first_round(judgments), probability).get("items")
images = image_triage(
    judgments,
    triage,
    cfg,
    intervals=IntervalConfig.from_config(p.intervals),
    probability=probability,
    consensus=consensus,
)
source = ",".join(sorted(judgments["source"].unique().to_list())) or "none"
log.info("image triage: %s", dict(images.group_by("triage").len().iter_rows()))
io.write_parquet(images, out.images, schemas.IMAGE_TRIAGE)
io.write_csv(images, out.csv, float_precision=4)
io.write_text(out.md, image_triage_markdown(images, policy=p.exclude, source=source, cfg=cfg))
frames = snakemake.input.get("frames")
triage_figure(images, out.figure, frames=io.read_parquet(frames, schemas.FRAMES) if frames else None, note=p.note)
