"""Rule comparison_metrics: retrieval, localization (with box proposals also auto-box) and, with human ratings,
comparison of the scorer, as the Sherlock leaderboard computes them."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import json

from squidflow.comparison.metrics_sherlock.report import evaluate, read_comparison_ratings
from squidflow.comparison.plausibility import DualEmbeddings
from squidflow.contracts import io, schemas

corpus = io.read_parquet(snakemake.input.corpus, schemas.COMPARISON_CORPUS)
emb = DualEmbeddings.from_frame(io.read_parquet(snakemake.input.embeddings, schemas.COMPARISON_EMBEDDINGS))
ratings = read_comparison_ratings(snakemake.input.ratings) if "ratings" in snakemake.input.keys() else None
proposals = (
    io.read_parquet(snakemake.input.proposals, schemas.COMPARISON_PROPOSALS)
    if "proposals" in snakemake.input.keys()
    else None
)
metrics = evaluate(corpus, emb, ratings, proposals)
log.info("metrics: %s", metrics)
io.write_text(snakemake.output[0], json.dumps(metrics, indent=2) + "\n")
