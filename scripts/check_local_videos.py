"""Rule check_local_videos: probe the videos already on disk (demo, local, UCF-Crime), each known by its content."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow import schemas
from squidflow.io import read_parquet, write_json_lines, write_parquet
from squidflow.paths import job_file
from squidflow.videos.download import DownloadOptions
from squidflow.videos.manifest import check_local
from squidflow.videos.shards import read_journals

status = check_local(
    read_parquet(snakemake.input.candidates, schemas.VIDEO_CANDIDATES),
    DownloadOptions(decode_frames=snakemake.params.decode_frames),
    journal_dir=job_file(snakemake.params.journal_dir),
    generation=int(snakemake.wildcards.generation),
    workers=snakemake.threads,
)
log.info("%d videos on disk checked: %s", len(status), dict(status.group_by("status").len().iter_rows()))
write_parquet(status, snakemake.output.status, schemas.VIDEO_STATUS)
# the journal's records of this job's videos, to the declared output (object storage keeps them)
journal = read_journals(job_file(snakemake.params.journal_dir), status["video_id"].to_list())
write_json_lines(snakemake.output.journal, [journal[v] for v in sorted(journal)])
