"""Rule annotation_hits: round 1's HITs of variants A and B as MTurk batch input CSVs, and their issued record."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.judgments.annotation import annotation_tasks
from squidflow.judgments.issued import record

annotation, out = snakemake.params.annotation, snakemake.output
frames = io.read_parquet(snakemake.input.frames, schemas.FRAMES)
hits, _, _ = annotation_tasks(frames, annotation, snakemake.params.events)
for variant, csv in (("A", out.hits_A), ("B", out.hits_B)):
    io.write_csv(hits[variant], csv)
    log.info("variant %s: %d HITs of %d images -> %s", variant, len(hits[variant]), annotation["images_per_hit"], csv)
io.write_text(out.record, record(annotation, 1, {"A": out.hits_A, "B": out.hits_B}))
