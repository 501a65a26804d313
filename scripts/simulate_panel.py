"""Rule simulate_panel: the SIMULATED annotator panel's MTurk batch results for the offline demo."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import polars as pl

from squidflow.contracts import io, schemas
from squidflow.demo.panel import PanelConfig, simulate_panel

hits = {v: pl.read_csv(snakemake.input[f"hits_{v}"], infer_schema=False) for v in ("A", "B")}
truth = io.read_parquet(snakemake.input.truth, schemas.TRUTH)
batch, repeat, info = simulate_panel(
    hits, truth, PanelConfig.from_config(snakemake.params.panel, snakemake.params.assignments_per_hit)
)
io.write_csv(batch, snakemake.output.batch)
io.write_csv(repeat, snakemake.output.repeat)
io.write_parquet(info["planted"], snakemake.output.planted, schemas.PLANTED_FAULTS)
