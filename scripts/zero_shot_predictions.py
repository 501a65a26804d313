"""Rule zero_shot_predictions: CLIP scores every frame against one prompt per label of the vocabulary."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import torch

from squidflow.contracts import io, schemas
from squidflow.evaluation.labels import read_vocabulary
from squidflow.evaluation.zeroshot import zero_shot_predictions
from squidflow.fetch import fetch
from squidflow.runtime.gpu import slot_for_job

torch.set_num_threads(snakemake.threads)
p = snakemake.params
frames = io.read_parquet(snakemake.input.frames, schemas.FRAMES)
labels = read_vocabulary(fetch(p.vocabulary, p.cache_dir))
with slot_for_job(snakemake) as slot:
    predictions = zero_shot_predictions(
        frames,
        labels,
        model_name=p.zero_shot["model"],
        pretrained=p.zero_shot["pretrained"],
        prompt=p.zero_shot["prompt"],
        cache_dir=p.zero_shot["cache_dir"],
        batch_size=p.zero_shot["batch_size"],
        ranks=p.zero_shot["ranks"],
        device=str(slot.torch_device),
    )
io.write_parquet(predictions, snakemake.output[0], schemas.PREDICTIONS)
