"""Rule cooccurring_text: per selected frame, its video's metadata and the subtitles around its timestamp."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.text.cooccurring import build_cooccurring

build_cooccurring(
    snakemake.input.frames,
    snakemake.input.videos,
    snakemake.input.subtitles,
    cooccurring_path=snakemake.output.cooccurring,
    report_path=snakemake.output.report,
    window_s=snakemake.params.window_s,
)
