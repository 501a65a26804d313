"""Rule acquire_videos: download one shard of the candidates with a pool of workers; one status row per video."""

from squidflow.logs import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake

import json  # noqa: E402

from squidflow import schemas  # noqa: E402
from squidflow.io import read_parquet, write_parquet  # noqa: E402
from squidflow.videos.download import DownloadOptions  # noqa: E402
from squidflow.videos.manifest import run_started  # noqa: E402
from squidflow.videos.shards import acquire_shard, brake_for  # noqa: E402

with open(snakemake.input.settings, encoding="utf-8") as fh:  # noqa: F821
    opts = DownloadOptions.from_config(json.load(fh))
wc, params = snakemake.wildcards, snakemake.params  # noqa: F821
status = acquire_shard(
    read_parquet(snakemake.input.candidates, schemas.VIDEO_CANDIDATES),  # noqa: F821
    shard=int(wc.shard),
    shards=int(wc.shards),
    generation=int(wc.generation),
    opts=opts,
    journal_dir=params.journal_dir,
    brake=brake_for(opts, params.brake_dir, str(run_started())),
)
write_parquet(status, snakemake.output[0], schemas.VIDEO_STATUS)  # noqa: F821
