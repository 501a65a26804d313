"""Rule crowd_comparison: the comparison sets' ratings under crowd-kit's models -> the oracle per aggregation."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.comparison.metrics_sherlock.report import read_comparison_ratings
from squidflow.comparison.rating_models import comparison_oracles, crowd_comparison_markdown
from squidflow.contracts import io

crowd = snakemake.params.crowd
table = comparison_oracles(
    read_comparison_ratings(snakemake.input.ratings),
    n_iter=crowd["n_iter"],
    seed=crowd["seed"],
    mace_restarts=crowd["mace_restarts"],
)
io.write_csv(table, snakemake.output.csv, float_precision=4)
io.write_text(snakemake.output.md, crowd_comparison_markdown(table))
