"""Rule publish_dataset: results/publish/<name>/ — Parquet configs, dataset card, croissant.json (checked by
mlcroissant), LeWiDi JSON."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import json
from pathlib import Path

import polars as pl

from squidflow.contracts import io, schemas
from squidflow.publish.dataset import RunSettings, RunTables, publish
from squidflow.videos.takedown import read_log

i, p = snakemake.input, snakemake.params


def optional(name, schema):
    return io.read_parquet(i[name], schema) if name in i.keys() else None


def text(name):
    return Path(i[name]).read_text(encoding="utf-8") if name in i.keys() else ""


run = RunTables(
    judgments=io.read_parquet(i.judgments, schemas.JUDGMENTS),
    annotator_report=io.read_parquet(i.report, schemas.ANNOTATOR_REPORT),
    scores=io.read_parquet(i.scores, schemas.IMAGE_SCORES),
    table7=pl.read_csv(i.table7),
    frames=optional("frames", schemas.FRAMES),
    videos=optional("videos", schemas.VIDEOS),
    comparison_sets=optional("comparison_sets", schemas.COMPARISON_SETS),
    keywords=optional("keywords", schemas.KEYWORD_JUDGMENTS),
    dropped_md=text("dropped"),
    task_pages={k: text(f"{k}_page") for k in ("rating", "keyword") if f"{k}_page" in i.keys()},
    takedowns=read_log(text("takedown_log")) if "takedown_log" in i.keys() else None,
    taken_down=json.loads(text("ingest_counts") or "{}").get("taken_down", {}),
    methods=[json.loads(Path(m).read_text(encoding="utf-8")) for m in i.get("methods", [])],
)
settings = RunSettings(
    publish=p.publish,
    demo=p.demo,
    judgment_source=p.judgment_source,
    platform=p.platform,
    sources=list(p.sources),
    intervals=p.intervals,
    frames=p.frames,
)
facts = publish(snakemake.output[0], run, settings)
log.info(
    "published %s: %s (images: %s)",
    snakemake.output[0],
    ", ".join(f"{c} {n:,} rows" for c, n in facts.counts.items()),
    facts.image_mode,
)
