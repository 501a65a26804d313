"""Rule aggregate_judgments: per image and prompt mean, std, n, certainty bin and the alt bins (seed 001 D.3)."""

from squidflow.aggregate import aggregate
from squidflow.logs import setup

log = setup(snakemake)
aggregate(
    snakemake.input.judgments,
    snakemake.input.report,
    snakemake.output.scores,
    snakemake.output.high_certainty,
    high_certainty=snakemake.config["judgments"]["high_certainty"],
)
