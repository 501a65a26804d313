"""Rule table1_figure: Table 1 as a plot, accuracy per certainty bin with the spread over seeds."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.training.figures import table1_plot
from squidflow.training.tables import read_run_metrics

title = "Table 1 (SQUID-E §5.1): accuracy by certainty bin of the mean human judgment"
if snakemake.params.choices.get("judgments_source") == "simulated":
    title += " — SIMULATED judgments, synthetic videos (demo)"
series = table1_plot(read_run_metrics(snakemake.input), list(snakemake.params.order), snakemake.output[0], title)
log.info("plotted %d models", series["method"].n_unique())
