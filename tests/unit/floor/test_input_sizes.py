"""squidflow.runtime.input_sizes: Snakemake's scheduler asks the size of every ready job's inputs in every round (on
S3, one to three requests each); patched, once per input (docs/upstream.md, change 3b; issue 61). The whole run on
a real S3 API: benchmarks/storage.py and tests/e2e/test_s3.py."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
from snakemake.scheduling.job_scheduler import JobScheduler

from squidflow.runtime import input_sizes, upstream

SHIPPED = JobScheduler.update_input_sizes


class File(str):
    """An input path whose existence and size questions are counted, as a storage file's requests would be."""

    asked: list[str]
    present: bool = True

    async def exists(self) -> bool:
        self.asked.append(f"exists {self}")
        return self.present

    async def size(self) -> int:
        self.asked.append(f"size {self}")
        return len(self)


def _rounds(update) -> tuple[dict, list[str]]:
    """Three scheduling rounds as jobs finish one by one: a, b and c ready, then b and c, then c and d (a new job
    whose input c.parquet was made after the first round). Returns the sizes and every question asked."""
    asked: list[str] = []
    files = {name: File(name) for name in ("a.parquet", "b.parquet", "c.parquet", "d.parquet")}
    for f in files.values():
        f.asked = asked
    files["d.parquet"].present = False  # asked while missing, then made: asked again
    job = {name: SimpleNamespace(input=[files["a.parquet"], files[name]]) for name in files}
    scheduler = SimpleNamespace(_input_sizes={})
    for ready in (["a.parquet", "b.parquet", "c.parquet"], ["b.parquet", "c.parquet"], ["c.parquet", "d.parquet"]):
        asyncio.run(update(scheduler, [job[name] for name in ready]))
        files["d.parquet"].present = ready[-1] == "d.parquet"
    asyncio.run(update(scheduler, [job["d.parquet"]]))
    return scheduler._input_sizes, asked


def test_snakemake_as_it_ships_asks_every_ready_jobs_inputs_in_every_round() -> None:
    sizes, asked = _rounds(SHIPPED)
    if len(asked) <= 12:
        pytest.fail(
            "Snakemake asks an input's size once itself now: drop squidflow.runtime.input_sizes (docs/upstream.md)"
        )
    assert sizes == {"a.parquet": 9, "b.parquet": 9, "c.parquet": 9, "d.parquet": 9}


def test_patched_each_input_is_asked_once_and_a_missing_one_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(JobScheduler, "update_input_sizes", SHIPPED)  # and back to it after the test
    assert input_sizes.patch_input_sizes() is True
    assert input_sizes.patch_input_sizes() is False  # once per process
    sizes, asked = _rounds(JobScheduler.update_input_sizes)
    assert sizes == {"a.parquet": 9, "b.parquet": 9, "c.parquet": 9, "d.parquet": 9}  # the answers of Snakemake's own
    # a, b, c: exists and size once each; d: exists (missing), then exists and size once made
    assert sorted(asked) == sorted(
        [f"{q} {n}.parquet" for n in "abc" for q in ("exists", "size")] + ["exists d.parquet"] * 2 + ["size d.parquet"]
    )


def test_outside_the_tested_versions_the_scheduler_runs_as_it_ships(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(JobScheduler, "update_input_sizes", SHIPPED)
    monkeypatch.setattr(upstream, "_warned", set())
    said: list[str] = []
    assert not input_sizes.patch_input_sizes(version="9.5.0", warn=said.append)
    assert JobScheduler.update_input_sizes is SHIPPED
    assert len(said) == 1 and "snakemake 9.5.0 is outside" in said[0] and input_sizes.SPAN[0] in said[0], said
