"""Rule comparison_pool: the inference pool after soft (SBERT clustering) and hard (≤ 3 verbatim) dedup."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.comparison.sets import ComparisonConfig, build_pool
from squidflow.contracts import io, schemas
from squidflow.encoders.text_embed import TableEncoder
from squidflow.runtime.gpu import slot_for_job

corpus = io.read_parquet(snakemake.input.corpus, schemas.COMPARISON_CORPUS)
sbert = TableEncoder(io.read_parquet(snakemake.input.sbert, schemas.COMPARISON_SBERT))(corpus["inference"].to_list())
with slot_for_job(snakemake) as slot:  # a GPU only when the rule asks for one (a Sherlock-scale corpus)
    pool = build_pool(
        corpus, sbert, ComparisonConfig.from_config(snakemake.params.comparison), device=slot.torch_device
    )
io.write_parquet(pool, snakemake.output[0], schemas.COMPARISON_POOL)
