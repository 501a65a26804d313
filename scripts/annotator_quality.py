"""Rule annotator_quality: each annotator's pitfall flags (SQUID-E §3.2) and who is excluded."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.judgments.quality import QualityConfig, annotator_report, blank_images, excluded

qc = QualityConfig.from_config(snakemake.params.quality)
judgments = io.read_parquet(snakemake.input.judgments, schemas.JUDGMENTS)
frames = snakemake.input.get("frames")
blank = blank_images(io.read_parquet(frames, schemas.FRAMES), qc.blank_max_std) if frames else set()
report = annotator_report(judgments, qc, blank)
log.info(
    "%d blank images; %d of %d annotators excluded: %s",
    len(blank),
    report["excluded"].sum(),
    len(report),
    excluded(report),
)
io.write_parquet(report, snakemake.output.report, schemas.ANNOTATOR_REPORT)
