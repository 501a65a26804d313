"""Checkpoint video_manifest: gather the status rows (probing local videos here) into videos.parquet + the report."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow import schemas
from squidflow.io import read_parquet, write_parquet, write_text
from squidflow.videos.brake import run_notes
from squidflow.videos.download import DownloadOptions
from squidflow.videos.manifest import build_manifest, download_report, probe_local_candidates, run_started

candidates = read_parquet(snakemake.input.candidates, schemas.VIDEO_CANDIDATES)
opts = DownloadOptions(decode_frames=snakemake.params.decode_frames)
statuses = [read_parquet(p, schemas.VIDEO_STATUS) for p in snakemake.input.statuses]
statuses.append(probe_local_candidates(candidates, opts, workers=snakemake.threads))
manifest = build_manifest(candidates, statuses)
with open(snakemake.input.notes, encoding="utf-8") as fh:
    notes = [line.rstrip("\n") for line in fh if line.strip()]
report = download_report(manifest, notes, run_notes(snakemake.params.brake_dir, str(run_started())))
log.info("\n%s", report)
write_parquet(manifest, snakemake.output.manifest, schemas.VIDEOS)
write_text(snakemake.output.report, report)
