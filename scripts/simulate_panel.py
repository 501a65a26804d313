"""Rule simulate_panel: the SIMULATED annotator panel's MTurk batch results for the offline demo."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.demo.panel import run_panel

run_panel(
    {"A": snakemake.input.hits_A, "B": snakemake.input.hits_B},
    snakemake.input.truth,
    batch_csv=snakemake.output.batch,
    repeat_csv=snakemake.output.repeat,
    panel=snakemake.params.panel,
    assignments_per_hit=snakemake.params.assignments_per_hit,
)
