"""Issue 34 item 4's whole-DAG figures, each a ratio against the same figure for the previous release measured in the
same run: this checkout against the previous release's files (benchmarks/startup.py's `release_commit()`: the tag
`v<version>`, or in a clone without tags the commit that dated its CHANGELOG heading), each run with its own
Snakefile, scripts, profiles and library (PYTHONPATH), one after the other on the same machine.

- `local`: the small DAG (config/config.yaml + tests/configs/small.yaml) with `profiles/default --cores N` in a
  fresh folder, wall seconds, now / release (goal: <= 120 s, 226 s before issue 34).
- `slurm`: the same DAG with `profiles/slurm` on the local Slurm test cluster (tests/helpers/slurm_cluster.py, the
  one tests/e2e/test_slurm.py starts: one node with as many cores as the local run uses), wall seconds of
  the submitting Snakemake, and over the local run of the same tree. No goal: on a real cluster the queue decides;
  the figure is for users to read. This checkout runs the executor plugin as it ships, with squidflow's one kept fix
  (`CANCELLED by <uid>`, which changes nothing in a run where no job is cancelled: docs/upstream.md). With
  `--baseline` at a commit before issue 46 removed the speed-only patches (the status back-off capped at 15 s, one
  local Snakemake per Slurm job instead of the job-step executor, the submission order; e.g. f18bf44),
  `now/release` is what those patches bought. Needs root and Debian's Slurm (`make test-tools`); otherwise one line says why and the figure is
  left out.
- `demo`: `make demo` from a fresh clone: `git clone` of this checkout's HEAD (and of the release commit), `.venv`
  linked in, then `snakemake --profile profiles/default --cores N` in the clone, wall seconds (goal: <= 150 s).
- `startup`: from the demo runs (so it runs them if `demo` is not asked for): the share of the recorded jobs' CPU
  time (Snakemake's `benchmark:` records) spent starting up, each tree's per-rule start-up (startup.py) over its own
  run's records (goal: <= 20%).

Seconds move with other work on the machine; the ratio of two runs back to back moves less. The load average is
printed with the table.

    .venv/bin/python -m benchmarks.dag [--only local slurm demo startup] [--quick] [--cores 2] [--baseline REF]
                                       [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.startup import env_for, measure, records, release_commit

ROOT = Path(__file__).resolve().parents[1]

SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
SMALL = (Path("config") / "config.yaml", Path("tests") / "configs" / "small.yaml")  # relative to the tree
FIGURES = ("local", "slurm", "demo", "startup")
GOALS = {"local": "<= 120 s", "slurm": "no goal", "demo": "<= 150 s", "startup": "<= 20%"}


def run_dag(
    tree: Path, directory: Path | None, configfiles: tuple[Path, ...] = (), cores: int = 2, *extra: str
) -> tuple[float, float]:
    """Wall and CPU seconds (Snakemake and every job) of the whole DAG of the workflow in `tree` with profiles/default,
    from nothing, into `directory` (None: the tree itself, as `make demo` runs), with `tree`'s library."""
    cmd = [SNAKEMAKE, "--profile", "profiles/default", "--cores", str(cores)]
    if directory is not None:
        cmd += ["--directory", str(directory)]
    if configfiles:
        cmd += ["--configfile", *map(str, configfiles)]
    cmd += list(extra)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    res = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, env=env_for(tree))
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} (in {tree}) failed:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def startup_share(tree: Path, directory: Path) -> float:
    """Share of the CPU time of the jobs recorded in `directory` (a run of the workflow in `tree`) spent starting up:
    each recorded rule's script start-up, measured once with `tree`'s scripts and library (startup.measure), times
    its jobs, over the recorded CPU time."""
    recs = records(directory)
    startup = measure(tree, sorted({rule for rule, _ in recs}), 1)
    total = sum(cpu for _, cpu in recs)
    return sum(startup.get(rule, 0.0) for rule, _ in recs) / total if total else float("nan")


def clone(ref: str, dest: Path) -> Path:
    """A fresh clone of this repository at `ref` with the project's .venv linked in, as a newcomer's `git clone`
    followed by `make setup` (already done) leaves it."""
    subprocess.run(["git", "clone", "-q", str(ROOT), str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "checkout", "-q", "--detach", ref], check=True)
    venv = ROOT / ".venv"
    if venv.exists():
        (dest / ".venv").symlink_to(venv.resolve())
    return dest


def slurm_run(cluster, tree: Path, directory: Path) -> float:
    """Wall seconds of the small DAG submitted with profiles/slurm from `tree` to the test cluster."""
    t0 = time.monotonic()
    res = cluster.submit(tree, directory, [tree / c for c in SMALL])
    wall = time.monotonic() - t0
    if res.returncode != 0:
        raise SystemExit(f"the Slurm run of {tree} failed:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
    cluster.wait_until_empty()
    return wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="+", choices=FIGURES, default=list(FIGURES), help="only these figures")
    ap.add_argument(
        "--quick",
        action="store_true",
        help="this checkout's side only (no release runs): the figures without their ratios",
    )
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--baseline", help="git ref to compare with (default: the previous release's commit)")
    ap.add_argument("--keep", type=Path, help="keep the runs under this folder to inspect")
    args = ap.parse_args()
    only = set(args.only) | ({"demo"} if "startup" in args.only else set())
    ref = args.baseline or release_commit()
    base = args.keep or Path(tempfile.mkdtemp(prefix="squidflow-dag-"))
    base.mkdir(parents=True, exist_ok=True)
    sides = {"now": ROOT} if args.quick else {"now": ROOT, "release": base / "release"}
    if "release" in sides:
        shutil.rmtree(sides["release"], ignore_errors=True)
        clone(ref, sides["release"])
    seconds: dict[tuple[str, str], float] = {}
    notes: list[str] = []

    def fresh(*parts: str) -> Path:
        d = base.joinpath(*parts)
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        return d

    try:
        if only & {"local", "slurm"}:
            for side, tree in sides.items():
                seconds["local", side], _ = run_dag(tree, fresh("local", side), SMALL, args.cores)
                print(f"local  {side:8s} {seconds['local', side]:6.0f} s", flush=True)
        if "slurm" in only:
            from tests.helpers.slurm_cluster import start_cluster, why_unavailable

            reason = why_unavailable()
            if reason:
                notes.append(f"slurm: left out: {reason}")
            else:
                cluster = start_cluster()
                try:
                    if cluster.cpus != args.cores:
                        notes.append(
                            f"slurm: the test cluster's node has {cluster.cpus} cores, the local runs "
                            f"--cores {args.cores}"
                        )
                    for side, tree in sides.items():
                        seconds["slurm", side] = slurm_run(cluster, tree, fresh("slurm", side))
                        print(f"slurm  {side:8s} {seconds['slurm', side]:6.0f} s", flush=True)
                finally:
                    cluster.stop()
                    shutil.rmtree(cluster.root, ignore_errors=True)
        if "demo" in only:
            for side in sides:
                tree = clone("HEAD" if side == "now" else ref, fresh("demo", side) / "squidflow")
                seconds["demo", side], _ = run_dag(tree, None, (), args.cores)
                print(f"demo   {side:8s} {seconds['demo', side]:6.0f} s", flush=True)
                if "startup" in only:
                    seconds["startup", side] = startup_share(tree, tree)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)

    print(
        f"\nissue 34 item 4: this checkout (now) against {ref[:10]} (release), --cores {args.cores}, one after the "
        f"other (load on the machine: {os.getloadavg()[0]:.1f})"
    )
    print(f"{'figure':34s} {'now':>8s} {'release':>8s} {'now/release':>11s}  goal")

    def shown(value: float | None, unit: str) -> str:
        if value is None:
            return f"{'-':>8s}"
        return {"%": f"{100 * value:7.1f}%", "s": f"{value:6.0f} s"}.get(unit, f"{value:8.2f}")

    def row(name: str, now: float, old: float | None, unit: str, goal: str) -> None:
        ratio = f"{now / old:11.2f}" if old else f"{'-':>11s}"
        print(f"{name:34s} {shown(now, unit)} {shown(old, unit)} {ratio}  {goal}")

    def get(fig: str, side: str) -> float | None:
        return seconds.get((fig, side))

    if get("local", "now") is not None:
        row("small DAG, local (wall)", get("local", "now"), get("local", "release"), "s", GOALS["local"])
    if get("slurm", "now") is not None:
        row("small DAG, Slurm (wall)", get("slurm", "now"), get("slurm", "release"), "s", "plugin as it ships (now)")
        slurm_ratio = {side: get("slurm", side) / get("local", side) for side in sides if get("slurm", side)}
        row("small DAG, Slurm / local", slurm_ratio["now"], slurm_ratio.get("release"), "x", GOALS["slurm"])
    if get("demo", "now") is not None:
        row("make demo, fresh clone (wall)", get("demo", "now"), get("demo", "release"), "s", GOALS["demo"])
    if get("startup", "now") is not None:
        row("demo: start-up share of job CPU", get("startup", "now"), get("startup", "release"), "%", GOALS["startup"])
    for note in notes:
        print(note)


if __name__ == "__main__":
    main()
