"""Start-up of every rule's job: the CPU seconds from process start to the library call, against the same figure for
the previous release, measured in the same run.

A Snakemake job is a new Python process: Python starts, Snakemake's preamble imports `snakemake.script` to unpickle
the job's `snakemake` object, then the script makes its module-level imports and calls the library. This benchmark
runs exactly those imports (read from each `scripts/<rule>.py` by `tests/helpers/script_imports.py`) in a fresh
interpreter per rule, one after the other, and takes the child's user + system CPU seconds
(`resource.getrusage(RUSAGE_CHILDREN)`): CPU time, not wall time, so that other work on the machine changes the
figure little. Each rule is measured for this checkout and for the files of the previous release (tag
`v<version>` of pyproject.toml's version, else the commit `Release <version>`; or `--baseline REF`) with that tree's own scripts and library, after a
warm-up import of the heavy libraries (so neither side pays for a cold disk cache); `python -c pass` is the floor.

From a finished run's folder (`--run DIR`; by default `.`, where `make demo` leaves one) it also reads Snakemake's
own benchmark records (`results/benchmarks/<rule>/...tsv`, `cpu_time` = user + system CPU of the job) and prints the
share of those jobs' CPU time that their start-up takes, with this checkout's and the baseline's start-up figures
(goal: <= 20% of the demo's job CPU time). Only rules with a `benchmark:` directive leave records.

    .venv/bin/python -m benchmarks.startup [--baseline REF] [--run DIR] [--rules train featurize ...] [--repeat 1]
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.helpers.script_imports import import_command, run_imports

ROOT = Path(__file__).resolve().parents[1]

WARM_UP = "import torch, torchvision, timm, scipy.stats, sklearn, pandas, polars, matplotlib.pyplot, snakemake.script"


def cpu_seconds(cmd: list[str], env: dict[str, str]) -> float:
    """User + system CPU seconds of running `cmd` to its end (it must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    res = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        raise RuntimeError(f"{cmd[:3]} failed:\n{res.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def env_for(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree / "src"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def release_commit() -> str:
    """The previous release: the tag `v<version>` of pyproject.toml's version, else the commit "Release <version>",
    else (a clone without tags) the commit that dated `## [<version>] - ` in CHANGELOG.md."""
    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), flags=re.M).group(1)
    for cmd in (
        ["git", "rev-parse", "-q", "--verify", f"v{version}^{{commit}}"],
        ["git", "log", "-1", "--format=%H", "--fixed-strings", f"--grep=Release {version}"],
        ["git", "log", "-1", "--format=%H", f"-S## [{version}] - ", "--", "CHANGELOG.md"],
    ):
        out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True).stdout.strip()
        if out:
            return out
    raise SystemExit(
        f"no tag v{version}, no commit 'Release {version}' and no dated [{version}] in CHANGELOG.md; "
        "name the baseline with --baseline REF"
    )


def measure(tree: Path, rules: list[str], repeat: int) -> dict[str, float]:
    env = env_for(tree)
    out = {}
    for rule in rules:
        path = tree / "scripts" / f"{rule}.py"
        if path.exists():
            out[rule] = min(cpu_seconds(import_command(path), env) for _ in range(repeat))
    return out


def records(run: Path) -> list[tuple[str, float]]:
    """(rule, cpu_time) of every Snakemake benchmark record under `run`/results/benchmarks."""
    out = []
    base = run / "results" / "benchmarks"
    for tsv in sorted(base.rglob("*.tsv")):
        with tsv.open() as f:
            for row in csv.DictReader(f, delimiter="\t"):
                cpu = row.get("cpu_time", "NA")
                if cpu not in ("NA", ""):
                    out.append((tsv.relative_to(base).parts[0], float(cpu)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", help="git ref to compare with (default: the previous release's commit)")
    ap.add_argument(
        "--run",
        type=Path,
        default=Path("."),
        help="a finished run's folder whose Snakemake benchmark records to read (default: ., after make demo)",
    )
    ap.add_argument("--rules", nargs="*", help="only these rules (default: every scripts/<rule>.py)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per figure; the least CPU time is kept")
    args = ap.parse_args()
    rules = args.rules or sorted(p.stem for p in (ROOT / "scripts").glob("*.py"))
    ref = args.baseline or release_commit()
    env = env_for(ROOT)
    cpu_seconds([sys.executable, "-c", WARM_UP], env)  # the disk cache warm for both sides
    floor = min(cpu_seconds([sys.executable, "-c", "pass"], env) for _ in range(max(3, args.repeat)))
    with tempfile.TemporaryDirectory() as tmp:
        old_tree = Path(tmp) / "baseline"  # the release's files (git archive: no worktree to register and remove)
        old_tree.mkdir()
        archive = subprocess.run(
            ["git", "archive", ref, "scripts", "src", "workflow/schemas", "pyproject.toml"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        subprocess.run(["tar", "-x", "-C", str(old_tree)], input=archive.stdout, check=True)
        before = measure(old_tree, rules, args.repeat)
    now = measure(ROOT, rules, args.repeat)
    heavy = {rule: sorted(run_imports(ROOT / "scripts" / f"{rule}.py", env)) for rule in now}

    print(
        f"start-up CPU seconds (user + system) from process start to the library call; baseline {ref[:10]}; "
        f"`python -c pass`: {floor:.2f} s"
    )
    print(
        "(a library the call itself uses is imported inside it, as the work's cost: make_training_cache still loads "
        "torchvision to resize, agreement_table scipy.stats for Spearman's rho; a job whose call never reaches it "
        "no longer pays for it)"
    )
    print(f"{'rule':32s} {'before':>7s} {'now':>7s} {'now/before':>10s}  heavy modules now")
    for rule in rules:
        if rule in now:
            b = before.get(rule)
            ratio = f"{now[rule] / b:10.2f}" if b else f"{'(new)':>10s}"
            print(
                f"{rule:32s} {b if b is not None else float('nan'):7.2f} {now[rule]:7.2f} {ratio}  "
                f"{', '.join(heavy[rule]) or '-'}"
            )
    common = [r for r in now if r in before]
    tb, tn = sum(before[r] for r in common), sum(now[r] for r in common)
    print(f"{'sum over rules':32s} {tb:7.2f} {tn:7.2f} {tn / tb:10.2f}")

    if args.run:
        recs = records(args.run)
        if not recs:
            print(
                f"\nno Snakemake benchmark records under {args.run / 'results' / 'benchmarks'}: the start-up share of "
                "a run's job CPU time needs a finished run there (make demo) or --run DIR"
            )
            return
        total = sum(cpu for _, cpu in recs)
        print(f"\n{len(recs)} jobs with benchmark records in {args.run}: {total:.1f} CPU s in all")
        for label, figures in (("baseline", before), ("now", now)):
            startup = sum(figures.get(rule, 0.0) for rule, _ in recs)
            print(
                f"  start-up ({label} figures) {startup:7.1f} CPU s = {100 * startup / total:5.1f}% of the jobs' CPU time"
            )
        per_rule: dict[str, list[float]] = {}
        for rule, cpu in recs:
            per_rule.setdefault(rule, []).append(cpu)
        for rule, cpus in sorted(per_rule.items(), key=lambda kv: -sum(kv[1])):
            print(
                f"  {rule:30s} {len(cpus):4d} jobs  {sum(cpus):7.1f} CPU s  start-up now {now.get(rule, 0.0):5.2f} s/job"
            )


if __name__ == "__main__":
    main()
