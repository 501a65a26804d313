"""Rule comparison_sets_figure: the most promising comparison sets drawn as the annotators see them."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.comparison.figures import sets_figure
from squidflow.contracts import io, schemas

sets = io.read_parquet(snakemake.input.sets, schemas.COMPARISON_SETS)
corpus = io.read_parquet(snakemake.input.corpus, schemas.COMPARISON_CORPUS)
panels = sets_figure(
    sets,
    corpus,
    snakemake.output[0],
    n_sets=snakemake.params.n_sets,
    cache_dir=snakemake.params.cache_dir,
    note=snakemake.params.note,
)
log.info("wrote %s (%d panels)", snakemake.output[0], panels)
