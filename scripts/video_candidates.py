"""Checkpoint video_candidates: list every configured source's videos (see squidflow.videos.sources), less the videos
of the takedown list (squidflow.videos.takedown)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import schemas
from squidflow.contracts.io import write_csv, write_parquet, write_text
from squidflow.contracts.paths import job_file
from squidflow.videos.download import DownloadOptions, network_params
from squidflow.videos.sources import list_candidates
from squidflow.videos.takedown import apply_takedowns, notes_without

params = snakemake.params
candidates, notes = list_candidates(
    params.sources,
    release_cfg=params.release,
    demo_catalog=snakemake.input.get("demo_catalog"),
    cache_dir=snakemake.params.cache_dir,
    ydl_params=network_params(DownloadOptions.from_config(params.search_network)),
)
listed = candidates
candidates, takedown_log = apply_takedowns(
    candidates,
    params.takedown,
    journal_dirs=[job_file(d) for d in params.journal_dirs],
    status_dir=job_file(params.status_dir),
    downloads_dir=job_file(params.downloads_dir),
)
notes = notes_without(notes, takedown_log, listed)  # no note names a video taken down
for note in notes:
    log.info("source note: %s", note)
log.info("%d candidate videos (%d to download)", len(candidates), candidates["download"].sum())
write_parquet(candidates, snakemake.output.candidates, schemas.VIDEO_CANDIDATES)
write_text(snakemake.output.notes, "".join(n.replace("\n", " ") + "\n" for n in notes))
write_csv(takedown_log, snakemake.output.takedown_log)
