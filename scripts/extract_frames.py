"""Rule extract_frames: the frames of one shard of `ok` videos -> images + rows + per-video status."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet, write_parquet
from squidflow.frames.extract import FramesConfig, extract_videos, shard_videos

cfg = FramesConfig.from_config(snakemake.params.frames)
videos = shard_videos(read_parquet(snakemake.input.videos, schemas.VIDEOS), int(snakemake.wildcards.shard), cfg.shards)
log.info("shard %s/%d: %d videos", snakemake.wildcards.shard, cfg.shards, len(videos))
frames, status = extract_videos(
    videos,
    cfg,
    snakemake.output.images,
    image_format=snakemake.params.image_format,
    quality=snakemake.params.image_quality,
    workers=snakemake.threads,
)
write_parquet(frames, snakemake.output.frames, schemas.EXTRACTED_FRAMES)
write_parquet(status, snakemake.output.status, schemas.EXTRACTION_STATUS)
