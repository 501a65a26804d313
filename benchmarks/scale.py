"""Issue 61's scale curve: how the workflow's cost grows with the videos, each size's time per video a ratio
against the smallest size's (1,000 by default) measured in the same run.

For each N of `--sizes`, N tiny distinct clips (tests/helpers/videotools.make_clips: 64x48, 6 fps, 2 s, each with
its index drawn in; made once under the work folder's clips/ and hard-linked into each size's local source
`<root>/<event>/`, over the four demo events) go through the workflow in a fresh folder, one stage after another,
each a `snakemake --profile profiles/default --cores N TARGETS`:

- `videos`: the listing, the local check (a probe per file), the manifest;
- `frames`: frame extraction and featurization (per frame shard), the videos' extraction verdict;
- `selection`: the k frames per video, the dataset's images;
- `judgments`: the SIMULATED panel's HITs and ratings, ingestion, annotator quality, the image scores, Table 7, the
  crowd-kit aggregations and the rater and image triage;
- `reports`: the rest of the run (the acquisition, frame and judgment figures, HIT pages, contact sheets, dropped
  videos, run summary).

The SIMULATED panel sees each image through a truth table (squidflow.demo.panel). The demo's videos carry their
own, but take about a second each to render (an hour at 3,000); so the benchmark declares the truth of its clips
itself (`clip_truth`: a clip is about the event whose folder it lies in, with an evidence the benchmark assigns
per frame, not one drawn in the pixels) and names it in `judgments.panel.truth`, the key that lets the config check
accept `judgments.source: simulated` on a local source.

Per N it prints and (`--json FILE`) writes: the wall seconds per stage and in all; the CPU seconds per video
(Snakemake's and every job's, user + system); the planning time: a dry run of the finished run (the whole DAG
built, every output's file checked, nothing to do) and, per stage, the seconds before its first job starts; the
peak memory of that dry run and of any process of the stage runs (Snakemake or a job); the jobs run and the files
under results/; and the time per video over the smallest N's. Frames per video (`frames.n`) and the features'
image size are lowered so that the scale, not the backbone, is what is measured.

The default, 1,000 and 3,000, takes about 5 minutes on 2 cores; 10,000 is opt-in (`--sizes 1000,3000,10000`, about
17 minutes in all; README.md has the table).
Seconds move with other work on the machine: the load average is printed beside the table.

    .venv/bin/python -m benchmarks.scale [--sizes 1000,3000] [--cores 2] [--work DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import polars as pl
import yaml

from benchmarks.startup import env_for
from squidflow.contracts import io, schemas
from tests.helpers.runs import measured, start
from tests.helpers.videotools import make_clips

ROOT = Path(__file__).resolve().parents[1]

EVENTS = ("birthday_party", "wedding", "parade", "protest")  # the schema's default events
STAGES = {
    "videos": ["results/videos/videos.parquet"],
    "frames": ["results/features/efficientnet_lite0.parquet", "results/videos/videos_checked.parquet"],
    "selection": ["results/dataset/frames.parquet"],
    "judgments": [
        "results/judgments/judgments.parquet",
        "results/judgments/image_scores.parquet",
        "results/tables/table7_agreement.csv",
        "results/tables/crowd_aggregation.csv",
        "results/judgments/rater_triage.parquet",
        "results/judgments/image_triage.parquet",
    ],
    "reports": [],  # the configured stages' other targets (rule all)
}
OVERLAY = {
    "stages": ["videos", "frames", "judgments"],
    "frames": {"n": 8},
    "features": {"image_size": 64},
}
RATE = 6  # the clips' frames per second (make_clips' default)
JOB_LINE = re.compile(r"^(?:local)?(?:rule|checkpoint) \w+:", re.M)
STEPS = re.compile(r"(\d+) of (\d+) steps \(100%\) done")


def clip_truth(clips: list[Path], frames: int) -> pl.DataFrame:
    """The truth the SIMULATED panel rates the clips by (schemas.TRUTH), declared by the benchmark, not seen in the
    pixels: clip i (video id = its file's stem, as a local source names it) is about EVENTS[i % 4], the folder it is
    linked into; each of its `frames` frames shows that event with evidence frac(0.618 i + 0.1 frame) and no other
    event, a spread over [0, 1) from clearly absent (the panel's "nothing visible", rated 0-3) to clearly present."""
    rows = [
        {"video_id": clip.stem, "event": EVENTS[i % len(EVENTS)], "frame_index": f, "pts_s": f / RATE,
         "condition": "clean",
         "evidence": [{"event": e, "weight": (0.618 * i + 0.1 * f) % 1.0 if e == EVENTS[i % len(EVENTS)] else 0.0}
                      for e in EVENTS]}
        for i, clip in enumerate(clips)
        for f in range(frames)
    ]  # fmt: skip
    return pl.DataFrame(rows, schema=schemas.TRUTH.columns)


def frame_count(clip: Path) -> int:
    """The frames ffprobe decodes from one clip (make_clips cuts them all alike)."""
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
         "stream=nb_read_frames", "-of", "csv=p=0", str(clip)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return int(out.stdout.strip())


def source(work: Path, n: int) -> Path:
    """`work`/n<N>/config.yaml on a local source of the first `n` cached clips, hard-linked over the four events,
    with their truth (`clip_truth`) for the SIMULATED panel."""
    clips = make_clips(work / "clips", n, rate=RATE)
    folder = work / f"n{n}"
    shutil.rmtree(folder, ignore_errors=True)
    for i, clip in enumerate(clips):
        link = folder / "videos" / EVENTS[i % len(EVENTS)] / clip.name
        link.parent.mkdir(parents=True, exist_ok=True)
        os.link(clip, link)
    truth = folder / "truth.parquet"
    io.write_parquet(clip_truth(clips, frame_count(clips[0])), truth, schemas.TRUTH)
    config = folder / "config.yaml"
    overlay = {
        **OVERLAY,
        "sources": [{"type": "local", "root": str(folder / "videos")}],
        "judgments": {"source": "simulated", "panel": {"truth": str(truth)}},
    }
    config.write_text(yaml.safe_dump(overlay))
    return config


def stage_run(args: list[str]) -> dict[str, float]:
    """One stage's snakemake run, its output read as it comes: wall and CPU seconds, the seconds before the first
    job line, peak memory (MB, Snakemake or any job) and the jobs it ran."""
    t0 = time.monotonic()
    proc = start(*args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env_for(ROOT))
    first_job, text = None, []
    for line in proc.stdout:
        if first_job is None and JOB_LINE.match(line):
            first_job = time.monotonic() - t0
        text.append(line)
    _, status, usage = os.wait4(proc.pid, 0)
    wall, output = time.monotonic() - t0, "".join(text)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"snakemake {' '.join(args)} failed:\n{output[-4000:]}")
    steps = STEPS.findall(output)
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "before_first_job_s": first_job or wall,
            "peak_mb": usage.ru_maxrss / 1024, "jobs": int(steps[-1][0]) if steps else 0}  # fmt: skip


def measure(work: Path, n: int, cores: int) -> dict:
    """Every figure of one size, from a fresh run folder."""
    config = source(work, n)
    run_dir = config.parent / "run"
    base = ["--profile", "profiles/default", "--cores", str(cores), "--directory", str(run_dir),
            "--configfile", str(ROOT / "config" / "config.yaml"), str(config)]  # fmt: skip
    stages = {}
    for stage, targets in STAGES.items():
        stages[stage] = stage_run([*targets, *base])
        print(f"  N={n} {stage:10s} {stages[stage]['wall_s']:7.1f} s  (load {os.getloadavg()[0]:.1f})", flush=True)
    plan = measured(*base, "-n", env=env_for(ROOT))
    if plan.returncode != 0 or "Nothing to be done" not in plan.output:
        raise SystemExit(f"the dry run of the finished run at N={n} plans work:\n{plan.output[-3000:]}")
    wall = sum(s["wall_s"] for s in stages.values())
    return {
        "n": n,
        "stage_wall_s": {k: round(s["wall_s"], 2) for k, s in stages.items()},
        "wall_s": round(wall, 2),
        "cpu_s_per_video": round(sum(s["cpu_s"] for s in stages.values()) / n, 4),
        "dry_run_s": round(plan.wall_s, 2),
        "before_first_job_s": {k: round(s["before_first_job_s"], 2) for k, s in stages.items()},
        "planning_peak_mb": round(plan.peak_mb),
        "job_peak_mb": round(max(s["peak_mb"] for s in stages.values())),
        "jobs": sum(int(s["jobs"]) for s in stages.values()),
        "files": sum(len(files) for _, _, files in os.walk(run_dir / "results")),
        "load_average": round(os.getloadavg()[0], 2),
    }


def table(rows: list[dict], cores: int) -> str:
    base = rows[0]["wall_s"] / rows[0]["n"]
    head = ["N", *STAGES, "total s", "CPU s/video", "dry run s", "to 1st job s", "plan MB", "job MB", "jobs", "files",
            "s/video vs N=" + str(rows[0]["n"]), "load"]  # fmt: skip
    lines = [" | ".join(head), " | ".join("---" for _ in head)]
    for r in rows:
        cells = [r["n"], *(f"{r['stage_wall_s'][s]:.0f}" for s in STAGES), f"{r['wall_s']:.0f}",
                 f"{r['cpu_s_per_video']:.3f}", f"{r['dry_run_s']:.1f}", f"{max(r['before_first_job_s'].values()):.1f}",
                 r["planning_peak_mb"], r["job_peak_mb"], r["jobs"], r["files"],
                 f"{r['wall_s'] / r['n'] / base:.2f}x", f"{r['load_average']:.1f}"]  # fmt: skip
        lines.append(" | ".join(map(str, cells)))
    return f"scale curve, --cores {cores}, one size after the other (wall seconds per stage)\n" + "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,3000", help="the Ns, comma-separated (the first is the baseline)")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument(
        "--work", type=Path, help="work folder (kept: the clips are cached there); default: a temporary one"
    )
    ap.add_argument("--json", type=Path, help="write one object per N to this file")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    work = args.work or Path(tempfile.mkdtemp(prefix="squidflow-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        for n in sizes:
            rows.append(measure(work, n, args.cores))
            if args.work:
                continue
            shutil.rmtree(work / f"n{n}", ignore_errors=True)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print("\n" + table(rows, args.cores))
    print(f"load average (1, 5, 15 min) at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
