"""Rule next_round: the images whose next rating shrinks the uncertainty most, as round <k>'s HITs (MTurk batch CSVs),
written once with their issued record (squidflow.judgments.issued)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import polars as pl

from squidflow.contracts import io, schemas
from squidflow.judgments.issued import record
from squidflow.judgments.next_round import choose_next_round, round_hits
from squidflow.judgments.triage import event_probabilities

p, out = snakemake.params, snakemake.output
judgments = io.read_parquet(snakemake.input.judgments, schemas.JUDGMENTS)
report = io.read_parquet(snakemake.input.exclusions, schemas.ANNOTATOR_REPORT)
kept = judgments.filter(~pl.col("annotator").is_in(report.filter(pl.col("excluded"))["annotator"].to_list()))
images = io.read_parquet(snakemake.input.images, schemas.IMAGE_TRIAGE)
hits = {v: pl.read_csv(snakemake.input[f"hits_{v}"], infer_schema=False) for v in ("A", "B")}
probability = None
if snakemake.input.get("predictions"):
    probability = event_probabilities(
        io.read_parquet(snakemake.input.predictions, schemas.PREDICTIONS), kept, p.events, p.events_config
    )
chosen = choose_next_round(
    images, kept, budget=p.next_round["budget"], strategy=p.next_round["strategy"], probability=probability
)
tasks = round_hits(hits, chosen, kept, p.annotation["images_per_hit"])
log.info(
    "round %d (%s): %d images and prompts; HITs %s",
    p.round,
    p.next_round["strategy"],
    len(chosen),
    {v: len(h) for v, h in tasks.items()},
)
for v in ("A", "B"):
    io.write_csv(tasks[v], out[f"hits_{v}"])
io.write_csv(chosen, out.chosen, float_precision=4)
io.write_text(out.record, record(p.annotation, p.round, {"A": out.hits_A, "B": out.hits_B}))
