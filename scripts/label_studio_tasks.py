"""Rule label_studio_tasks: one task's HITs -> its Label Studio labeling config, import JSON and instructions."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from pathlib import Path

from squidflow.judgments.label_studio.tasks import build_label_studio_tasks

task = snakemake.wildcards.ls_task
build_label_studio_tasks(
    Path(snakemake.output.tasks).parent.parent,
    frames_path=snakemake.input.get("frames"),
    hits={task: snakemake.input.hits},
    images=snakemake.params.images,
    images_per_hit=snakemake.params.images_per_hit,
    keywords_per_image=snakemake.params.keywords_per_image,
    project_prefix=snakemake.params.project_prefix,
)
