"""Rule next_round_effect: the re-rated images' intervals before and after the next round (the demo's SIMULATED one,
or each next-round wave of your own judgments)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import polars as pl

from squidflow.contracts import io, schemas
from squidflow.judgments.allocation import NextRoundConfig
from squidflow.judgments.ingest import ingest
from squidflow.judgments.next_round import change_markdown, in_dataset, interval_change, waves_markdown
from squidflow.judgments.waves import narrowing, narrowing_summary
from squidflow.statistics.intervals import IntervalConfig

p, i, out = snakemake.params, snakemake.input, snakemake.output
judgments = io.read_parquet(i.judgments, schemas.JUDGMENTS)
report = io.read_parquet(i.exclusions, schemas.ANNOTATOR_REPORT)
excluded = report.filter(pl.col("excluded"))["annotator"].to_list()
intervals = IntervalConfig.from_config(p.intervals)
if "batch" in i.keys():  # the demo: its SIMULATED next round, read here, compared on the soft labels it re-rated
    frames = io.read_parquet(i.frames, schemas.FRAMES)
    next_ratings, _ = ingest(source="simulated", batches=[(i.batch, 2)], known_images=set(frames["image_id"].to_list()))
    plan = in_dataset(io.read_parquet(i.chosen, schemas.NEXT_ROUND_PLAN), frames)  # a takedown's images left out
    change = interval_change(
        judgments, next_ratings, plan, excluded, intervals, NextRoundConfig.from_config(p.next_round)
    )
    log.info(
        "next round: median interval width %.1f -> %.1f over %d soft labels, %d at the target after",
        change["interval_width_before"].median(),
        change["interval_width_after"].median(),
        len(change),
        change["reached_after"].sum(),
    )
    io.write_csv(change, out.csv, float_precision=4)
    io.write_text(out.md, change_markdown(change, strategy=p.strategy, source="simulated"))
else:  # your own next rounds: the waves judgments.parquet holds, the raters the soft labels leave out left out
    per_item = narrowing(judgments, intervals, excluded)
    summary = narrowing_summary(per_item, judgments)
    log.info("next rounds: %s", "; ".join(f"{s['wave']} {s['ratings']} ratings" for s in summary))
    io.write_csv(per_item, out.csv, float_precision=4)
    io.write_text(out.md, waves_markdown(per_item, summary, strategy=p.strategy))
