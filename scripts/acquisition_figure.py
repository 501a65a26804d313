"""Rule acquisition_figure: videos per event × status and the reasons videos are not ok."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow import io, schemas
from squidflow.videos.figures import acquisition_figure

videos = io.read_parquet(snakemake.input.videos, schemas.VIDEOS)
panels = acquisition_figure(videos, snakemake.output[0], note=snakemake.params.note)
log.info("wrote %s (%d panels)", snakemake.output[0], panels)
