"""Rule annotation_hits: the HITs of variants A and B as MTurk batch input CSVs, and the task page."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.judgments.annotation import build_tasks

build_tasks(
    snakemake.input.frames,
    hits_csv={"A": snakemake.output.hits_A, "B": snakemake.output.hits_B},
    template_html=snakemake.output.template,
    preview_html=snakemake.output.preview,
    annotation=snakemake.params.annotation,
    events_config=snakemake.params.events,
)
