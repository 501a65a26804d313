"""Rule next_round: round <k>'s plan (ratings per soft label towards the target, from the judgments after the latest
round, the excluded raters left out) and its HITs (MTurk batch CSVs), written once with their issued record
(squidflow.judgments.issued)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import polars as pl

from squidflow.contracts import io, schemas
from squidflow.judgments.allocation import NextRoundConfig, plan_next_round
from squidflow.judgments.issued import record
from squidflow.judgments.next_round import by_activelab, round_hits
from squidflow.judgments.triage import event_probabilities
from squidflow.statistics.intervals import IntervalConfig

p, i, out = snakemake.params, snakemake.input, snakemake.output
cfg = NextRoundConfig.from_config(p.next_round)
judgments = io.read_parquet(i.judgments, schemas.JUDGMENTS)
report = io.read_parquet(i.exclusions, schemas.ANNOTATOR_REPORT)
excluded = report.filter(pl.col("excluded"))["annotator"].to_list()
hits = {v: pl.read_csv(i[f"hits_{v}"], infer_schema=False) for v in ("A", "B")}
activelab = None
if cfg.strategy == "activelab" and i.get("predictions"):
    kept = judgments.filter(~pl.col("annotator").is_in(excluded))
    probability = event_probabilities(
        io.read_parquet(i.predictions, schemas.PREDICTIONS), kept, p.events, p.events_config
    )
    activelab = by_activelab(kept, probability, budget=kept.height)
step = p.annotation["assignments_per_hit"]
plan = plan_next_round(
    judgments, excluded, cfg, IntervalConfig.from_config(p.intervals), step=step, activelab=activelab
)
tasks = round_hits(hits, plan, p.annotation["images_per_hit"], step)
log.info(
    "round %d (%s): %d ratings planned over %d soft labels; HITs %s",
    p.round,
    cfg.strategy,
    int(plan["ratings_planned"].sum()),
    plan.filter(pl.col("ratings_planned") > 0).height,
    {v: len(h) for v, h in tasks.items()},
)
for v in ("A", "B"):
    io.write_csv(tasks[v], out[f"hits_{v}"])
io.write_csv(plan.filter(pl.col("ratings_planned") > 0), out.chosen, float_precision=4)
io.write_parquet(plan, out.plan, schemas.NEXT_ROUND_PLAN)
io.write_text(out.record, record(p.annotation, p.round, {"A": out.hits_A, "B": out.hits_B}))
