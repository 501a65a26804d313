"""Rule hit_pages: the MTurk task page (filled in by MTurk from a HITs CSV) and a preview of round 1's first HIT."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.judgments.annotation import task_pages

hits = io.read_csv_strings(snakemake.input.hits_A, what="variant A HITs")
images = set(io.read_parquet(snakemake.input.frames, schemas.FRAMES)["image_id"].to_list())
template, preview = task_pages(hits, images)
io.write_text(snakemake.output.template, template)
io.write_text(snakemake.output.preview, preview)
