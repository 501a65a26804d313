"""Rule check_local_videos: probe the videos already on disk (demo, local, UCF-Crime), each known by its content."""

from squidflow.logs import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake

from squidflow import schemas  # noqa: E402
from squidflow.io import read_parquet, write_parquet  # noqa: E402
from squidflow.videos.download import DownloadOptions  # noqa: E402
from squidflow.videos.manifest import check_local  # noqa: E402

status = check_local(
    read_parquet(snakemake.input.candidates, schemas.VIDEO_CANDIDATES),  # noqa: F821
    DownloadOptions(decode_frames=snakemake.params.decode_frames),  # noqa: F821
    journal_dir=snakemake.params.journal_dir,  # noqa: F821
    generation=int(snakemake.wildcards.generation),  # noqa: F821
    workers=snakemake.threads,  # noqa: F821
)
log.info("%d videos on disk checked: %s", len(status), dict(status.group_by("status").len().iter_rows()))
write_parquet(status, snakemake.output[0], schemas.VIDEO_STATUS)  # noqa: F821
