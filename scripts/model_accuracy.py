"""Rule model_accuracy: one model's predictions checked and scored per certainty bin (its rows of Tables 2 and 8)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import json

from squidflow.contracts import io, schemas
from squidflow.evaluation.models import evaluate_model

p = snakemake.params
scores = io.read_parquet(snakemake.input.scores, schemas.IMAGE_SCORES)
frames = io.read_parquet(snakemake.input.frames, schemas.FRAMES) if "frames" in snakemake.input.keys() else None
accuracy, summary = evaluate_model(
    p.model["predictions"],
    scores,
    name=p.model["name"],
    variant=p.variant,
    top_k=p.top_k,
    label_map=p.label_map,
    events_config=p.events,
    vocabulary=p.vocabulary,
    image_table=p.model["images"],
    frames=frames,
    cache_dir=p.cache_dir,
    intervals=p.intervals,
)
io.write_parquet(accuracy, snakemake.output.accuracy, schemas.MODEL_ACCURACY)
io.write_text(snakemake.output.summary, json.dumps(summary, indent=2) + "\n")
