"""Rule demo_corpus: gather the per-video truth into truth.parquet and write the corpus' metadata catalog."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.demo.videos import DemoConfig, catalog, gather_truth

cfg = DemoConfig.from_config(snakemake.params.demo)
parts = [io.read_parquet(p, schemas.TRUTH) for p in snakemake.input.truth]
truth = io.write_parquet(gather_truth(parts, cfg), snakemake.output.truth, schemas.TRUTH)
io.write_parquet(catalog(cfg), snakemake.output.catalog, schemas.DEMO_CATALOG)
log.info("demo corpus: %d videos, %d frames", truth["video_id"].n_unique(), truth.height)
