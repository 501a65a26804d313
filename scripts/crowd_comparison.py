"""Rule crowd_comparison: the comparison sets' ratings under crowd-kit's models -> the oracle per aggregation."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.comparison.crowd import crowd_comparison

crowd_comparison(
    snakemake.input.ratings,
    table_csv=snakemake.output.csv,
    table_md=snakemake.output.md,
    n_iter=snakemake.params.crowd["n_iter"],
    mace_restarts=snakemake.params.crowd["mace_restarts"],
    seed=snakemake.params.crowd["seed"],
)
