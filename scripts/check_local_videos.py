"""Rule check_local_videos: probe the videos already on disk (demo, local, UCF-Crime), each known by its content."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet, write_parquet
from squidflow.videos.download import DownloadOptions
from squidflow.videos.manifest import check_local

status = check_local(
    read_parquet(snakemake.input.candidates, schemas.VIDEO_CANDIDATES),
    DownloadOptions(decode_frames=snakemake.params.decode_frames),
    journal_dir=snakemake.params.journal_dir,
    generation=int(snakemake.wildcards.generation),
    workers=snakemake.threads,
)
log.info("%d videos on disk checked: %s", len(status), dict(status.group_by("status").len().iter_rows()))
write_parquet(status, snakemake.output[0], schemas.VIDEO_STATUS)
