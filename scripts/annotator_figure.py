"""Rule annotator_figure: ratings per annotator, leniency against carelessness, excluded annotators marked."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.judgments.figures import annotator_figure

judgments = io.read_parquet(snakemake.input.judgments, schemas.JUDGMENTS)
report = io.read_parquet(snakemake.input.report, schemas.ANNOTATOR_REPORT)
stats = annotator_figure(judgments, report, snakemake.output[0], note=snakemake.params.note)
log.info("annotators (leniency, carelessness):\n%s", stats)
