"""Rule accuracy_by_certainty_figure: Table 1 as a plot, accuracy per certainty bin with the spread over seeds."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import json
from pathlib import Path

from squidflow.training.figures import table1_plot
from squidflow.training.tables import runs_table

title = "Table 1 (SQUID-E §5.1): accuracy by certainty bin of the mean human judgment"
if snakemake.params.choices.get("judgments_source") == "simulated":
    title += " — SIMULATED judgments, synthetic videos (demo)"
metrics = {path: json.loads(Path(path).read_text(encoding="utf-8")) for path in snakemake.input}
series = table1_plot(
    runs_table(metrics),
    list(snakemake.params.order),
    snakemake.output[0],
    title,
    backbone=snakemake.params.choices.get("backbone"),
)
log.info("plotted %d models", series["method"].n_unique())
