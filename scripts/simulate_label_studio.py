"""Rule simulate_label_studio: the SIMULATED panel's MTurk batch results -> Label Studio JSON exports (demo)."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.judgments.label_studio import simulated_exports

simulated_exports(
    {1: snakemake.input.batch, 2: snakemake.input.repeat},
    {k: snakemake.output[k] for k in ("A", "B", "A_repeat", "B_repeat")},
    images_per_hit=snakemake.params.images_per_hit,
)
