"""Checkpoint video_candidates: list every configured source's videos (see squidflow.videos.sources)."""

from squidflow.logs import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake

from squidflow import schemas  # noqa: E402
from squidflow.io import write_parquet, write_text  # noqa: E402
from squidflow.videos.download import DownloadOptions, network_params  # noqa: E402
from squidflow.videos.sources import list_candidates  # noqa: E402

params = snakemake.params  # noqa: F821
candidates, notes = list_candidates(
    params.sources,
    release_cfg=params.release,
    demo_catalog=snakemake.input.get("demo_catalog"),  # noqa: F821
    cache_dir=snakemake.params.cache_dir,  # noqa: F821
    ydl_params=network_params(DownloadOptions.from_config(params.search_network)),
)
for note in notes:
    log.info("source note: %s", note)
log.info("%d candidate videos (%d to download)", len(candidates), candidates["download"].sum())
write_parquet(candidates, snakemake.output.candidates, schemas.VIDEO_CANDIDATES)  # noqa: F821
write_text(snakemake.output.notes, "".join(n.replace("\n", " ") + "\n" for n in notes))  # noqa: F821
