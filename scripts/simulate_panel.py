"""Rule simulate_panel: the SIMULATED annotator panel's MTurk batch results for the offline demo."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import polars as pl

from squidflow.contracts import io, schemas
from squidflow.demo.panel import PanelConfig, planted_without_videos, simulate_panel, without_videos
from squidflow.judgments.ingest import taken_down_videos

hits = {v: pl.read_csv(snakemake.input[f"hits_{v}"], infer_schema=False) for v in ("A", "B")}
truth = io.read_parquet(snakemake.input.truth, schemas.TRUTH)
batch, repeat, info = simulate_panel(
    hits, truth, PanelConfig.from_config(snakemake.params.panel, snakemake.params.assignments_per_hit)
)
removed = taken_down_videos(snakemake.input.get("takedown"))
io.write_csv(without_videos(batch, removed), snakemake.output.batch)
io.write_csv(without_videos(repeat, removed), snakemake.output.repeat)
io.write_parquet(planted_without_videos(info["planted"], removed), snakemake.output.planted, schemas.PLANTED_FAULTS)
