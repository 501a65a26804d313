"""Rule next_round: the next round's plan (ratings per soft label towards the target) and its round-2 HITs (MTurk batch
CSVs), with the plan's table and the projected ratings-to-target figure."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import polars as pl

from squidflow.contracts import io, schemas
from squidflow.judgments.allocation import NextRoundConfig, plan_next_round, project
from squidflow.judgments.next_round import by_activelab, round_hits
from squidflow.judgments.plan_report import plan_markdown, projection_figure, projection_lines
from squidflow.judgments.triage import event_probabilities
from squidflow.statistics.intervals import IntervalConfig

p, i, out = snakemake.params, snakemake.input, snakemake.output
cfg = NextRoundConfig.from_config(p.next_round)
intervals = IntervalConfig.from_config(p.intervals)
judgments = io.read_parquet(i.judgments, schemas.JUDGMENTS)
report = io.read_parquet(i.exclusions, schemas.ANNOTATOR_REPORT)
excluded = report.filter(pl.col("excluded"))["annotator"].to_list()
hits = {v: pl.read_csv(i[f"hits_{v}"], infer_schema=False) for v in ("A", "B")}
activelab = None
if cfg.strategy == "activelab" and i.get("predictions"):
    probability = event_probabilities(
        io.read_parquet(i.predictions, schemas.PREDICTIONS), judgments, p.events, p.events_config
    )
    kept = judgments.filter(~pl.col("annotator").is_in(excluded))
    activelab = by_activelab(kept, probability, budget=kept.height)
plan = plan_next_round(judgments, excluded, cfg, intervals, step=p.assignments_per_hit, activelab=activelab)
projection = project(plan, cfg, intervals, step=p.assignments_per_hit)
round2 = round_hits(hits, plan, p.images_per_hit, p.assignments_per_hit)
log.info("next round (%s): %s; HITs %s", cfg.strategy, " ".join(projection_lines(projection, cfg)),
         {v: len(h) for v, h in round2.items()})  # fmt: skip
for v in ("A", "B"):
    io.write_csv(round2[v], out[f"hits_{v}"])
io.write_csv(plan.filter(pl.col("ratings_planned") > 0), out.chosen, float_precision=4)
io.write_parquet(plan, out.table, schemas.NEXT_ROUND_PLAN)
io.write_csv(plan, out.plan_csv, float_precision=4)
io.write_text(out.plan_md, plan_markdown(plan, projection, cfg, simulated=p.source == "simulated"))
projection_figure(projection, cfg, out.figure, note=p.note)
