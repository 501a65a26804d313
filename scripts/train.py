"""Rule train: one seed of one method on one training set; predictions, metrics and the training log."""

from squidflow.logs import setup

log = setup(snakemake)

import json

import torch

from squidflow import io, schemas
from squidflow.gpu import slot_for_job
from squidflow.training.cache import open_cache, open_frame_cache
from squidflow.training.config import TrainConfig
from squidflow.training.runs import train_run

torch.set_num_threads(snakemake.threads)
w = snakemake.wildcards
sets = io.read_parquet(snakemake.input.sets, schemas.TRAINING_SETS)
caches = {"SD": open_cache(snakemake.input.sd), "SE": open_cache(snakemake.input.se)}
if "frames" in snakemake.input.keys():  # GA/AU on whole frames: the training pool's whole-frame cache
    index = io.read_parquet(snakemake.input.frames_index, schemas.TRAINING_FRAMES)
    caches[f"{w.train_set}_frames"] = open_frame_cache(snakemake.input.frames, index)
with slot_for_job(snakemake) as slot:
    predictions, metrics, lines = train_run(
        sets, caches, experiment=w.experiment, train_set=w.train_set, method=w.method, seed=int(w.seed),
        cfg=TrainConfig.from_config(snakemake.params.training), device=slot.torch_device,
    )
io.write_parquet(predictions, snakemake.output.predictions, schemas.RUN_PREDICTIONS)
io.write_text(snakemake.output.metrics, json.dumps(metrics, indent=2, allow_nan=True) + "\n")
io.write_text(snakemake.output.train_log, "\n".join(lines) + "\n")
