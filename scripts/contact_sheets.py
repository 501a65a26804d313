"""Rule contact_sheets: per event, the selected frames of each video in a row, with cluster and judged certainty."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.frames.figures import contact_sheets

frames = io.read_parquet(snakemake.input.frames, schemas.FRAMES)
scores = snakemake.input.get("scores")
sheets = contact_sheets(
    frames,
    snakemake.output[0],
    scores=io.read_parquet(scores, schemas.IMAGE_SCORES) if scores else None,
    events_config=snakemake.params.events,
    max_videos=snakemake.params.max_videos,
    note=snakemake.params.note,
)
log.info("wrote %d contact sheets: %s", len(sheets), ", ".join(sheets))
