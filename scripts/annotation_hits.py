"""Rule annotation_hits: the HITs of variants A and B as MTurk batch input CSVs, and the task page."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.judgments.annotation import annotation_tasks

annotation = snakemake.params.annotation
frames = io.read_parquet(snakemake.input.frames, schemas.FRAMES)
hits, template, preview = annotation_tasks(frames, annotation, snakemake.params.events)
for variant, csv in (("A", snakemake.output.hits_A), ("B", snakemake.output.hits_B)):
    io.write_csv(hits[variant], csv)
    log.info("variant %s: %d HITs of %d images -> %s", variant, len(hits[variant]), annotation["images_per_hit"], csv)
io.write_text(snakemake.output.template, template)
io.write_text(snakemake.output.preview, preview)
