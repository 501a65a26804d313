"""Rule acquisition_figure: videos per event × status and the reasons videos are not ok."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.videos.figures import acquisition_figure

videos = io.read_parquet(snakemake.input.videos, schemas.VIDEOS)
panels = acquisition_figure(videos, snakemake.output[0], note=snakemake.params.note)
log.info("wrote %s (%d panels)", snakemake.output[0], panels)
