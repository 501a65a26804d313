"""Rule video_manifest: gather the status rows (downloads and local checks) into videos.parquet + the report."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow import schemas
from squidflow.io import read_parquet, write_parquet, write_text
from squidflow.paths import job_file
from squidflow.videos.brake import run_notes
from squidflow.videos.manifest import build_manifest, download_report, run_started

candidates = read_parquet(snakemake.input.candidates, schemas.VIDEO_CANDIDATES)
statuses = [read_parquet(p, schemas.VIDEO_STATUS) for p in snakemake.input.statuses]
manifest = build_manifest(candidates, statuses)
with open(snakemake.input.notes, encoding="utf-8") as fh:
    notes = [line.rstrip("\n") for line in fh if line.strip()]
report = download_report(manifest, notes, run_notes(job_file(snakemake.params.brake_dir), str(run_started())))
log.info("\n%s", report)
write_parquet(manifest, snakemake.output.manifest, schemas.VIDEOS)
write_text(snakemake.output.report, report)
