"""Planning grows no faster than the dataset (issue 61's acceptance): `snakemake -n` on a local source of 2,000
videos uses at most about twice the CPU time and the memory of the same plan on 1,000. A step that is quadratic in
the videos or files (a join of every video with every file, an existence check per file per job, a checkpoint
re-evaluated per video) makes the ratio 4.

Snakemake's own start-up (reading the workflow, a few CPU seconds) does not grow with the videos and would hide such a
step, so it is measured too, as the same plan on a source of ten videos, and left out of both sides: what the
videos add to the plan at 2,000 is at most twice what they add at 1,000, give or take the noise of a shared
machine (`SLACK_CPU_S`, `SLACK_MB`). A quadratic step that costs a quarter of a CPU second at 1,000 videos (25 s at
10,000) fails it.

The videos are empty files: the listing (checkpoint video_candidates, the one job each size runs) only walks the
folder, and the dry run after it plans the whole videos and frames stages from its table (check_local_videos,
the manifest, one extraction job per frame shard), so what is timed is the DAG built after the checkpoint, not
Snakemake's start-up alone. CPU seconds rather than wall seconds: the engineers' tests share the machine."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from helpers.runs import in_folder, measured, planned_jobs, snakemake

EVENTS = ("birthday_party", "wedding", "parade", "protest")  # the schema's default events: no `events` to write
SIZES = (10, 1000, 2000)  # ten: Snakemake's start-up, which the videos do not change
REPEATS = 2  # each size's dry run twice, alternating; the lower figure of each
SLACK_CPU_S = 0.5  # two dry runs of the same plan differ by up to ~0.3 CPU s here when the machine is busy
SLACK_MB = 25


def local_source(work: Path, n: int) -> Path:
    """`work`/run.yaml: the videos and frames stages on a local source of `n` empty files over the four events."""
    root = work / "videos"
    for i in range(n):
        folder = root / EVENTS[i % len(EVENTS)]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"clip{i:05d}.mp4").touch()
    config = work / "run.yaml"
    config.write_text(
        yaml.safe_dump({"stages": ["videos", "frames"], "sources": [{"type": "local", "root": "videos"}]})
    )
    return config


@pytest.mark.slow
def test_planning_2000_videos_costs_at_most_twice_1000(tmp_path: Path) -> None:
    args = {}
    for n in SIZES:
        work = tmp_path / str(n)
        args[n] = in_folder(work, local_source(work, n), cores_=1)
        snakemake(*args[n], "--until", "video_candidates", check=True, timeout=600)
    cpu: dict[int, float] = {}
    peak: dict[int, float] = {}
    for _ in range(REPEATS):
        for n in SIZES:
            plan = measured(*args[n], "-n")
            assert plan.returncode == 0, plan.output[-3000:]
            jobs = planned_jobs(plan.output)
            assert jobs["check_local_videos"] == 1 and jobs["extract_frames"] >= 1, dict(jobs)  # past the checkpoint
            cpu[n] = min(cpu.get(n, plan.cpu_s), plan.cpu_s)
            peak[n] = min(peak.get(n, plan.peak_mb), plan.peak_mb)
    figures = {n: f"{cpu[n]:.2f} CPU s, {peak[n]:.0f} MB" for n in SIZES}
    assert cpu[2000] - cpu[10] <= 2 * (cpu[1000] - cpu[10]) + SLACK_CPU_S, f"planning time grows faster: {figures}"
    assert peak[2000] - peak[10] <= 2 * (peak[1000] - peak[10]) + SLACK_MB, f"planning memory grows faster: {figures}"
