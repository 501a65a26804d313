"""Rule report_task_page: an annotation task page with its images inlined, so it opens inside the report."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.report.pages import write_self_contained

missing = write_self_contained(snakemake.input[0], snakemake.output[0])
for src in missing:
    log.warning("%s: image %s not found; left as a link", snakemake.input[0], src)
