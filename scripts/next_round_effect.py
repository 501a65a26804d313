"""Rule next_round_effect: the re-rated images' intervals before (round 1) and after the next round."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.judgments.ingest import ingest
from squidflow.judgments.next_round import change_markdown, interval_change
from squidflow.judgments.triage import TriageConfig
from squidflow.statistics.intervals import IntervalConfig

p, out = snakemake.params, snakemake.output
judgments = io.read_parquet(snakemake.input.judgments, schemas.JUDGMENTS)
frames = io.read_parquet(snakemake.input.frames, schemas.FRAMES)
next_ratings, _ = ingest(
    source="simulated", batches=[(snakemake.input.batch, 2)], known_images=set(frames["image_id"].to_list())
)
change = interval_change(
    judgments,
    next_ratings,
    io.read_parquet(snakemake.input.chosen, schemas.IMAGE_TRIAGE),
    io.read_parquet(snakemake.input.triage, schemas.RATER_TRIAGE),
    TriageConfig.from_config(p.triage),
    IntervalConfig.from_config(p.intervals),
)
log.info(
    "next round: median interval width %.1f -> %.1f over %d images",
    change["interval_width_before"].median(),
    change["interval_width_after"].median(),
    len(change),
)
io.write_csv(change, out.csv, float_precision=4)
io.write_text(out.md, change_markdown(change, strategy=p.strategy, source="simulated"))
