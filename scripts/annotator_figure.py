"""Rule annotator_figure: ratings per annotator, leniency against carelessness, excluded annotators marked."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.judgments.figures import annotator_figure_from_files

stats = annotator_figure_from_files(snakemake.input.judgments, snakemake.input.report, snakemake.output[0],
                                    note=snakemake.params.note)
log.info("annotators (leniency, carelessness):\n%s", stats)
