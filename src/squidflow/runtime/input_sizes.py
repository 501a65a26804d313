"""The one step of Snakemake's job scheduler squidflow changes on object storage, and only on the versions it was
tested on (docs/upstream.md, change 3b, with its upstream report).

Before it picks the next jobs, Snakemake's scheduler (`JobScheduler.job_selector`) asks the size of every input of
every ready job (`update_input_sizes`: `exists()`, then `size()`), in every round: each time a job finishes, all the
jobs still waiting are asked again. On the local filesystem that is a `stat` per file. On S3 each is one to three
requests (a HEAD of the key, a listing of `<key>/` to see whether it is a folder), one after another in the main
process, and it grows with the ready jobs times the rounds: on the small DAG it was half of the run's ~33,000
requests (issue 61, `benchmarks/storage.py`). A ready job's inputs are all made and do not change while it waits,
so `patch_input_sizes` asks only the inputs whose size the scheduler does not know yet; a path it found missing is
asked again. The sizes only weigh the scheduler's choice among ready jobs: a slow answer, not a wrong one.

Outside the tested versions (`SPAN`) nothing is patched: a warning says so once, and Snakemake runs as it ships.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

from squidflow.runtime.upstream import TESTED, within_tested

DIST = "snakemake"
# the releases whose `update_input_sizes` is the one this replaces (read in 9.10.0, 9.16.0 and 9.27.1; 9.5 had none)
SPAN = ("9.10.0", TESTED[DIST][1])
WHAT = "ready jobs' input sizes asked once, not in every scheduling round; without it a request per input per round"


def patch_input_sizes(version: str | None = None, warn: Callable[[str], None] | None = None) -> bool:
    """Make Snakemake's scheduler ask the size of an input once per run, not once per scheduling round (a path it
    found missing is asked again). Only within `SPAN` (else a warning, once, and no change). Returns whether the
    scheduler's step was replaced (once per process)."""
    from snakemake.scheduling.job_scheduler import JobScheduler

    shipped = JobScheduler.update_input_sizes
    if getattr(shipped, "squidflow_once", False):
        return False
    if not within_tested(DIST, WHAT, version, warn, span=SPAN):
        return False

    async def update_input_sizes(self: Any, jobs: Iterable[Any]) -> None:
        known = self._input_sizes
        todo = {path for job in jobs for path in job.input if known.get(path) is None}

        async def get_size(path: Any) -> tuple[Any, int | None]:
            return path, await path.size() if await path.exists() else None

        if todo:
            known.update(await asyncio.gather(*(get_size(path) for path in todo)))

    update_input_sizes.squidflow_once = True  # type: ignore[attr-defined]
    JobScheduler.update_input_sizes = update_input_sizes  # type: ignore[method-assign]
    return True
