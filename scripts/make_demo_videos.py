"""Rule make_demo_videos: render one synthetic demo video and its per-frame truth."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow import io, schemas
from squidflow.demo.videos import DemoConfig, make_video

cfg = DemoConfig.from_config(snakemake.params.demo)
truth = make_video(cfg, snakemake.wildcards.video_id, snakemake.output.video, progress=True)
io.write_parquet(truth, snakemake.output.truth, schemas.TRUTH)
log.info("%s: %d frames, conditions %s", snakemake.wildcards.video_id, truth.height,
         dict(truth["condition"].value_counts().iter_rows()))
