"""Rule acquire_videos: download one shard of the candidates with a pool of workers; one status row per video."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import json

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet, write_parquet
from squidflow.videos.download import DownloadOptions
from squidflow.videos.download_shards import acquire_shard, brake_for
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
    journal_dir=params.journal_dir,
    brake=brake_for(opts, params.brake_dir, str(run_started())),
)
write_parquet(status, snakemake.output[0], schemas.VIDEO_STATUS)
