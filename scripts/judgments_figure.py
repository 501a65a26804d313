"""Rule judgments_figure: histograms of per-image mean and standard deviation for variants A and B (Figure 3)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.judgments.figures import fig3_judgments

scores = io.read_parquet(snakemake.input.scores, schemas.IMAGE_SCORES)
fig3_judgments(scores, snakemake.output.png, title=snakemake.params.title)
