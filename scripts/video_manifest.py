"""Checkpoint video_manifest: gather the status rows (downloads and local checks) into videos.parquet + the report."""

from squidflow.logs import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake

from squidflow import schemas  # noqa: E402
from squidflow.io import read_parquet, write_parquet, write_text  # noqa: E402
from squidflow.videos.brake import run_notes  # noqa: E402
from squidflow.videos.manifest import build_manifest, download_report, run_started  # noqa: E402

candidates = read_parquet(snakemake.input.candidates, schemas.VIDEO_CANDIDATES)  # noqa: F821
statuses = [read_parquet(p, schemas.VIDEO_STATUS) for p in snakemake.input.statuses]  # noqa: F821
manifest = build_manifest(candidates, statuses)
with open(snakemake.input.notes, encoding="utf-8") as fh:  # noqa: F821
    notes = [line.rstrip("\n") for line in fh if line.strip()]
report = download_report(manifest, notes, run_notes(snakemake.params.brake_dir, str(run_started())))  # noqa: F821
log.info("\n%s", report)
write_parquet(manifest, snakemake.output.manifest, schemas.VIDEOS)  # noqa: F821
write_text(snakemake.output.report, report)  # noqa: F821
