"""Rule dropped_videos: every video dropped at any stage, why, what to do, where to look; the files skipped."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet, write_text
from squidflow.videos.manifest import dropped_line, dropped_report

videos = read_parquet(snakemake.input.videos, schemas.VIDEOS)
with open(snakemake.input.notes, encoding="utf-8") as fh:
    notes = [line.rstrip("\n") for line in fh if line.strip()]
log.info("%s", dropped_line(videos, notes))
write_text(
    snakemake.output[0],
    dropped_report(
        videos, notes, frame_shards=snakemake.params.frame_shards, manifest_path=snakemake.params.manifest_path
    ),
)
