"""Rule simulate_keywords: the SIMULATED panel's answers to the keyword task, for the offline demo."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import polars as pl

from squidflow.contracts import io, schemas
from squidflow.demo.keyword_panel import KeywordPanelConfig, simulate_keywords

hits = pl.read_csv(snakemake.input.hits, infer_schema=False)
truth = io.read_parquet(snakemake.input.truth, schemas.TRUTH)
batch = simulate_keywords(hits, truth, KeywordPanelConfig(**snakemake.params.panel))
io.write_csv(batch, snakemake.output.batch)
log.info("SIMULATED keyword panel: %d assignments", batch.height)
