"""Rule aggregate_judgments: per image and prompt mean, std, n, certainty bin and the alt bins (SQUID-E supplement D.3)."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.judgments.scores import aggregate_judgments

aggregate_judgments(
    snakemake.input.judgments,
    snakemake.input.report,
    snakemake.output.scores,
    snakemake.output.high_certainty,
    high_certainty=snakemake.params.high_certainty,
)
