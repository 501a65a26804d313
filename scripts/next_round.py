"""Rule next_round: the images whose next rating shrinks the uncertainty most, as round-2 HITs (MTurk batch CSVs)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import polars as pl

from squidflow.contracts import io, schemas
from squidflow.judgments.next_round import next_round
from squidflow.judgments.triage import event_probabilities

p, out = snakemake.params, snakemake.output
judgments = io.read_parquet(snakemake.input.judgments, schemas.JUDGMENTS)
images = io.read_parquet(snakemake.input.images, schemas.IMAGE_TRIAGE)
hits = {v: pl.read_csv(snakemake.input[f"hits_{v}"], infer_schema=False) for v in ("A", "B")}
probability = None
if snakemake.input.get("predictions"):
    probability = event_probabilities(
        io.read_parquet(snakemake.input.predictions, schemas.PREDICTIONS), judgments, p.events, p.events_config
    )
chosen, round2 = next_round(
    images,
    judgments,
    hits,
    budget=p.next_round["budget"],
    strategy=p.next_round["strategy"],
    images_per_hit=p.images_per_hit,
    probability=probability,
)
log.info(
    "next round (%s): %d images and prompts; HITs %s",
    p.next_round["strategy"],
    len(chosen),
    {v: len(h) for v, h in round2.items()},
)
for v in ("A", "B"):
    io.write_csv(round2[v], out[f"hits_{v}"])
io.write_csv(chosen, out.chosen, float_precision=4)
io.write_parquet(chosen.select(list(schemas.IMAGE_TRIAGE.columns)), out.table, schemas.IMAGE_TRIAGE)
