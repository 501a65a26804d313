"""Running the workflow on a Slurm cluster (`snakemake --profile profiles/slurm`): what the executor plugin leaves to us.

The plugin submits each job with `sbatch` and polls its state, but two kinds of request it cannot fix:
- `sbatch` refuses the job (more GPUs, memory or cores than any node of the partition has; an unknown account or
  partition). The plugin reports Slurm's message under the rule's name; `failure_hints` adds which setting to change.
- `sbatch` accepts a job that can never start: it stays PENDING with a reason such as `PartitionConfig` (more cores
  than any node has) and the plugin waits forever without a word. `PendingWatch`, started by the workflow's
  `onstart` on Slurm runs, finds this run's jobs in such a state, says which rule asked for what and what the
  partition's nodes have, and cancels them, so the run ends with the rule marked failed instead of hanging. It
  also reads the run's log for refused submissions and says, per rule, which setting to change.

Jobs are matched to rules through the comment the plugin gives every job (`rule_<rule>_wildcards_<values>`) and to
this run through their working directory.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import shlex
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from squidflow.runtime.slurm_plugin import patch_plugin_states

# Pending reasons after which Slurm will never start the job without someone changing the job or the cluster.
# (`Resources`, `Priority`, `QOSGrp*`, `AssocGrp*`... only mean "wait": those jobs start once others end.)
NEVER_STARTS = {
    "PartitionConfig": "the request exceeds what the partition's nodes or limits allow",
    "PartitionNodeLimit": "the job needs more nodes than the partition allows",
    "PartitionTimeLimit": "the job's runtime exceeds the partition's time limit",
    "BadConstraints": "no node of the partition has the requested features or resources",
    "InvalidAccount": "the account is unknown to Slurm",
    "InvalidQOS": "the QOS is unknown or not allowed for the account",
    "QOSMaxCpuPerJobLimit": "the request exceeds the QOS's cores per job",
    "QOSMaxMemoryPerJob": "the request exceeds the QOS's memory per job",
    "QOSMaxGRESPerJob": "the request exceeds the QOS's GPUs per job",
    "QOSMaxWallDurationPerJobLimit": "the runtime exceeds the QOS's time limit",
    "AssocMaxCpuPerJobLimit": "the request exceeds the account's cores per job",
    "AssocMaxWallDurationPerJobLimit": "the runtime exceeds the account's time limit",
}

# Where a rule's request comes from when it is not the profile (profiles/slurm/config.yaml).
CONFIG_KEYS = {
    "featurize": {"cores": "features.threads"},
    "train": {"cores": "training.threads", "memory": "training.mem_mb"},
}
PROFILE = "profiles/slurm/config.yaml"
WATCH_SECONDS_ENV = "SQUIDFLOW_SLURM_WATCH_SECONDS"

log = logging.getLogger("squidflow.runtime.slurm")


@dataclass(frozen=True)
class QueuedJob:
    """One job in `squeue`: its id, the rule and wildcards from its comment, state and pending reason."""

    job_id: str
    rule: str
    wildcards: str
    state: str
    reason: str
    workdir: str


def parse_comment(comment: str) -> tuple[str, str]:
    """(rule, wildcards) from the plugin's job comment `rule_<rule>[_wildcards_<values>]` ('' when not ours)."""
    m = re.fullmatch(r"(?:rule|group)_(\w+?)(?:_wildcards_(.*))?", comment.strip())
    return (m.group(1), m.group(2) or "") if m else ("", "")


def parse_squeue(text: str) -> list[QueuedJob]:
    """Rows of `squeue --noheader --format=%i|%k|%T|%r|%Z`."""
    jobs = []
    for line in text.splitlines():
        parts = line.split("|", 4)
        if len(parts) != 5:
            continue
        job_id, comment, state, reason, workdir = (p.strip() for p in parts)
        rule, wildcards = parse_comment(comment)
        jobs.append(QueuedJob(job_id, rule, wildcards, state, reason, workdir))
    return jobs


def never_starting(jobs: Iterable[QueuedJob], workdir: str | os.PathLike) -> list[QueuedJob]:
    """This run's jobs (submitted by the plugin from `workdir`) that are PENDING for a reason that never clears."""
    here = os.path.realpath(workdir)
    return [
        j
        for j in jobs
        if j.rule and j.state == "PENDING" and j.reason in NEVER_STARTS and os.path.realpath(j.workdir) == here
    ]


def parse_scontrol(text: str) -> list[dict[str, str]]:
    """Records of `scontrol show <node|job|partition> -o` (one line each, key=value separated by spaces)."""
    records = []
    for line in text.splitlines():
        fields = re.findall(r"(\S+?)=(\S*)", line)
        if fields:
            records.append(dict(fields))
    return records


def _gpus(tres: str) -> int:
    """GPUs in a TRES or Gres string such as `cpu=8,mem=4000M,gres/gpu=1` or `gpu:2` / `gpu:a100:2(S:0)`."""
    m = re.search(r"gres/gpu(?::\w+)?=(\d+)", tres) or re.search(r"\bgpu(?::[\w.]+)?:(\d+)", tres)
    return int(m.group(1)) if m else 0


def _mem_mb(value: str) -> int:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGT]?)", value or "")
    if not m:
        return 0
    scale = {"K": 1 / 1024, "": 1, "M": 1, "G": 1024, "T": 1024 * 1024}[m.group(2)]
    return int(float(m.group(1)) * scale)


def job_request(job: dict[str, str]) -> dict[str, int | str]:
    """What a job (a `scontrol show job -o` record) asks for: cores, memory (MB), GPUs, partition."""
    tres = job.get("TRES", "") or job.get("ReqTRES", "")
    mem = re.search(r"mem=([\d.]+[KMGT]?)", tres)
    return {
        "cores": int(job.get("NumCPUs", "0") or 0),
        "memory": _mem_mb(mem.group(1)) if mem else 0,
        "gpus": _gpus(tres + " " + job.get("TresPerJob", "") + " " + job.get("TresPerNode", "")),
        "partition": job.get("Partition", ""),
    }


def largest_node(nodes: list[dict[str, str]], partition: str) -> dict[str, int]:
    """The most cores, memory (MB) and GPUs any single node of `partition` has (each maximised on its own)."""
    members = [n for n in nodes if not partition or partition in n.get("Partitions", "").split(",")]
    return {
        "cores": max((int(n.get("CPUTot", "0") or 0) for n in members), default=0),
        "memory": max((int(n.get("RealMemory", "0") or 0) for n in members), default=0),
        "gpus": max((_gpus(n.get("Gres", "")) for n in members), default=0),
    }


def _fix_for(rule: str, what: str) -> str:
    """How a user lowers one kind of request of `rule`."""
    key = CONFIG_KEYS.get(rule, {}).get(what)
    if what == "gpus":
        return (
            "set SQUIDFLOW_SLURM_GPU_PARTITION to a partition with GPUs, or SQUIDFLOW_SLURM_GPUS=0 to run the "
            "GPU rules on CPUs"
        )
    if what == "cores":
        where = f"`{key}` in your config" if key else f"`cpus_per_task` of {rule} under set-resources in {PROFILE}"
        return f"lower {where}"
    if key:
        return f"lower `{key}` in your config"
    return f"lower SQUIDFLOW_SLURM_MEM_MB or `mem_mb` of {rule} under set-resources in {PROFILE}"


def stuck_message(job: QueuedJob, request: dict, node: dict) -> str:
    """Why `job` will never start and what to change, in one paragraph."""
    where = f" ({job.wildcards})" if job.wildcards else ""
    asks = f"{request['cores']} cores, {request['memory']} MB, {request['gpus']} GPU(s)"
    has = f"{node['cores']} cores, {node['memory']} MB, {node['gpus']} GPU(s)"
    too_big = [w for w in ("cores", "memory", "gpus") if request[w] > node[w]]
    fixes = "; ".join(_fix_for(job.rule, w) for w in too_big) or (
        f"ask your cluster's admins, or change the rule's requests in {PROFILE}"
    )
    return (
        f"rule {job.rule}{where}: Slurm job {job.job_id} can never start: it is PENDING with reason "
        f"{job.reason} ({NEVER_STARTS[job.reason]}). It asks for {asks} in partition "
        f"{request['partition'] or '(default)'}, whose largest node has {has}. Fix: {fixes}. "
        "Cancelled it so that this run ends instead of waiting."
    )


Runner = Callable[[list[str]], str]


def _run(argv: list[str]) -> str:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True).stdout


def check_queue(workdir: str | os.PathLike, run: Runner = _run) -> list[str]:
    """Find this run's never-starting jobs, cancel them, and return one message per job."""
    queued = parse_squeue(run(["squeue", "--me", "--noheader", "--format=%i|%k|%T|%r|%Z"]))
    stuck = never_starting(queued, workdir)
    if not stuck:
        return []
    nodes = parse_scontrol(run(["scontrol", "show", "node", "-o"]))
    messages = []
    for job in stuck:
        record = parse_scontrol(run(["scontrol", "show", "job", "-o", job.job_id]))
        request = job_request(record[0] if record else {})
        messages.append(stuck_message(job, request, largest_node(nodes, str(request["partition"]))))
        run(["scancel", job.job_id])
    return messages


class PendingWatch(threading.Thread):
    """Every `interval` seconds: cancel this run's jobs that Slurm will never start, saying why, and say what to
    change for each rule whose submission `sbatch` refused (read from the run's Snakemake log; see module doc).

    A job is cancelled when two checks in a row see it pending for such a reason, so a reason Slurm sets for a
    moment while it re-reads its configuration is not enough."""

    def __init__(
        self,
        workdir: str | os.PathLike,
        interval: float = 20.0,
        report: Callable[[str], None] | None = None,
        run: Runner = _run,
        log_file: str | os.PathLike | Iterable[str | os.PathLike] | None = None,
    ) -> None:
        super().__init__(name="squidflow-slurm-pending-watch", daemon=True)
        self.workdir, self.interval, self.run_cmd = str(workdir), interval, run
        self.report = report or log.error
        # Snakemake hands `onstart` its log file, or (Snakemake 9) a list of them
        files = [log_file] if isinstance(log_file, (str, os.PathLike)) else list(log_file or [])
        self.log_files = [Path(f) for f in files]
        self.stopped = threading.Event()
        self._seen: set[str] = set()
        self._hinted: set[str] = set()

    def check(self) -> list[str]:
        """One round: the never-starting jobs (cancelled) and new sbatch refusals; returns what it reported."""
        return self.check_queue() + self.check_refusals()

    def check_queue(self) -> list[str]:
        queued = parse_squeue(self.run_cmd(["squeue", "--me", "--noheader", "--format=%i|%k|%T|%r|%Z"]))
        stuck = {j.job_id for j in never_starting(queued, self.workdir)}
        confirmed, self._seen = stuck & self._seen, stuck
        if not confirmed:
            return []

        def only_confirmed(argv: list[str]) -> str:
            out = self.run_cmd(argv)
            if argv[:1] == ["squeue"]:
                out = "\n".join(line for line in out.splitlines() if line.split("|", 1)[0].strip() in confirmed)
            return out

        messages = check_queue(self.workdir, only_confirmed)
        for message in messages:
            self.report(message)
        return messages

    def check_refusals(self, report: Callable[[str], None] | None = None) -> list[str]:
        text = "".join(f.read_text(errors="replace") for f in self.log_files if f.is_file())
        refused = {m.group("rule") for m in _SBATCH_FAILED.finditer(text)} - self._hinted
        if not refused:
            return []
        try:
            nodes = parse_scontrol(self.run_cmd(["scontrol", "show", "node", "-o"]))
        except (OSError, subprocess.SubprocessError):
            nodes = None
        new = [h for h in failure_hints(text, nodes) if h.split(":", 1)[0].removeprefix("rule ") in refused]
        self._hinted |= refused
        for hint in new:
            (report or self.report)(hint)
        return new

    def run(self) -> None:
        while not self.stopped.wait(self.interval):
            try:
                self.check()
            except (OSError, subprocess.SubprocessError) as exc:  # a slow controller must not end the watch
                log.debug("pending watch: %s", exc)


# ------------------------------------------------------------------------------------------- sbatch refusals

_SBATCH_FAILED = re.compile(
    r"Error in rule (?P<rule>\w+):\s*\n\s*message: SLURM sbatch failed\. The error message was '(?P<error>.*?)'\.\s*\n"
    r"\s*sbatch call:\s*\n\s*(?P<call>sbatch [^\n]*)",
    re.S,
)


def sbatch_request(call: str) -> dict[str, int | str]:
    """Cores, memory (MB), GPUs and partition of an `sbatch` command line as the plugin builds it."""
    args = shlex.split(call.split(" --wrap=", 1)[0])
    req: dict[str, int | str] = {"cores": 1, "memory": 0, "gpus": 0, "partition": ""}
    for i, a in enumerate(args):
        nxt = args[i + 1] if i + 1 < len(args) else ""
        if a.startswith("--cpus-per-task="):
            req["cores"] = int(a.split("=", 1)[1])
        elif a == "--mem":
            req["memory"] = int(nxt)
        elif a.startswith("--gpus="):
            req["gpus"] = _gpus("gpu:" + a.split("=", 1)[1].split(":")[-1])
        elif a.startswith("--gres="):
            req["gpus"] = _gpus(a.split("=", 1)[1])
        elif a == "-p":
            req["partition"] = nxt
    return req


def refusal_hint(rule: str, error: str, call: str, nodes: list[dict[str, str]] | None = None) -> str:
    """What to change when `sbatch` refused `rule`'s job with `error` (`nodes`: `scontrol show node` records, to
    say what the partition's largest node has)."""
    req = sbatch_request(call)
    low = error.lower()
    has = ""
    if nodes:
        node = largest_node(nodes, str(req["partition"]))
        has = (
            f" (the largest node of partition {req['partition'] or '(default)'} has {node['cores']} cores, "
            f"{node['memory']} MB, {node['gpus']} GPU(s))"
        )
    if "account" in low:
        fix = "set SQUIDFLOW_SLURM_ACCOUNT to one of your accounts (`sacctmgr show assoc user=$USER format=account`)"
    elif "partition" in low:
        fix = (
            "set SQUIDFLOW_SLURM_PARTITION (CPU jobs) or SQUIDFLOW_SLURM_GPU_PARTITION (featurize, train) to a "
            "partition `sinfo -s` lists"
        )
    elif "time limit" in low:
        fix = f"lower `runtime` of {rule} in {PROFILE} to the partition's limit (`sinfo -o '%P %l'`)"
    elif req["gpus"] and ("gres" in low or "node configuration" in low):
        fix = (
            f"{rule} asks for {req['gpus']} GPU(s) per job{has}: lower SQUIDFLOW_SLURM_GPUS, "
            f"{_fix_for(rule, 'gpus')} (`sinfo -o '%P %G'` shows the GPUs of each partition)"
        )
    elif "memory" in low or "node configuration" in low:
        fix = (
            f"{rule} asks for {req['cores']} cores and {req['memory']} MB{has}: {_fix_for(rule, 'cores')} or "
            f"{_fix_for(rule, 'memory')} to fit a node (`sinfo -o '%P %c %m %G'`)"
        )
    else:
        fix = f"change {rule}'s request in {PROFILE} (the sbatch call is in the log above)"
    return f"rule {rule}: sbatch refused the job: {error}. Fix: {fix}."


def failure_hints(log_text: str, nodes: list[dict[str, str]] | None = None) -> list[str]:
    """One hint per rule whose job `sbatch` refused, from a Snakemake log (first refusal of each rule)."""
    hints: dict[str, str] = {}
    for m in _SBATCH_FAILED.finditer(log_text):
        if m.group("rule") not in hints:
            hints[m.group("rule")] = refusal_hint(m.group("rule"), m.group("error").strip(), m.group("call"), nodes)
    return list(hints.values())


# ------------------------------------------------------------------------------------------- workflow hooks


def _is_slurm_run(workflow) -> bool:
    plugin = getattr(workflow, "executor_plugin", None)
    return getattr(plugin, "name", None) == "slurm"


def _snakemake_logger():
    try:
        from snakemake.logging import logger

        return logger
    except ImportError:  # pragma: no cover - snakemake is what calls us
        return log


def on_start(workflow, log_file: str | os.PathLike | Iterable[str | os.PathLike] | None = None) -> PendingWatch | None:
    """`onstart` of a run: on Slurm, start the watch in the submitting process (jobs run with --no-hooks), and at
    exit report the refusals it has not reported yet (a run can end between two checks). The executor plugin runs as
    it ships, but for the one fix of squidflow.runtime.slurm_plugin (within the plugin versions it was tested on)."""
    if not _is_slurm_run(workflow):
        return None
    patch_plugin_states(warn=_snakemake_logger().warning)  # the plugin as it ships, but for `CANCELLED by <uid>`
    watch = PendingWatch(
        Path.cwd(), float(os.environ.get(WATCH_SECONDS_ENV, "20")), report=_snakemake_logger().error, log_file=log_file
    )
    watch.start()
    atexit.register(watch.check_refusals, report=lambda hint: print(hint, file=sys.stderr))
    return watch
