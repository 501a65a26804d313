"""Rule acquisition_figure: videos per event × status and the reasons videos are not ok."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.videos.figures import acquisition_figure_from_file

panels = acquisition_figure_from_file(snakemake.input.videos, snakemake.output[0], note=snakemake.params.note)
log.info("wrote %s (%d panels)", snakemake.output[0], panels)
