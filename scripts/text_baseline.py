"""Rule text_baseline: the text-only event predictions of one method (tfidf | sbert), in the predictions format."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import polars as pl

from squidflow.contracts import io, schemas
from squidflow.text.baseline import text_baseline
from squidflow.text.preprocess import Preprocessing

method, p = snakemake.wildcards.text_method, snakemake.params
if method == "sbert":
    import torch

    torch.set_num_threads(snakemake.threads)  # the cores Snakemake gave this job, no more

cooc = io.read_parquet(snakemake.input.cooccurring, schemas.COOCCURRING)
videos = io.read_parquet(snakemake.input.videos, schemas.VIDEOS)
subs = io.read_parquet(snakemake.input.subtitles, schemas.SUBTITLES)
# the labels are config `events` (or, when it is empty, the events of frames.parquet)
events = (
    sorted(p.events) if p.events else sorted(io.read_parquet(snakemake.input.frames, schemas.FRAMES)["event"].unique())
)
preds = text_baseline(
    cooc,
    videos,
    subs,
    method,
    events,
    Preprocessing.from_config(p.setting),
    events_config=p.events,
    default_language=p.default_language,
    seed=p.seed,
)
top = preds.filter(pl.col("rank") == 1)
log.info(
    "text baseline %s: %d frames, %d labels; top-1 label counts %s",
    method,
    top.height,
    len(events),
    dict(top.group_by("label").len().iter_rows()),
)
io.write_parquet(preds, snakemake.output.predictions, schemas.PREDICTIONS)
