"""Rule train: the script of the train rules: each run's predictions, metrics and training log, in its own run folder
and log — every seed of one method and training set (rules train_classification and train_calibration), or every run
of one experiment (rules train_experiment_classification and train_experiment_calibration).

The runs of a job share the process (torch imported once), the caches and the GPU slot, nothing else: train_run
seeds every generator afresh per run, so a run's files are the same bytes as from a job of its own."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import json
import re
import time

import torch

from squidflow.contracts import io, schemas
from squidflow.runtime.gpu import log_slot, slot_for_job
from squidflow.runtime.logs import log_to
from squidflow.training.cache import open_cache, open_frame_cache
from squidflow.training.config import TrainConfig
from squidflow.training.runs import train_run


def as_list(files) -> list[str]:
    """A named output or log: one path for a one-run job, a list for a job of several runs."""
    return [files] if isinstance(files, str) else list(files)


torch.set_num_threads(snakemake.threads)
w = snakemake.wildcards
out = snakemake.output
predictions_files, metrics_files, train_logs = (as_list(out.predictions), as_list(out.metrics), as_list(out.train_log))
logs = list(snakemake.log)
# the runs from their folders (…/{train_set}/{method}/seed<k>/), not from params: the job's runs are its outputs
runs = [
    (t, m, int(s))
    for t, m, s in (re.search(r"/([^/]+)/([^/]+)/seed(\d+)/[^/]+$", path).groups() for path in predictions_files)
]
sets = io.read_parquet(snakemake.input.sets, schemas.TRAINING_SETS)
caches = {"SD": open_cache(snakemake.input.sd), "SE": open_cache(snakemake.input.se)}
for pool in ("SD", "SE"):  # GA/AU on whole frames: their training pool's whole-frame cache
    if f"frames_{pool}" in snakemake.input.keys():
        index = io.read_parquet(snakemake.input[f"frames_index_{pool}"], schemas.TRAINING_FRAMES)
        caches[f"{pool}_frames"] = open_frame_cache(snakemake.input[f"frames_{pool}"], index)
cfg = TrainConfig.from_config(snakemake.params.training)
with slot_for_job(snakemake) as slot:
    for k, (train_set, method, seed) in enumerate(runs):  # one after the other on the job's device
        with log_to(logs[k]):
            if k:  # the slot line that squidflow.runtime.gpu wrote to the first run's log, in this run's too
                log_slot(slot, k + 1, len(runs))
            start, cpu = time.perf_counter(), time.process_time()
            predictions, metrics, lines = train_run(
                sets,
                caches,
                experiment=w.experiment,
                train_set=train_set,
                method=method,
                seed=seed,
                cfg=cfg,
                device=slot.torch_device,
            )
            io.write_parquet(predictions, predictions_files[k], schemas.RUN_PREDICTIONS)
            io.write_text(metrics_files[k], json.dumps(metrics, indent=2, allow_nan=True) + "\n")
            io.write_text(train_logs[k], "\n".join(lines) + "\n")
            log.info(
                "run %d of %d (%s/%s/seed%d): %.1f s, %.1f CPU s",
                k + 1,
                len(runs),
                train_set,
                method,
                seed,
                time.perf_counter() - start,
                time.process_time() - cpu,
            )
