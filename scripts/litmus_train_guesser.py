"""Rule litmus_train_guesser: one seed of a first-turn guesser (STL-CE or MTL-KL) and its test probabilities."""

from squidflow.logs import setup

log = setup(snakemake)

import torch

from squidflow import io, schemas
from squidflow.config import from_section
from squidflow.gpu import slot_for_job
from squidflow.litmus.config import GuesserConfig
from squidflow.litmus.guessers import train_guesser

torch.set_num_threads(snakemake.threads)
games = io.read_parquet(snakemake.input.games, schemas.LITMUS_GAMES)
soft_labels = io.read_parquet(snakemake.input.soft_labels, schemas.LITMUS_SOFT_LABELS)
with slot_for_job(snakemake) as slot:
    probabilities, lines = train_guesser(
        games, soft_labels, method=snakemake.wildcards.method, seed=int(snakemake.wildcards.seed),
        cfg=from_section(GuesserConfig, snakemake.params.guesser, strict=True),
        train_split=snakemake.params.train_split, eval_split=snakemake.params.eval_split, device=slot.torch_device,
    )
io.write_parquet(probabilities, snakemake.output.probabilities, schemas.LITMUS_PROBABILITIES)
io.write_text(snakemake.output.train_log, "\n".join(lines) + "\n")
log.info("%s", lines[-1])
