"""Rule keyword_hits: the keyword task (variant K) as an MTurk batch input CSV, its task page and a preview."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.judgments.keywords import build_keyword_tasks

build_keyword_tasks(
    snakemake.input.frames,
    hits_csv=snakemake.output.hits,
    template_html=snakemake.output.template,
    preview_html=snakemake.output.preview,
    images_per_hit=snakemake.params.images_per_hit,
    image_base_url=snakemake.params.image_base_url,
    seed=snakemake.params.seed,
    keywords_per_image=snakemake.params.keywords_per_image,
    max_length=snakemake.params.max_length,
)
