"""Rule keyword_hits: the keyword task (variant K) as an MTurk batch input CSV, its task page and a preview."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.judgments.keywords import keyword_tasks

p = snakemake.params
frames = io.read_parquet(snakemake.input.frames, schemas.FRAMES)
hits, template, preview = keyword_tasks(
    frames,
    images_per_hit=p.images_per_hit,
    image_base_url=p.image_base_url,
    seed=p.seed,
    keywords_per_image=p.keywords_per_image,
    max_length=p.max_length,
)
io.write_csv(hits, snakemake.output.hits)
io.write_text(snakemake.output.template, template)
io.write_text(snakemake.output.preview, preview)
log.info(
    "variant K: %d HITs of %d images, %d keyword boxes each -> %s",
    hits.height,
    p.images_per_hit,
    p.keywords_per_image,
    snakemake.output.hits,
)
