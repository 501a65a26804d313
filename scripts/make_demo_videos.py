"""Rule make_demo_videos: render one event's synthetic demo videos and their per-frame truth, one after the other,
each video with its own log (its generators depend on the seed and the video alone: the same bytes as alone)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from pathlib import Path

from squidflow.contracts import io, schemas
from squidflow.demo.videos import DemoConfig, make_video
from squidflow.runtime.logs import log_to

cfg = DemoConfig.from_config(snakemake.params.demo)
out = snakemake.output
for k, video in enumerate(out.video):
    video_id = Path(video).stem
    with log_to(snakemake.log[k]):
        truth = make_video(cfg, video_id, out.video[k], progress=True)
        io.write_parquet(truth, out.truth[k], schemas.TRUTH)
        log.info(
            "%s: %d frames, conditions %s", video_id, truth.height, dict(truth["condition"].value_counts().iter_rows())
        )
