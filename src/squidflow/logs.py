"""Logging for rule scripts: everything a script says goes to the rule's `log:` file, so a failed job explains itself."""

from __future__ import annotations

import logging
import sys
from pathlib import Path


def setup(snakemake_obj=None, *, level: int = logging.INFO) -> logging.Logger:
    """Send logging and stderr (tracebacks, tqdm) of a rule script to its log file; return the `squidflow` logger."""
    log_files = list(getattr(snakemake_obj, "log", []) or []) if snakemake_obj is not None else []
    handlers: list[logging.Handler] = []
    if log_files:
        path = Path(log_files[0])
        path.parent.mkdir(parents=True, exist_ok=True)
        stream = open(path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - lives as long as the job
        sys.stderr = stream
        handlers.append(logging.StreamHandler(stream))
    else:
        handlers.append(logging.StreamHandler(sys.stderr))
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", handlers=handlers, force=True)
    return logging.getLogger("squidflow")
