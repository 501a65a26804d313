"""Rule ingest_keywords: the keyword task's batch results read back into results/judgments/keywords.parquet."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.judgments.keywords import keyword_judgments

p = snakemake.params
frames = snakemake.input.get("frames")
known = set(io.read_parquet(frames, schemas.FRAMES)["image_id"].to_list()) if frames else None
keywords, report = keyword_judgments(
    p.batches, known_images=known, on_error=p.on_error, max_length=p.max_length, source=p.source
)
io.write_parquet(keywords, snakemake.output.keywords, schemas.KEYWORD_JUDGMENTS)
io.write_text(snakemake.output.report, report)
log.info(
    "keywords: %d from %d annotators for %d images",
    keywords.height,
    keywords["annotator"].n_unique(),
    keywords.select("video_id", "frame_index").n_unique(),
)
