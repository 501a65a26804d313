"""Rule frame_spread_figure: where the selected frames fall in their videos (fraction of the duration)."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.frames.figures import frame_spread_from_files

panels = frame_spread_from_files(snakemake.input.frames, snakemake.input.videos, snakemake.output[0],
                                 max_videos=snakemake.params.max_videos, note=snakemake.params.note)
log.info("wrote %s (%d panels)", snakemake.output[0], panels)
