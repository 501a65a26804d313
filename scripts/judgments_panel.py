"""Rule simulate_panel: the SIMULATED annotator panel's MTurk batch results for the offline demo."""

from squidflow.logs import setup
from squidflow.panel import run_panel

log = setup(snakemake)
run_panel(
    {"A": snakemake.input.hits_A, "B": snakemake.input.hits_B},
    snakemake.input.truth,
    batch_csv=snakemake.output.batch,
    repeat_csv=snakemake.output.repeat,
    panel=snakemake.config["judgments"]["panel"],
    assignments_per_hit=snakemake.config["annotation"]["assignments_per_hit"],
)
