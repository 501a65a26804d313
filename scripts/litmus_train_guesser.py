"""Rule litmus_train_guesser: every first-turn guesser run (STL-CE and/or MTL-KL, each seed) and its test
probabilities, one after the other in this one process (torch imported once), each run in its own folder and log.

train_guesser seeds its generators afresh per run, so a run's files are the same bytes as from a process of its own."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import re

import torch

from squidflow.config.validation import from_section
from squidflow.contracts import io, schemas
from squidflow.litmus.config import GuesserConfig
from squidflow.litmus.guessers import train_guesser
from squidflow.runtime.gpu import log_slot, slot_for_job
from squidflow.runtime.logs import log_to

torch.set_num_threads(snakemake.threads)
out = snakemake.output
# the runs from their folders (…/{method}/seed<k>/), in the order of the outputs and logs
runs = [(m, int(s)) for m, s in (re.search(r"/([^/]+)/seed(\d+)/[^/]+$", p).groups() for p in out.probabilities)]
games = io.read_parquet(snakemake.input.games, schemas.LITMUS_GAMES)
soft_labels = io.read_parquet(snakemake.input.soft_labels, schemas.LITMUS_SOFT_LABELS)
cfg = from_section(GuesserConfig, snakemake.params.guesser, strict=True)
with slot_for_job(snakemake) as slot:
    for k, (method, seed) in enumerate(runs):
        with log_to(snakemake.log[k]):
            if k:  # the slot line that squidflow.runtime.gpu wrote to the first run's log, in this run's too
                log_slot(slot, k + 1, len(runs))
            probabilities, lines = train_guesser(
                games,
                soft_labels,
                method=method,
                seed=seed,
                cfg=cfg,
                train_split=snakemake.params.train_split,
                eval_split=snakemake.params.eval_split,
                device=slot.torch_device,
            )
            io.write_parquet(probabilities, out.probabilities[k], schemas.LITMUS_PROBABILITIES)
            io.write_text(out.train_log[k], "\n".join(lines) + "\n")
            log.info("run %d of %d (%s seed %d): %s", k + 1, len(runs), method, seed, lines[-1])
