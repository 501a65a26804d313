"""Rule make_training_cache: list a pool's images (SE frames or SD standard images) and decode them once."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.training.cache import build_cache
from squidflow.training.pools import pool_images

inputs = {
    k: io.read_parquet(v, getattr(schemas, k.upper()))
    for k, v in snakemake.input.items()
    if k in ("frames", "truth", "videos")
}
images = pool_images(snakemake.wildcards.pool, inputs, snakemake.params.standard_data, snakemake.params.training)
index = build_cache(
    images, snakemake.output.cache, snakemake.params.training["resize"], snakemake.params.training["crop"]
)
io.write_parquet(index, snakemake.output.index, schemas.TRAINING_IMAGES)
log.info(
    "%s pool: %d images (%s)", snakemake.wildcards.pool, len(index), dict(index.group_by("split").len().iter_rows())
)
