"""Rule read_subtitles: every ok video's subtitle file (found beside it by name) read into time-stamped cues."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.text.cooccurring import build_subtitles

build_subtitles(snakemake.input.videos, subtitles_path=snakemake.output.subtitles, languages=snakemake.params.languages)
