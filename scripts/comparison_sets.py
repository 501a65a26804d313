"""Rule comparison_sets: plausible, diverse hard-negative sets per query, ranked; the top N per split."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.comparison.plausibility import DualEmbeddings
from squidflow.comparison.sets import ComparisonConfig, build_sets
from squidflow.contracts import io, schemas
from squidflow.encoders.text_embed import TableEncoder

corpus = io.read_parquet(snakemake.input.corpus, schemas.COMPARISON_CORPUS)
sbert = TableEncoder(io.read_parquet(snakemake.input.sbert, schemas.COMPARISON_SBERT))(corpus["inference"].to_list())
emb = DualEmbeddings.from_frame(io.read_parquet(snakemake.input.embeddings, schemas.COMPARISON_EMBEDDINGS))
pool = io.read_parquet(snakemake.input.pool, schemas.COMPARISON_POOL)
sets = build_sets(
    corpus,
    pool,
    emb,
    sbert,
    ComparisonConfig.from_config(snakemake.params.comparison),
    on_empty=snakemake.params.on_empty,
)
io.write_parquet(sets, snakemake.output[0], schemas.COMPARISON_SETS)
