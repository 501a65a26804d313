"""Rule training_sets: the training and evaluation images of one experiment, with labels and human judgments."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow import io, schemas  # noqa: E402
from squidflow.training.pools import experiment_sets  # noqa: E402

sets = experiment_sets(
    snakemake.wildcards.experiment,
    io.read_parquet(snakemake.input.sd, schemas.TRAINING_IMAGES),
    io.read_parquet(snakemake.input.se, schemas.TRAINING_IMAGES),
    io.read_parquet(snakemake.input.scores, schemas.IMAGE_SCORES),
    snakemake.params.training,
    snakemake.params.events,
)
io.write_parquet(sets, snakemake.output[0], schemas.TRAINING_SETS)
for use, dataset, event, n in sets.group_by("use", "dataset", "event").len().sort("use", "dataset", "event").rows():
    log.info("%s %s %s: %d images", use, dataset, event, n)
