"""Rule featurize: features of one shard's extracted frames, on the GPU slot this job got (CPU without one)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import torch

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet, write_parquet
from squidflow.frames.featurize import FeaturesConfig, featurize_frames
from squidflow.runtime.gpu import slot_for_job

torch.set_num_threads(snakemake.threads)
cfg = FeaturesConfig.from_config({**snakemake.params.features, "backbone": snakemake.wildcards.backbone})
frames = read_parquet(snakemake.input.frames, schemas.EXTRACTED_FRAMES)
with slot_for_job(snakemake) as slot:
    features = featurize_frames(frames, cfg, device=slot.torch_device)
write_parquet(features, snakemake.output[0], schemas.FEATURES)
