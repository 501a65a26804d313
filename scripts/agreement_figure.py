"""Rule agreement_figure: Table 7 (inter-annotator agreement) as a chart beside the paper's values."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.judgments.figures import agreement_figure_from_file

agreement_figure_from_file(snakemake.input[0], snakemake.output[0], note=snakemake.params.note)
log.info("wrote %s", snakemake.output[0])
