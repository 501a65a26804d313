"""Rule comparison_embed: the plausibility scorer's region and inference vectors for every corpus instance."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import torch

from squidflow.comparison.plausibility import score_corpus
from squidflow.contracts import io, schemas
from squidflow.encoders.text_embed import TableEncoder
from squidflow.runtime.gpu import slot_for_job

torch.set_num_threads(snakemake.threads)
corpus = io.read_parquet(snakemake.input.corpus, schemas.COMPARISON_CORPUS)
encode = TableEncoder(io.read_parquet(snakemake.input.sbert, schemas.COMPARISON_SBERT))
features = io.read_parquet(snakemake.input.features, schemas.FEATURES) if "features" in snakemake.input.keys() else None
with slot_for_job(snakemake) as slot:
    emb = score_corpus(
        corpus,
        snakemake.params.scorer,
        encode=encode,
        features=features,
        probe=snakemake.params.probe,
        clip=snakemake.params.clip,
        device=str(slot.torch_device),
    )
io.write_parquet(emb.to_frame(), snakemake.output[0], schemas.COMPARISON_EMBEDDINGS)
