"""Rule publish_report_page: the published dataset's page in the report (its card, configs, Croissant, LeWiDi files)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io
from squidflow.report.dataset_page import dataset_page

io.write_text(snakemake.output[0], dataset_page(snakemake.input[0]))
