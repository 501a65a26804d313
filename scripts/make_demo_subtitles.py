"""Rule make_demo_subtitles: every demo video's SYNTHETIC subtitles (WebVTT), written from its per-frame truth."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.demo.subtitles import write_demo_subtitles

write_demo_subtitles(snakemake.input.truth, list(snakemake.output.vtt), seed=snakemake.params.seed)
