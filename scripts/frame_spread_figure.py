"""Rule frame_spread_figure: where the selected frames fall in their videos (fraction of the duration)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.frames.figures import frame_spread

frames = io.read_parquet(snakemake.input.frames, schemas.FRAMES)
videos = io.read_parquet(snakemake.input.videos, schemas.VIDEOS)
panels = frame_spread(
    frames, videos, snakemake.output[0], max_videos=snakemake.params.max_videos, note=snakemake.params.note
)
log.info("wrote %s (%d panels)", snakemake.output[0], panels)
