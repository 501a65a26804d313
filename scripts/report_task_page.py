"""Rule report_task_page: an annotation task page with its images inlined, so it opens inside the report."""

from squidflow.logs import setup

log = setup(snakemake)

from pathlib import Path

from squidflow import io
from squidflow.paths import job_file
from squidflow.report.pages import self_contained

source = Path(snakemake.input.page)
page, missing, refused = self_contained(source.read_text(encoding="utf-8"), source.parent, root=job_file("results"))
io.write_text(snakemake.output[0], page)
for src in missing:
    log.warning("%s: image %s not found; left as a link", source, src)
for src in refused:
    log.warning("%s: image %r is outside results/; not inlined (a tile says so)", source, src[:200])
