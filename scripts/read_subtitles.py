"""Rule read_subtitles: every ok video's subtitle file (found beside it by name) read into time-stamped cues."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.text.cooccurring import read_video_subtitles

languages = snakemake.params.languages
videos = io.read_parquet(snakemake.input.videos, schemas.VIDEOS)
subs = io.write_parquet(read_video_subtitles(videos, languages), snakemake.output.subtitles, schemas.SUBTITLES)
counts = dict(subs.group_by("status").len().iter_rows()) if subs.height else {}
log.info("subtitles (%s): %s", ", ".join(languages), counts or "no ok video")
