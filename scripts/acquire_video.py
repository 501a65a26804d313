"""Rule acquire_video: download one video and check it decodes; always writes its status row (never fails)."""

from squidflow.logs import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake

import polars as pl  # noqa: E402

from squidflow import schemas  # noqa: E402
from squidflow.io import read_parquet, write_parquet  # noqa: E402
from squidflow.videos.download import DownloadOptions  # noqa: E402
from squidflow.videos.manifest import acquire  # noqa: E402

video_id = snakemake.wildcards.video_id  # noqa: F821
candidates = read_parquet(snakemake.input.candidates, schemas.VIDEO_CANDIDATES)  # noqa: F821
row = candidates.filter(pl.col("video_id") == video_id)
if row.is_empty():
    raise ValueError(
        f"{snakemake.input.candidates}: no candidate '{video_id}'; it is no longer listed by any source. "  # noqa: F821
        "Delete its status file or list it again in `sources`."
    )
status = acquire(
    row.row(0, named=True),
    DownloadOptions.from_config(snakemake.params.download),  # noqa: F821
    retry_generation=int(snakemake.wildcards.generation),  # noqa: F821
)
write_parquet(status, snakemake.output[0], schemas.VIDEO_STATUS)  # noqa: F821
