"""Rule training_sets: the training and evaluation images of one experiment, with labels and human judgments."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import json

from squidflow.contracts import io, schemas
from squidflow.training.sets import experiment_sets_with_summary

inputs = snakemake.input
sets, summary = experiment_sets_with_summary(
    snakemake.wildcards.experiment,
    io.read_parquet(inputs.sd, schemas.TRAINING_IMAGES),
    io.read_parquet(inputs.se, schemas.TRAINING_IMAGES),
    io.read_parquet(inputs.scores, schemas.IMAGE_SCORES),
    io.read_parquet(inputs.judgments, schemas.JUDGMENTS),
    io.read_parquet(inputs.report, schemas.ANNOTATOR_REPORT),
    snakemake.params.training,
    snakemake.params.events,
    authors=io.read_parquet(inputs.authors, schemas.AUTHORS_SETS) if "authors" in inputs.keys() else None,
)
io.write_parquet(sets, snakemake.output.sets, schemas.TRAINING_SETS)
io.write_text(snakemake.output.summary, json.dumps(summary, indent=2) + "\n")
for use, dataset, event, n in sets.group_by("use", "dataset", "event").len().sort("use", "dataset", "event").rows():
    log.info("%s %s %s: %d images", use, dataset, event, n)
for note in summary["notes"]:
    log.warning("%s", note)
for leak in summary["leaks"]:
    log.warning("LEAK in the authors' sets (training.sets: clean avoids it): %s", leak["sentence"])
