"""Rule simulate_next_round: the SIMULATED panel's answers to the round-2 HITs (the demo's second round)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import polars as pl

from squidflow.contracts import io, schemas
from squidflow.demo.panel import PanelConfig, simulate_panel, without_videos
from squidflow.judgments.ingest import taken_down_videos

hits = {v: pl.read_csv(snakemake.input[f"hits_{v}"], infer_schema=False) for v in ("A", "B")}
hits = {v: h for v, h in hits.items() if len(h)}
truth = io.read_parquet(snakemake.input.truth, schemas.TRUTH)
batch, _, _ = simulate_panel(
    hits, truth, PanelConfig.from_config(snakemake.params.panel, snakemake.params.assignments_per_hit)
)
io.write_csv(without_videos(batch, taken_down_videos(snakemake.input.get("takedown"))), snakemake.output.batch)
