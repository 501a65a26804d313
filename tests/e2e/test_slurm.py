"""The Slurm profile on a real single-node Slurm cluster (tests/helpers/slurm_cluster.py): the small demo submitted through
`snakemake --profile profiles/slurm`, as a researcher would, with one injected bad input and one job cancelled
mid-run; then the fix and the rerun. Every assertion is about that one shared run, so the cluster part stays short.

The profile groups the short rules of a stage into one Slurm job (`groups:` in profiles/slurm/config.yaml): a
Slurm job is matched to the rules it ran through its log (.snakemake/slurm_logs/.../<jobid>.log), not its comment.

The executor plugin runs as it ships (its job-step executor: `srun` and a Snakemake per rule inside each job), with
one fix that squidflow keeps because the plugin as it ships is wrong, not slow (docs/upstream.md):
squidflow.runtime.slurm_plugin.patch_plugin_states, which `test_cancelled_job_leaves_no_half_written_output_and_reruns`
needs (without it the run waits for the cancelled job for ever: `sacct` says `CANCELLED by <uid>`).

Requests the cluster can never satisfy are tried last, on copies of the finished run.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from helpers.figures import figure
from helpers.runs import SMALL_CONFIGS, SNAKEMAKE, local_rules, planned_jobs
from helpers.slurm_cluster import SlurmCluster, start_cluster, why_unavailable
from helpers.tools import compare_results

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = SMALL_CONFIGS
GPU_RULES = {"featurize", "train_experiment_classification", "train_experiment_calibration", "litmus_train_guesser"}
# the small demo's rules that declare gpu=1 (training.runs_per_job: experiment, the default: a training job is every
# run of one experiment)
LOG_FOLDER = {"train_experiment_classification": "train", "train_experiment_calibration": "train"}  # each run's log:
# logs/train/<run>.log
RUN_TIMEOUT = 3600  # seconds; `timeout -k` around every cluster run, so a hang fails instead of blocking CI
STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$", flags=re.M)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster():
    reason = why_unavailable()
    if reason:
        pytest.skip(reason)
    c = start_cluster()
    yield c
    c.stop()
    shutil.rmtree(c.root, ignore_errors=True)


def submit(
    cluster: SlurmCluster, directory: Path, *args: str, timeout: int = RUN_TIMEOUT, **env: str
) -> subprocess.CompletedProcess:
    """`snakemake --profile profiles/slurm` for the small demo in `directory`, as the README shows it."""
    return cluster.submit(ROOT, directory, CONFIGS, *args, timeout=timeout, **env)


def output_of(res: subprocess.CompletedProcess) -> str:
    return res.stdout + res.stderr


@dataclass
class ClusterRun:
    directory: Path
    first: subprocess.CompletedProcess  # with the bad input and the cancelled job
    planned_rerun: Counter  # what `snakemake -n` plans after the fix
    missing_before_rerun: set[str]  # result files absent after the first run
    second: subprocess.CompletedProcess  # after the fix
    cancelled: dict[str, str]  # the sacct row of the training run cancelled mid-run
    cancelled_runs: list[Path]  # the run folders of the training runs that had started in it
    cancelled_outputs_after_first: list[Path]
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def logs(self) -> str:
        return output_of(self.first) + output_of(self.second)


def train_logs_of(directory: Path, job_id: str) -> list[Path]:
    """The `train` logs (logs/train/...) whose GPU slot line names Slurm job `job_id`: the runs that job started."""
    return sorted(
        log
        for log in (directory / "logs" / "train").rglob("*.log")
        if f"Slurm job {job_id})" in log.read_text(errors="replace")
    )


def _cancel_a_running_train_job(cluster: SlurmCluster, directory: Path, done: threading.Event, found: dict) -> None:
    """Wait for a `train` group job to have started a training run, then `scancel` it (as a researcher or a
    preemption would)."""
    while not done.is_set():
        try:  # a busy slurmctld (squeue times out) or a log replaced while read: look again
            rows = cluster.queue()
            for row in rows:
                if (
                    row["Comment"].startswith("rule_train_")
                    and row["State"] == "RUNNING"
                    and train_logs_of(directory, row["JobID"])
                ):
                    time.sleep(1.0)
                    cluster.cmd("scancel", row["JobID"])
                    found.update(row)
                    return
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            print(f"canceller: {e}")
        time.sleep(0.3)


def log_seconds(text: str) -> float:
    """Seconds from the first timestamp Snakemake logs (`[Wed Nov 25 13:46:25 2026]`) to the last."""
    stamps = [time.mktime(time.strptime(" ".join(s.split()), "%a %b %d %H:%M:%S %Y")) for s in STAMP.findall(text)]
    return max(stamps) - min(stamps) if stamps else float("nan")


@pytest.fixture(scope="module")
def cluster_run(cluster: SlurmCluster, tmp_path_factory: pytest.TempPathFactory) -> ClusterRun:
    directory = tmp_path_factory.mktemp("slurm_run")
    bad = directory / "ratings_with_wrong_columns.csv"
    bad.write_text("query,candidate,rating\nq1,c1,2\n")
    seconds = {}
    done, cancelled = threading.Event(), {}
    canceller = threading.Thread(
        target=_cancel_a_running_train_job, args=(cluster, directory, done, cancelled), daemon=True
    )
    canceller.start()
    t0 = time.monotonic()
    first = submit(cluster, directory, "--verbose", "--config", f'comparison={{"ratings": "{bad}"}}')
    seconds["first run"] = time.monotonic() - t0
    seconds["first run, first log line to last"] = log_seconds(output_of(first))
    done.set()
    canceller.join(5)

    # the runs the cancelled job had started: logs/train/<experiment>/<set>/<method>/seed<k>.log
    runs = (
        [
            directory / "results" / "runs" / log.relative_to(directory / "logs" / "train").with_suffix("")
            for log in train_logs_of(directory, cancelled["JobID"])
        ]
        if cancelled
        else []
    )
    outputs = [run / name for run in runs for name in ("predictions.parquet", "metrics.json", "train.log")]
    after_first = [p for run in runs for p in run.glob("*")]
    missing = {str(p.relative_to(directory)) for p in outputs if not p.exists()}
    dry = subprocess.run(
        [SNAKEMAKE, "-n", "--directory", str(directory), "--configfile", *map(str, CONFIGS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    t0 = time.monotonic()
    second = submit(cluster, directory, "--verbose")
    seconds["rerun after the fix"] = time.monotonic() - t0
    figure("Slurm, small config: " + "; ".join(f"{k} {v:.0f} s" for k, v in seconds.items()))
    return ClusterRun(
        directory, first, planned_jobs(output_of(dry)), missing, second, cancelled, runs, after_first, seconds
    )


def sacct_by_comment(cluster: SlurmCluster) -> dict[str, list[dict[str, str]]]:
    rows: dict[str, list[dict[str, str]]] = {}
    for row in cluster.jobs():
        if row["Comment"].startswith("rule_"):
            rows.setdefault(row["Comment"], []).append(row)
    return rows


JOB_BLOCK = re.compile(r"^(?:local)?(?:rule|checkpoint) (\w+):\n((?: +.*\n)*)", flags=re.M)


def rules_by_job(directory: Path) -> dict[str, list[str]]:
    """Slurm job id -> the rules it ran (a group job runs several), one entry per Snakemake job, from the job's log
    (.snakemake/slurm_logs/<rule_or_group>/[<wildcards>/]<jobid>.log). The Snakemake of the job and the one the
    plugin's job step starts for each rule both print the rule's block: a job is counted once (rule and outputs)."""
    found = {}
    for log in (directory / ".snakemake" / "slurm_logs").rglob("*.log"):
        if log.stem.isdigit():
            seen = {}
            for rule, body in JOB_BLOCK.findall(log.read_text(errors="replace")):
                output = re.search(r"^ +output: (.*)$", body, flags=re.M)
                seen.setdefault((rule, output.group(1) if output else body), rule)
            found[log.stem] = list(seen.values())
    return found


# ------------------------------------------------------------------------------------------------- the whole DAG


def test_whole_dag_finishes_and_every_job_completed_in_sacct(cluster: SlurmCluster, cluster_run: ClusterRun) -> None:
    assert cluster_run.second.returncode == 0, output_of(cluster_run.second)[-5000:]
    again = subprocess.run(
        [SNAKEMAKE, "-n", "--directory", str(cluster_run.directory), "--configfile", *map(str, CONFIGS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Nothing to be done" in output_of(again), output_of(again)[-3000:]
    by_comment = sacct_by_comment(cluster)
    submitted = re.findall(r"has been submitted with SLURM jobid (\d+)", cluster_run.logs)
    accounted = {row["JobIDRaw"]: row for rows in by_comment.values() for row in rows}
    assert submitted and set(submitted) <= set(accounted), "jobs the plugin submitted are missing from sacct"
    # crowd_comparison runs only when comparison.ratings is set, which only the first run does (with the bad file):
    # it stopped there on that file, as comparison_metrics did, and the second run plans no such job.
    only_first = {"rule_crowd_comparison"}
    assert all(by_comment.get(c) and all(r["State"] != "COMPLETED" for r in by_comment[c]) for c in only_first)
    not_completed = {c for c, rows in by_comment.items() if not any(r["State"] == "COMPLETED" for r in rows)}
    assert not not_completed - only_first, f"jobs never COMPLETED: {sorted(not_completed - only_first)}"
    failed = sorted(
        (r["Comment"], r["State"].split()[0]) for rows in by_comment.values() for r in rows if r["State"] != "COMPLETED"
    )
    assert failed == sorted(
        [
            ("rule_comparison_metrics", "FAILED"),
            ("rule_crowd_comparison", "FAILED"),
            (cluster_run.cancelled["Comment"], "CANCELLED"),
        ]
    )
    ran = rules_by_job(cluster_run.directory)
    assert set(submitted) <= set(ran), "a submitted job left no Slurm log"
    rules = {rule for job in submitted for rule in ran[job]} - {"all"} - {c.removeprefix("rule_") for c in only_first}
    fresh = subprocess.run(
        [SNAKEMAKE, "-n", "--directory", str(cluster_run.directory / "fresh"), "--configfile", *map(str, CONFIGS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    local = local_rules(ROOT / "workflow" / "rules")
    assert local and rules.isdisjoint(local), f"localrules were submitted: {sorted(rules & local)}"
    assert rules == set(planned_jobs(output_of(fresh))) - {"all"} - local
    assert all(
        r["Account"] == cluster.account and r["Partition"] == cluster.partition
        for rows in by_comment.values()
        for r in rows
    )


def test_short_rules_run_grouped_and_the_plugin_runs_them_as_it_ships(cluster_run: ClusterRun) -> None:
    """The profile's groups: a stage's short rules run in one Slurm job (the small DAG: 76 Snakemake jobs in 12 Slurm
    jobs, the localrules aside), and inside every Slurm job the plugin's own job-step executor runs them (no squidflow
    patch: `--executor slurm-jobstep` on the job's Snakemake command line). The first run's time, first log line to
    last, is printed (benchmarks/dag.py compares it with a local run of the same config)."""
    first = output_of(cluster_run.first)
    submitted = re.findall(r"has been submitted with SLURM jobid (\d+)", first)
    ran = rules_by_job(cluster_run.directory)
    jobs = sum(len(ran[job]) for job in submitted)
    assert len(submitted) * 2 <= jobs, f"{len(submitted)} Slurm jobs for {jobs} Snakemake jobs: groups not in effect"
    assert max(len(ran[job]) for job in submitted) >= 20
    for log in (cluster_run.directory / ".snakemake" / "slurm_logs").rglob("*.log"):
        commands = re.findall(r"^ *Command: (.*)$", log.read_text(errors="replace"), flags=re.M)
        assert commands and "--executor slurm-jobstep" in commands[0], f"{log}: {commands[:1]}"
    figure(
        f"Slurm, small config, first run (plugin as it ships): {jobs} Snakemake jobs in {len(submitted)} Slurm "
        f"jobs, {log_seconds(first):.0f} s from its first log line to its last"
    )


def test_results_equal_a_local_run_with_the_same_seeds(cluster_run: ClusterRun, small_workflow) -> None:
    assert cluster_run.second.returncode == 0
    problems = compare_results.compare(small_workflow.directory, cluster_run.directory)
    assert not problems, "\n".join(problems[:30])


def test_jobs_run_in_the_projects_venv(cluster_run: ClusterRun) -> None:
    """No conda here: the profile's default runs every job with the Python that submitted it (.venv)."""
    logs = list((cluster_run.directory / ".snakemake" / "slurm_logs").rglob("*.log"))
    assert logs
    for log in logs[:5]:
        text = log.read_text()
        prefixes = {sys.prefix, str(Path(sys.prefix).resolve())}  # .venv may be a link to a shared venv
        assert any(f"Command: {p}/lib/" in text for p in prefixes) and "Conda environments: ignored" in text, log


def test_dry_run_shows_what_each_job_asks_for(cluster: SlurmCluster, tmp_path: Path) -> None:
    """The README's check before submitting: `snakemake --profile profiles/slurm -n` lists every job's request."""
    res = subprocess.run(
        [
            SNAKEMAKE,
            "--profile",
            "profiles/slurm",
            "-n",
            "--directory",
            str(tmp_path),
            "--configfile",
            *map(str, CONFIGS),
        ],
        cwd=ROOT,
        env=cluster.profile_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = output_of(res)
    assert res.returncode == 0, out[-3000:]
    # a group's jobs are listed indented under `Group job <group>`
    blocks = re.findall(r"^ *rule (\w+):\n(?: +.*\n)*? +resources: ([^\n]*)", out, flags=re.M)
    assert {rule for rule, _ in blocks} >= GPU_RULES | {"make_demo_videos"}
    for rule, resources in blocks:
        assert f"slurm_account={cluster.account}" in resources and f"slurm_partition={cluster.partition}" in resources
        assert ("gpu=1" in resources) == (rule in GPU_RULES), (rule, resources)
    assert not cluster.queue() and "Job stats:" in out and "Group job judgments" in out


def test_a_second_cluster_starts_beside_and_stops_only_its_own_daemons(cluster: SlurmCluster) -> None:
    other = start_cluster(gpus=0)
    try:
        assert other.cmd("sinfo", "--noheader", "--format=%T").stdout.strip() == "idle"
        assert set(other.pids.values()).isdisjoint(cluster.pids.values())
    finally:
        other.stop()
        shutil.rmtree(other.root, ignore_errors=True)
    assert all(p.poll() is not None for p in other.daemons.values())
    assert all(p.poll() is None for p in cluster.daemons.values())
    assert cluster.cmd("sinfo", "--noheader", "--format=%T").stdout.strip() in {"idle", "mixed", "allocated"}


# ------------------------------------------------------------------------------------------------- GPUs


def sbatch_calls(text: str) -> dict[str, list[str]]:
    """The plugin's `sbatch call:` lines (its debug log, --verbose), per rule or group: `rule_<rule>`, or
    `group_<group>_<its rules>` for a group job (the folder of its log under .snakemake/slurm_logs)."""
    calls: dict[str, list[str]] = {}
    for call in re.findall(r"sbatch call: (sbatch [^\n]*)", text):
        m = re.search(r"slurm_logs/((?:rule|group)_[^/' ]+)", call)
        assert m, call
        calls.setdefault(m.group(1), []).append(call.split(" --wrap=")[0])
    return calls


def test_gpu_rules_ask_for_one_gpu_one_way_and_cpu_rules_for_none(cluster_run: ClusterRun) -> None:
    """featurize, the guesser and each training run ask for one GPU per job; every other job, group or not, for
    none (no GPU rule is grouped)."""
    calls = sbatch_calls(cluster_run.logs)
    gpu_jobs = {f"rule_{rule}" for rule in GPU_RULES}
    assert gpu_jobs <= set(calls) and len(calls) > len(gpu_jobs)
    for name, lines in calls.items():
        for line in lines:
            ways = re.findall(r"--gpus=\S+|--gres=\S*gpu\S*|--gpus-per-\S+|--cpus-per-gpu\S*", line)
            if name in gpu_jobs:
                assert ways == ["--gpus=1"], f"{name}: {line}"
            else:
                assert ways == [], f"{name} asks for a GPU but runs no GPU rule: {line}"


SLOT = re.compile(r"GPU slot: device (\S+) \(CUDA_VISIBLE_DEVICES=(\S+), Slurm job (\d+)\)")


def test_gpu_jobs_take_the_device_slurm_gave_them_and_run_side_by_side(
    cluster: SlurmCluster, cluster_run: ClusterRun
) -> None:
    accounted = {r["JobIDRaw"]: r for r in cluster.jobs()}
    slots = {}
    folders = sorted({LOG_FOLDER.get(rule, rule) for rule in GPU_RULES})
    logs = [log for folder in folders for log in (cluster_run.directory / "logs" / folder).rglob("*.log")]
    for log in logs:
        found = SLOT.findall(log.read_text())
        assert found, f"{log}: no GPU slot line"
        device, visible, job_id = found[-1]
        assert device == visible and device in {str(i) for i in range(cluster.gpus)}, log
        assert re.search(r"gres/gpu=[12]\b", accounted[job_id]["AllocTRES"]), accounted[job_id]
        slots[job_id] = device
    assert len(slots) >= 2

    def interval(job_id: str) -> tuple[str, str]:
        return accounted[job_id]["Start"], accounted[job_id]["End"]

    overlapping = [
        (a, b)
        for a in slots
        for b in slots
        if a < b and interval(a)[0] < interval(b)[1] and interval(b)[0] < interval(a)[1]
    ]
    assert overlapping, "no two GPU jobs ran at the same time"
    assert all(slots[a] != slots[b] for a, b in overlapping), [(a, b, slots[a], slots[b]) for a, b in overlapping]


# ------------------------------------------------------------------------------------------------- failures


def test_failed_job_is_reported_with_its_log_and_the_others_finish(cluster_run: ClusterRun) -> None:
    first = output_of(cluster_run.first)
    assert cluster_run.first.returncode != 0
    block = first.split("Error in rule comparison_metrics:", 1)[1][:3000]
    assert "logs/comparison_metrics/metrics.log" in block
    slurm_log = re.search(r"(\S+/slurm_logs/rule_comparison_metrics/\d+\.log)", block)
    assert slurm_log and Path(slurm_log.group(1)).exists(), block
    # the rule's log, as Snakemake shows it (the rerun after the fix has since overwritten the file): the bad file
    # named with its line and the fix, not a traceback
    assert "ratings_with_wrong_columns.csv line 1: missing column(s) query_id, candidate_id, annot1, annot2" in block, (
        block
    )
    assert "comparison.ratings" in block and "failed with a bug" not in block, block
    # independent jobs went on (--keep-going): the judgments' figure and the training tables exist
    assert "results/figures/fig3_judgments.png" not in cluster_run.missing_before_rerun
    assert (cluster_run.directory / "results" / "figures" / "fig3_judgments.png").exists()


def test_rerun_after_the_fix_runs_only_what_is_missing(cluster_run: ClusterRun) -> None:
    planned = cluster_run.planned_rerun
    assert planned["comparison_metrics"] == 1, planned
    # one training job again: the cancelled one, every run of its experiment (the runs it had started among them;
    # training.runs_per_job: experiment, the default)
    assert sum(n for rule, n in planned.items() if rule.startswith("train_")) == 1, planned
    assert cluster_run.cancelled_runs and len({run.parents[2] for run in cluster_run.cancelled_runs}) == 1, (
        cluster_run.cancelled_runs
    )
    for upstream in (
        "make_demo_videos",
        "extract_frames",
        "featurize",
        "select_frames",
        "simulate_panel",
        "comparison_sets",
        "make_training_cache",
        "training_sets",
    ):
        assert upstream not in planned, f"{upstream} finished in the first run but would rerun: {planned}"
    assert planned_jobs(output_of(cluster_run.second)) == planned


def test_cancelled_job_leaves_no_half_written_output_and_reruns(cluster: SlurmCluster, cluster_run: ClusterRun) -> None:
    """`scancel` of a running training job: the run reports it failed, goes on and ends; the next run reruns it.
    Needs squidflow.runtime.slurm_plugin.patch_plugin_states: the plugin as it ships (2.8.0) reads `sacct`'s
    `CANCELLED by <uid>` as no failed state and waits for the job for ever (docs/upstream.md)."""
    assert cluster_run.cancelled, "no train job was seen running to cancel"
    assert re.search(r"Error in rule train_experiment_(classification|calibration):", output_of(cluster_run.first))
    assert cluster_run.cancelled_runs and cluster_run.cancelled_outputs_after_first == [], (
        cluster_run.cancelled_outputs_after_first
    )
    rows = sacct_by_comment(cluster)[cluster_run.cancelled["Comment"]]
    cancelled = [r for r in rows if r["State"].split()[0] == "CANCELLED"]
    assert [r["JobIDRaw"] for r in cancelled] == [cluster_run.cancelled["JobID"]], rows
    ran_again = [
        job
        for job, rules in rules_by_job(cluster_run.directory).items()
        if int(job) > int(cluster_run.cancelled["JobID"]) and any(r.startswith("train_") for r in rules)
    ]
    assert ran_again and all(r["State"] == "COMPLETED" for r in rows if r["JobIDRaw"] in ran_again)
    assert all(
        (run / name).exists()
        for run in cluster_run.cancelled_runs
        for name in ("predictions.parquet", "metrics.json", "train.log")
    )


def test_resume_after_the_submitting_snakemake_is_killed(cluster: SlurmCluster, small_workflow, tmp_path: Path) -> None:
    """The login session is lost: the submitting Snakemake is killed (SIGKILL, whole session) while a training job
    runs. Its Slurm job runs on to its end; then, as the README says, `snakemake --unlock` and the same command again
    finish the run, and nothing is left to do. On a copy of the finished local run (the same configs), with one
    experiment's training job forced to run again on the cluster."""
    directory = tmp_path / "copy"
    shutil.copytree(
        small_workflow.directory,
        directory,
        symlinks=True,
        ignore=shutil.ignore_patterns("slurm_logs", "fresh", "locks"),
    )
    proc = cluster.start_submit(ROOT, directory, CONFIGS, "--forcerun", "train_experiment_classification", timeout=900)
    killed = None
    deadline = time.monotonic() + 600
    while killed is None and proc.poll() is None and time.monotonic() < deadline:
        try:
            killed = next(
                (
                    row
                    for row in cluster.queue()
                    if row["Comment"].startswith("rule_train_") and row["State"] == "RUNNING"
                ),
                None,
            )
        except (RuntimeError, OSError, subprocess.TimeoutExpired):
            pass
        time.sleep(0.5)
    assert killed, f"no training job ran: {''.join(proc.communicate())[-3000:] if proc.poll() is not None else ''}"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    cluster.wait_until_empty(timeout=600)  # the killed run's job ends on its own
    unlock = subprocess.run(
        [SNAKEMAKE, "--unlock", "--directory", str(directory), "--configfile", *map(str, CONFIGS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert unlock.returncode == 0, output_of(unlock)[-3000:]
    again = submit(cluster, directory, timeout=900)
    assert again.returncode == 0, output_of(again)[-5000:]
    done = subprocess.run(
        [SNAKEMAKE, "-n", "--directory", str(directory), "--configfile", *map(str, CONFIGS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Nothing to be done" in output_of(done), output_of(done)[-3000:]
    states = {r["JobIDRaw"]: r["State"] for r in cluster.jobs()}
    assert states[killed["JobID"]] == "COMPLETED", states[killed["JobID"]]


# ------------------------------------------------------------------------------------------------- impossible requests


def _copy(run: ClusterRun, tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(run.directory, copy, symlinks=True, ignore=shutil.ignore_patterns("slurm_logs", "fresh", "locks"))
    return copy


def test_more_gpus_than_exist_stops_with_slurms_message_and_the_fix(
    cluster: SlurmCluster, cluster_run: ClusterRun, tmp_path: Path
) -> None:
    directory = _copy(cluster_run, tmp_path)
    t0 = time.monotonic()
    res = submit(
        cluster,
        directory,
        "--forcerun",
        "featurize",
        "results/features/efficientnet_lite0/shard0.parquet",
        timeout=300,
        SQUIDFLOW_SLURM_GPUS=str(cluster.gpus + 1),
    )
    out = output_of(res)
    assert res.returncode != 0 and time.monotonic() - t0 < 240, out[-3000:]
    assert "Error in rule featurize:" in out and "Requested node configuration is not available" in out, out[-3000:]
    assert re.search(
        r"rule featurize: sbatch refused the job: .*Fix: featurize asks for 3 GPU\(s\) per job \(the "
        r"largest node of partition debug has 2 cores, \d+ MB, 2 GPU\(s\)\): lower SQUIDFLOW_SLURM_GPUS, "
        r".*SQUIDFLOW_SLURM_GPU_PARTITION",
        out,
    ), out[-3000:]


def test_job_that_can_never_start_is_cancelled_naming_the_rule_and_reason(
    cluster: SlurmCluster, cluster_run: ClusterRun, tmp_path: Path
) -> None:
    directory = _copy(cluster_run, tmp_path)
    t0 = time.monotonic()
    # eight cores from the config (`--cores` caps a job's threads: it must allow them)
    res = submit(
        cluster,
        directory,
        "results/features/efficientnet_lite0/shard0.parquet",
        "--cores",
        "8",
        "--forcerun",
        "featurize",
        "--config",
        'features={"threads": 8}',
        timeout=300,
    )
    out = output_of(res)
    assert res.returncode != 0 and time.monotonic() - t0 < 240, out[-3000:]
    assert re.search(
        r"rule featurize \(efficientnet_lite0_0\): Slurm job \d+ can never start: it is PENDING with "
        r"reason PartitionConfig .* asks for 8 cores.* largest node has 2 cores.* Fix: lower "
        r"`features.threads` in your config",
        out,
    ), out[-3000:]
    assert not cluster.queue()
