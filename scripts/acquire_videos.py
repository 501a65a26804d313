"""Rule acquire_videos: download one shard of the candidates with a pool of workers; one status row per video."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import json

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet, write_json_lines, write_parquet
from squidflow.contracts.paths import job_file
from squidflow.videos.download import DownloadOptions
from squidflow.videos.download_shards import acquire_shard, brake_for, read_journals
from squidflow.videos.manifest import run_started

with open(snakemake.input.settings, encoding="utf-8") as fh:
    opts = DownloadOptions.from_config(json.load(fh))
wc, params = snakemake.wildcards, snakemake.params
status = acquire_shard(
    read_parquet(snakemake.input.candidates, schemas.VIDEO_CANDIDATES),
    shard=int(wc.shard),
    shards=int(wc.shards),
    generation=int(wc.generation),
    opts=opts,
    journal_dir=job_file(params.journal_dir),
    brake=brake_for(opts, job_file(params.brake_dir), str(run_started())),
    folder=snakemake.output.videos,  # the shard's ok videos and subtitles, where the status rows name them
)
write_parquet(status, snakemake.output.status, schemas.VIDEO_STATUS)
# the journal's records of this job's videos, to the declared output (object storage keeps them)
journal = read_journals(job_file(snakemake.params.journal_dir), status["video_id"].to_list())
write_json_lines(snakemake.output.journal, [journal[v] for v in sorted(journal)])
