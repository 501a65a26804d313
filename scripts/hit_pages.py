"""Rule hit_pages: the MTurk task page (filled in by MTurk from a HITs CSV) and a preview of round 1's first HIT."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io
from squidflow.judgments.annotation import task_pages

hits = io.read_csv_strings(snakemake.input.hits_A, what="variant A HITs")
template, preview = task_pages(hits)
io.write_text(snakemake.output.template, template)
io.write_text(snakemake.output.preview, preview)
