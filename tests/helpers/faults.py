"""Helpers of the fault-injection suite (tests/robustness/test_faults.py): running the workflow in a temporary directory,
killing it, comparing two runs' results, and hostile strings with the checks that find them raw in an output.

Each fault or bad input a test tries is recorded with `tried(case, outcome)`; tests/conftest.py prints how many were
tried and their outcomes at the end of the session ("fault-injection suite: N faults and bad inputs tried ...").
"""

from __future__ import annotations

import csv
import io
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import polars as pl

from .runs import DEMO_CONFIG, ROOT, SNAKEMAKE

CASES: list[tuple[str, str]] = []  # (case, outcome) of every fault tried in this session


def tried(case: str, outcome: str) -> None:
    """Record a fault or bad input and what squidflow did about it (after the test asserted it)."""
    CASES.append((case, outcome))


FUZZED: dict[str, dict[str, int]] = {}  # reader -> outcome -> generated inputs (tests/robustness/test_fuzz_readers.py)


def fuzzed(reader: str, outcome: str) -> None:
    """Count one generated input a reader of user files handled as required (read, or a user error naming it)."""
    counts = FUZZED.setdefault(reader, {})
    counts[outcome] = counts.get(outcome, 0) + 1


TRACEBACK = "Traceback (most recent call last)"

# The smallest run that still has every kind of job of acquisition and frames (demo videos, the candidates and
# manifest checkpoints, shard jobs, featurization, selection): 4 videos of 3 s, about half a minute on 1 core.
TINY = """\
stages: [videos, frames]
demo:
  events: [birthday_party, wedding, parade, protest]
  videos_per_event: 1
  seconds: 3
  width: 96
  height: 72
  fps: 12
  seed: 1
"""


def write_config(workdir: Path, text: str, name: str = "run.yaml") -> Path:
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / name
    path.write_text(text, encoding="utf-8")
    return path


def snakemake_args(workdir: Path, *configs: Path, cores: int = 1) -> list[str]:
    return [SNAKEMAKE, "--directory", str(workdir), "--configfile", str(DEMO_CONFIG),
            *map(str, configs), "--cores", str(cores)]  # fmt: skip


def run(args: list[str], *, timeout: int = 900) -> subprocess.CompletedProcess:
    """Run a command from the repository root; stdout and stderr together in `.stdout`."""
    return subprocess.run(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)


def start(args: list[str], log: Path) -> subprocess.Popen:
    """Start a command in its own session (so the test can kill it and every job it started, and nothing else)."""
    fh = open(log, "w")  # noqa: SIM115 - closed by the caller through wait()
    return subprocess.Popen(args, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (from /proc; children of children too)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def wait_for_job(proc: subprocess.Popen, script: str, *, timeout: float = 600) -> int | None:
    """The pid of the python process running rule script `script` (e.g. "featurize.py") under `proc`, once it runs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        for pid in descendants(proc.pid):
            line = cmdline(pid).split()
            if line and os.path.basename(line[0]).startswith("python") and line[-1].endswith(script):
                return pid  # the interpreter itself, not the shell that started it
        time.sleep(0.1)
    return None


def kill_session(proc: subprocess.Popen) -> None:
    """SIGKILL to the process group the test started (snakemake and its jobs), as a crash would."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=60)


# Results that record the run itself (job timings), not what it computed: left out of comparisons between runs.
# The local-video probe journal records which probes ran when (a kill and rerun probes in another order); the manifest
# made from it is compared like every other result. So are its declared copies beside the status tables
# (results/videos/status/*.journal.jsonl, what object storage keeps of it).
RUN_RECORDS = ("benchmarks/", "report/run_summary.html", "run_config.yaml", "videos/journal_local/")
RUN_RECORD_SUFFIXES = (".journal.jsonl",)


def result_files(workdir: Path) -> dict[str, Path]:
    """Every result a run leaves behind, but the records of the run itself (RUN_RECORDS)."""
    base = workdir / "results"
    return {
        str(p.relative_to(base)): p
        for p in sorted(base.rglob("*"))
        if p.is_file()
        and not str(p.relative_to(base)).startswith(RUN_RECORDS)
        and not p.name.endswith(RUN_RECORD_SUFFIXES)
        and not p.name.startswith(".snakemake")
    }


def differences(a: Path, b: Path) -> list[str]:
    """What differs between two runs' results: files only in one, Parquet tables not equal, other files' bytes."""
    fa, fb = result_files(a), result_files(b)
    out = [f"only in {a.name}: {k}" for k in sorted(set(fa) - set(fb))]
    out += [f"only in {b.name}: {k}" for k in sorted(set(fb) - set(fa))]
    for key in sorted(set(fa) & set(fb)):
        if key.endswith(".parquet"):
            if not pl.read_parquet(fa[key]).equals(pl.read_parquet(fb[key])):
                out.append(f"table differs: {key}")
        elif fa[key].read_bytes() != fb[key].read_bytes():
            out.append(f"bytes differ: {key}")
    return out


def partial_files(workdir: Path) -> list[str]:
    """Temporary files of squidflow's atomic writes left in results/ (there must be none after a finished run)."""
    return [str(p) for p in (workdir / "results").rglob("*") if re.match(r"^\..*\.tmp", p.name)]


# --- hostile strings -----------------------------------------------------------------------------------------------
# Each one starts the way a spreadsheet formula can start and carries HTML, a Markdown link, a table-breaking pipe
# and a chat mention; SQF marks them so a scan finds them and nothing else.
def hostile(tag: str, start: str = "=") -> str:
    return (
        f'{start}HYPERLINK("http://evil.example/{tag}","SQF{tag}")+1 <script>sqf_xss("{tag}")</script> '
        f"<img src=x onerror=sqf_xss('{tag}')> [SQFLINK{tag}](javascript:sqf_xss('{tag}')) SQFPIPE|{tag} @everyone"
    )


STARTS = ["=", "+", "-", "@", "\t=", "\r="]
RAW_MARKUP = ["<script>sqf_xss", "<img src=x onerror=sqf_xss", 'href="javascript:sqf_xss']
MARKDOWN_LINK = re.compile(r"(?<!\\)\]\(javascript:sqf_xss")  # in Markdown a link is live too (unless escaped)
PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def raw_payloads(path: Path) -> list[str]:
    """Places in one output where a hostile string is live: a CSV cell a spreadsheet would run as a formula, or
    markup / a link / an unescaped table pipe in Markdown or HTML."""
    text = path.read_text(encoding="utf-8", errors="replace")
    found = []
    if path.suffix == ".csv":
        for n, row in enumerate(csv.reader(io.StringIO(text, newline="")), start=1):
            for cell in row:
                if cell.startswith(("=", "+", "-", "@", "\t", "\r")) and not PLAIN_NUMBER.fullmatch(cell):
                    found.append(f"{path}: line {n}: formula cell {cell[:60]!r}")
    else:
        for marker in RAW_MARKUP:
            if marker in text:
                found.append(f"{path}: raw {marker!r}")
        if path.suffix == ".md" and MARKDOWN_LINK.search(text):
            found.append(f"{path}: a live Markdown link of a payload")
        if path.suffix == ".md" and "SQFPIPE|" in text:
            found.append(f"{path}: unescaped table pipe of a payload")
    return found


def assert_one_clear_stop(res: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit status not 0, every needle in the output, and no Python traceback shown to the user."""
    out = res.stdout
    assert res.returncode != 0, out[-3000:]
    for needle in needles:
        assert needle in out, f"{needle!r} not in:\n{out[-3000:]}"
    assert TRACEBACK not in out, out[-3000:]
    return out
