"""Rule contact_sheets: per event, the selected frames of each video in a row, with cluster and judged certainty."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.frames.figures import contact_sheets_from_files

sheets = contact_sheets_from_files(
    snakemake.input.frames,
    snakemake.output[0],
    scores_path=snakemake.input.get("scores"),
    events_config=snakemake.params.events,
    max_videos=snakemake.params.max_videos,
    note=snakemake.params.note,
)
log.info("wrote %d contact sheets: %s", len(sheets), ", ".join(sheets))
