"""The one way the tests run Snakemake: the command, a finished run and its copies, and what a run did.

Every test that starts `snakemake` goes through this module (issue 55): the executable of this interpreter's venv, a
`WorkflowRun` (a results folder and the config files that made it), `copy_run` (a variant works on a copy of the
shared small run and reruns only what it changes), `clone_like` (a folder that looks like a fresh clone), and the
readers of its output (`jobs_run`, `planned_jobs`), and `measured` (a run's wall and CPU seconds and peak memory)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
SQUIDFLOW = str(Path(sys.executable).with_name("squidflow"))
DEMO_CONFIG = ROOT / "config" / "config.yaml"
SMALL_CONFIG = ROOT / "tests" / "configs" / "small.yaml"
SMALL_CONFIGS = (DEMO_CONFIG, SMALL_CONFIG)
# What the test folders of a clone never need: run outputs, Snakemake's state, the repository itself.
RUN_STATE = ("results", "runs", "logs", ".snakemake", ".git", ".test-cache")


def cores() -> int:
    """Cores one Snakemake run may use: the machine's, split between the pytest-xdist workers that run at once, so
    that the runs of one tier never ask for more cores than the machine has."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    return max(1, (os.cpu_count() or 1) // max(1, workers))


def environment(env: dict[str, str | None] | None = None) -> dict[str, str]:
    """The test's environment plus `env` (a name given None is left out), with this venv's bin first on PATH (the
    jobs' Python and tools)."""
    merged = {k: v for k, v in {**os.environ, **(env or {})}.items() if v is not None}
    merged["PATH"] = f"{Path(SNAKEMAKE).parent}{os.pathsep}{merged.get('PATH', '')}"
    return merged


def in_folder(work: Path, *configfiles: Path, cores_: int | None = None) -> list[str]:
    """The arguments of a run of this checkout's workflow in the folder `work` with `configfiles`, on `cores_` cores
    (default: `cores()`)."""
    return [
        "--snakefile",
        str(ROOT / "Snakefile"),
        "--directory",
        str(work),
        "--configfile",
        *map(str, configfiles),
        "--cores",
        str(cores_ or cores()),
    ]


def snakemake(
    *args: str | Path,
    cwd: Path = ROOT,
    timeout: int = 1800,
    env: dict[str, str | None] | None = None,
    check: bool = False,
) -> subprocess.CompletedProcess:
    """`snakemake ARGS` in `cwd` (the repository root unless said), output captured as text; `env` adds to the
    environment. With `check`, a non-zero exit fails the calling test with the output's tail."""
    res = subprocess.run(
        [SNAKEMAKE, *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment(env),
    )
    if check:
        assert res.returncode == 0, f"snakemake {' '.join(map(str, args))}\n{res.stdout[-5000:]}{res.stderr[-5000:]}"
    return res


def start(
    *args: str | Path, cwd: Path = ROOT, env: dict[str, str | None] | None = None, **popen: object
) -> subprocess.Popen:
    """`snakemake ARGS` started, not waited for (a test that kills it, or runs two at once); `popen` goes to Popen
    (stdout=..., start_new_session=...)."""
    return subprocess.Popen([SNAKEMAKE, *map(str, args)], cwd=cwd, env=environment(env), **popen)  # type: ignore[call-overload]


@dataclass(frozen=True)
class Measured:
    """A finished `snakemake` process: its exit status, output (stdout and stderr together), wall seconds, CPU
    seconds (user + system, its own and its jobs') and peak memory (MB, the largest of it and its jobs)."""

    returncode: int
    output: str
    wall_s: float
    cpu_s: float
    peak_mb: float


def measured(*args: str | Path, cwd: Path = ROOT, env: dict[str, str | None] | None = None) -> Measured:
    """`snakemake ARGS`, run to its end and measured from its own wait4 record: the figures are this process's (and
    its children's), never those of an earlier run of the same test process (RUSAGE_CHILDREN counts them all)."""
    with tempfile.TemporaryFile("w+") as out:
        t0 = time.monotonic()
        proc = start(*args, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return Measured(proc.returncode, out.read(), wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def squidflow(
    *args: str | Path, cwd: Path = ROOT, timeout: int = 600, env: dict[str, str | None] | None = None
) -> subprocess.CompletedProcess:
    """The `squidflow` command of this venv, output captured as text."""
    return subprocess.run(
        [SQUIDFLOW, *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **env} if env else None,
    )


@dataclass(frozen=True)
class WorkflowRun:
    """A finished run of the workflow in its own directory, and how to run snakemake there again."""

    directory: Path
    configfiles: tuple[Path, ...]

    @property
    def results(self) -> Path:
        return self.directory / "results"

    def args(self) -> list[str]:
        return ["--directory", str(self.directory), "--configfile", *map(str, self.configfiles)]

    def snakemake(
        self, *args: str, timeout: int = 1800, env: dict[str, str | None] | None = None, check: bool = False
    ) -> subprocess.CompletedProcess:
        """snakemake with this run's directory and config files (plus `args`), from the repository root."""
        return snakemake(*self.args(), *args, timeout=timeout, env=env, check=check)


def copy_run(run: WorkflowRun, dest: Path, *, configfiles: Iterable[Path] | None = None) -> WorkflowRun:
    """A copy of a finished run in `dest` (results, logs and Snakemake's records, modification times kept), so that
    a variant reruns only the jobs its change touches and the shared run stays as it was. `configfiles` replaces the
    run's config files for the copy."""
    dest.mkdir(parents=True, exist_ok=True)
    for entry in run.directory.iterdir():
        if entry.name.startswith(".squidflow-shared-run"):
            continue
        target = dest / entry.name
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, target, symlinks=True, copy_function=shutil.copy2)
        else:
            shutil.copy2(entry, target, follow_symlinks=False)
    for lock in (dest / ".snakemake" / "locks").glob("*"):
        lock.unlink()
    return WorkflowRun(dest, tuple(configfiles) if configfiles is not None else run.configfiles)


def clone_like(tmp: Path, *, leave_out: Iterable[str] = ()) -> Path:
    """tmp/clone: every top-level entry of the checkout linked, but no results, runs or Snakemake state (nor the
    names in `leave_out`): a folder that looks like a fresh clone, for the README's commands as printed."""
    clone = tmp / "clone"
    clone.mkdir()
    skip = {*RUN_STATE, *leave_out}
    for entry in ROOT.iterdir():
        if entry.name not in skip:
            (clone / entry.name).symlink_to(entry)
    return clone


def jobs_run(output: str) -> set[str]:
    """The rules of the jobs a run (or a dry run) printed."""
    return set(re.findall(r"^(?:local)?(?:rule|checkpoint) (\w+):", output, flags=re.M))


def planned_jobs(text: str) -> Counter:
    """The job counts of a run's 'Job stats' table, `all` included; empty when nothing is to be done."""
    counts: Counter = Counter()
    if "Job stats:" in text:
        for line in text.split("Job stats:", 1)[1].splitlines()[3:]:
            parts = line.split()
            if len(parts) != 2 or not parts[1].isdigit():
                break
            counts[parts[0]] = int(parts[1])
    counts.pop("total", None)
    return counts


def planned_outputs(text: str, rule: str, field: str = "output") -> list[str]:
    """The output files of every planned job of `rule` in a dry run (its job blocks' `output:` lines; `field`
    "input": the input files)."""
    outputs: list[str] = []
    for block in re.split(r"\n(?=(?:local)?(?:rule|checkpoint) \w+:)", text):
        if re.match(rf"(?:local)?(?:rule|checkpoint) {rule}:", block.lstrip()):
            found = re.search(rf"^\s+{field}: (.*)$", block, re.MULTILINE)
            outputs += found.group(1).split(", ") if found else []
    return outputs


def local_rules(rules_dir: Path) -> set[str]:
    """The workflow's `localrules:` (downloads run where Snakemake runs: never submitted to a cluster)."""
    names: set[str] = set()
    for smk in rules_dir.glob("*.smk"):
        for block in re.findall(r"^localrules:\n((?:[ \t]+\w+,?[ \t]*\n)+)", smk.read_text(), flags=re.M):
            names |= set(re.findall(r"\w+", block))
    return names


def rule_blocks(rules_dir: Path = ROOT / "workflow" / "rules") -> list[tuple[str, str, str]]:
    """(stage, rule name, rule text) for every rule and checkpoint of the rules files, those defined under a condition
    (`if NEXT_ROUND:`, indented) too."""
    out = []
    for smk in sorted(rules_dir.glob("*.smk")):
        for block in re.split(r"^(?=[ \t]*(?:rule|checkpoint) \w+:)", smk.read_text(), flags=re.M):
            head = re.match(r"[ \t]*(?:rule|checkpoint) (\w+):", block)
            if head:
                out.append((smk.stem, head.group(1), block))
    return out
