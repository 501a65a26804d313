"""Rule next_round_plan: the latest next round's plan against the target (results/tables/next_round_plan.{csv,md})
and the projected ratings-to-target figure, without the images a takedown removed."""

from squidflow.runtime.logs import setup

log = setup(snakemake)


from squidflow.contracts import io, schemas
from squidflow.judgments.allocation import NextRoundConfig, project
from squidflow.judgments.next_round import in_dataset
from squidflow.judgments.plan_report import plan_markdown, projection_figure, projection_lines
from squidflow.statistics.intervals import IntervalConfig

p, i, out = snakemake.params, snakemake.input, snakemake.output
cfg = NextRoundConfig.from_config(p.next_round)
plan = in_dataset(io.read_parquet(i.plan, schemas.NEXT_ROUND_PLAN), io.read_parquet(i.frames, schemas.FRAMES))
projection = project(plan, cfg, IntervalConfig.from_config(p.intervals), step=p.assignments_per_hit)
log.info("round %d's plan (%s): %s", p.round, cfg.strategy, " ".join(projection_lines(projection, cfg)))
io.write_csv(plan, out.plan_csv, float_precision=4)
io.write_text(out.plan_md, plan_markdown(plan, projection, cfg, simulated=p.source == "simulated"))
projection_figure(projection, cfg, out.figure, note=p.note)
