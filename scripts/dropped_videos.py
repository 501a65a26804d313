"""Rule dropped_videos: every video dropped at any stage, why, what to do, where to look; the files skipped."""

from squidflow.logs import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake

from squidflow import schemas  # noqa: E402
from squidflow.io import read_parquet, write_text  # noqa: E402
from squidflow.videos.manifest import dropped_line, dropped_report  # noqa: E402

videos = read_parquet(snakemake.input.videos, schemas.VIDEOS)  # noqa: F821
with open(snakemake.input.notes, encoding="utf-8") as fh:  # noqa: F821
    notes = [line.rstrip("\n") for line in fh if line.strip()]
log.info("%s", dropped_line(videos, notes))
write_text(snakemake.output[0], dropped_report(videos, notes, frame_shards=snakemake.params.frame_shards,  # noqa: F821
                                              manifest_path=str(snakemake.input.videos)))  # noqa: F821
