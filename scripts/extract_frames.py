"""Rule extract_frames: the frames of one shard of `ok` videos -> images + rows + per-video status."""

from squidflow import schemas
from squidflow.frames.extract import FramesConfig, extract_videos, shard_videos
from squidflow.io import read_parquet, write_parquet
from squidflow.logs import setup

log = setup(snakemake)  # noqa: F821
cfg = FramesConfig.from_config(snakemake.params.frames)  # noqa: F821
videos = shard_videos(read_parquet(snakemake.input.videos, schemas.VIDEOS), int(snakemake.wildcards.shard), cfg.shards)  # noqa: F821
log.info("shard %s/%d: %d videos", snakemake.wildcards.shard, cfg.shards, len(videos))  # noqa: F821
frames, status = extract_videos(
    videos, cfg, snakemake.output.images,  # noqa: F821
    image_format=snakemake.params.image_format, quality=snakemake.params.image_quality,  # noqa: F821
    workers=snakemake.threads,  # noqa: F821
)
write_parquet(frames, snakemake.output.frames, schemas.EXTRACTED_FRAMES)  # noqa: F821
write_parquet(status, snakemake.output.status, schemas.EXTRACTION_STATUS)  # noqa: F821
