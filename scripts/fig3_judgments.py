"""Rule fig3_judgments: histograms of per-image mean and standard deviation for variants A and B (Figure 3)."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.judgments.figures import fig3_from_file

fig3_from_file(snakemake.input.scores, snakemake.output.png, snakemake.params.title)
