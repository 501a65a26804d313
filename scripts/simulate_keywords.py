"""Rule simulate_keywords: the SIMULATED panel's answers to the keyword task, for the offline demo."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.demo.keyword_panel import run_keyword_panel

run_keyword_panel(snakemake.input.hits, snakemake.input.truth, batch_csv=snakemake.output.batch,
                  panel=snakemake.params.panel)
