"""Rule comparison_sbert: SBERT embeddings of every clue and inference of the corpus (cached by text hash)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import torch

from squidflow.contracts import io, schemas
from squidflow.contracts.paths import job_file
from squidflow.encoders.text_embed import embedding_table

torch.set_num_threads(snakemake.threads)
corpus = io.read_parquet(snakemake.input[0], schemas.COMPARISON_CORPUS)
table = embedding_table(corpus["clue"].to_list() + corpus["inference"].to_list(), job_file(snakemake.params.cache))
io.write_parquet(table, snakemake.output[0], schemas.COMPARISON_SBERT)
