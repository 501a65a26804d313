"""profiles/slurm and squidflow.runtime.slurm without a cluster: what the profile asks Slurm for, and how Slurm's answers
(a refused sbatch, a job pending forever) become a message naming the rule and the fix.

The same behaviour on a real cluster: tests/e2e/test_slurm.py."""

from __future__ import annotations

import asyncio
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yte
from helpers.runs import SNAKEMAKE, local_rules

from squidflow.runtime import slurm, slurm_plugin

ROOT = Path(__file__).resolve().parents[3]
PROFILE = ROOT / "profiles" / "slurm" / "config.yaml"


def load_profile(monkeypatch, **env: str) -> dict:
    for var in ("ACCOUNT", "PARTITION", "GPU_PARTITION", "GPUS", "MEM_MB"):
        monkeypatch.delenv(f"SQUIDFLOW_SLURM_{var}", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return yte.process_yaml(io.StringIO(PROFILE.read_text()), require_use_yte=True)


def gpu_rules() -> set[str]:
    """Rules whose `resources:` always ask for a GPU (`gpu=1`), read from workflow/rules/*.smk; a rule made with
    `use rule X as Y with:` asks for what X asks (no override of resources here)."""
    found = set()
    for smk in (ROOT / "workflow" / "rules").glob("*.smk"):
        for block in re.split(r"^(?=[ \t]*(?:rule|checkpoint) \w+:)", smk.read_text(), flags=re.M):
            head = re.match(r"[ \t]*(?:rule|checkpoint) (\w+):", block)
            if head and re.search(r"^\s+gpu=1,?\s*$", block, flags=re.M):
                found.add(head.group(1))
    for smk in (ROOT / "workflow" / "rules").glob("*.smk"):
        found |= {new for old, new in USE_RULE.findall(smk.read_text()) if old in found}
    return found


USE_RULE = re.compile(r"^use rule (\w+) as (\w+) with:", flags=re.M)


def test_every_gpu_rule_asks_for_its_gpu_one_way_in_the_gpu_partition(monkeypatch) -> None:
    profile = load_profile(monkeypatch, SQUIDFLOW_SLURM_GPU_PARTITION="gpu")
    assert "software-deployment-method" not in profile, "--sdm conda must stay opt-in: no conda on many clusters"
    assert {
        "featurize",
        "train_classification",
        "train_calibration",
        "train_experiment_classification",
        "train_experiment_calibration",
        "litmus_train_guesser",
    } <= gpu_rules()
    for rule in gpu_rules():
        res = profile["set-resources"].get(rule, {})
        assert res.get("gpu") == 1 and res.get("slurm_partition") == "gpu", (
            f"rule {rule} declares gpu=1: give it `{rule}: *gpu_rule` under set-resources in {PROFILE.name}"
        )
    for rule, res in profile["set-resources"].items():
        assert "gres" not in res and "gpu_model" not in res, f"{rule}: gres/gpu_model and gpu are two ways of asking"
        assert ("gpu" in res) == (rule in gpu_rules()), f"{rule} is not a GPU rule but gets a GPU"
    assert not {"gpu", "gres", "gpu_model"} & set(profile["default-resources"])


def test_account_and_partitions_are_named_once_and_set_from_the_command_line(monkeypatch) -> None:
    unset = load_profile(monkeypatch)
    assert "slurm_account" not in unset["default-resources"] and "slurm_partition" not in unset["default-resources"]
    assert "slurm_partition" not in unset["set-resources"]["train_classification"]
    p = load_profile(
        monkeypatch,
        SQUIDFLOW_SLURM_ACCOUNT="lab",
        SQUIDFLOW_SLURM_PARTITION="short",
        SQUIDFLOW_SLURM_GPU_PARTITION="gpu",
        SQUIDFLOW_SLURM_GPUS="0",
        SQUIDFLOW_SLURM_MEM_MB="2000",
    )
    assert p["default-resources"]["slurm_account"] == "lab" and p["default-resources"]["slurm_partition"] == "short"
    assert p["default-resources"]["mem_mb"] == 2000 and p["set-resources"]["featurize"]["mem_mb"] == 8000
    for rule in ("featurize", "train_classification"):
        assert p["set-resources"][rule]["slurm_partition"] == "gpu" and p["set-resources"][rule]["gpu"] == 0
    same = load_profile(monkeypatch, SQUIDFLOW_SLURM_PARTITION="short")
    assert same["set-resources"]["train_classification"]["slurm_partition"] == "short"


def all_rules() -> set[str]:
    return {
        name
        for smk in (ROOT / "workflow" / "rules").glob("*.smk")
        for name in [
            *re.findall(r"^[ \t]*(?:rule|checkpoint) (\w+):", smk.read_text(), flags=re.M),
            *(new for _, new in USE_RULE.findall(smk.read_text())),
        ]
    }


def test_short_rules_are_grouped_in_the_slurm_profile_only(monkeypatch) -> None:
    """One Slurm job per stage's short rules; downloads (localrules) never grouped, no GPU rule grouped (a group asks
    for the GPUs of its jobs: CPU rules beside a GPU job would hold its GPU idle), the rule that reads the user's
    ratings file alone (a bad file fails that job, not its stage), and no `group-components` (Snakemake 9.27 merges
    components into cached group jobs again at each checkpoint update, and ran training runs twice)."""
    profile = load_profile(monkeypatch)
    groups: dict[str, str] = profile["groups"]
    assert set(groups) <= all_rules(), sorted(set(groups) - all_rules())
    assert not set(groups) & local_rules(ROOT / "workflow" / "rules")
    assert "comparison_metrics" not in groups and "all" not in groups and "run_summary" not in groups
    assert not gpu_rules() & set(groups), sorted(gpu_rules() & set(groups))
    assert "group-components" not in profile
    assert len(set(groups.values())) <= 8
    default = yte.process_yaml(io.StringIO((ROOT / "profiles" / "default" / "config.yaml").read_text()))
    assert "groups" not in default and "group-components" not in default  # local runs are not grouped


def test_default_profile_does_not_override_the_slurm_profile(monkeypatch) -> None:
    """Snakemake always reads profiles/default as the workflow profile, and its keys replace those of `--profile`."""
    default = yte.process_yaml(io.StringIO((ROOT / "profiles" / "default" / "config.yaml").read_text()))
    cluster = load_profile(monkeypatch)
    clash = sorted(k for k in set(default) & set(cluster) if default[k] != cluster[k])
    assert not clash, f"profiles/default sets {clash} differently and would override profiles/slurm"


def test_profile_passes_lint() -> None:
    res = subprocess.run(
        [SNAKEMAKE, "--profile", "profiles/slurm", "--lint"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]


# ------------------------------------------------------------------------------------------ pending forever

SQUEUE = """\
101|rule_featurize_wildcards_efficientnet_lite0_0|PENDING|PartitionConfig|/work/run
102|rule_train_wildcards_classification_SD_BL_0|PENDING|Resources|/work/run
103|rule_featurize_wildcards_efficientnet_lite0_1|PENDING|PartitionConfig|/elsewhere
104|my own job|PENDING|PartitionConfig|/work/run
105|rule_select_frames|RUNNING|None|/work/run
"""
NODES = (
    "NodeName=n1 CPUTot=2 RealMemory=6000 Gres=gpu:2 Partitions=debug,gpu State=IDLE\n"
    "NodeName=n2 CPUTot=64 RealMemory=500000 Gres=(null) Partitions=bigmem State=IDLE\n"
)
JOB = (
    "JobId=101 JobName=x Partition=debug NumCPUs=8 TRES=cpu=8,mem=4000M,node=1,billing=8 "
    "TresPerJob=gres:gpu:1 Comment=rule_featurize_wildcards_efficientnet_lite0_0\n"
)


def test_only_this_runs_jobs_pending_for_good_count() -> None:
    stuck = slurm.never_starting(slurm.parse_squeue(SQUEUE), "/work/run")
    assert [(j.job_id, j.rule, j.wildcards) for j in stuck] == [("101", "featurize", "efficientnet_lite0_0")]


def test_request_and_largest_node_come_from_scontrol() -> None:
    req = slurm.job_request(slurm.parse_scontrol(JOB)[0])
    assert req == {"cores": 8, "memory": 4000, "gpus": 1, "partition": "debug"}
    assert slurm.largest_node(slurm.parse_scontrol(NODES), "debug") == {"cores": 2, "memory": 6000, "gpus": 2}
    assert slurm.largest_node(slurm.parse_scontrol(NODES), "bigmem")["cores"] == 64


class FakeSlurm:
    """squeue/scontrol/scancel answering from the texts above; records cancellations."""

    def __init__(self) -> None:
        self.cancelled: list[str] = []

    def __call__(self, argv: list[str]) -> str:
        if argv[0] == "squeue":
            return "\n".join(line for line in SQUEUE.splitlines() if line.split("|")[0] not in self.cancelled)
        if argv[:3] == ["scontrol", "show", "node"]:
            return NODES
        if argv[:3] == ["scontrol", "show", "job"]:
            return JOB
        if argv[0] == "scancel":
            self.cancelled.append(argv[1])
            return ""
        raise AssertionError(argv)


def test_watch_cancels_on_the_second_sighting_with_rule_reason_and_fix() -> None:
    fake, said = FakeSlurm(), []
    watch = slurm.PendingWatch("/work/run", interval=0.01, report=said.append, run=fake)
    assert watch.check() == [] and fake.cancelled == []  # first sighting: could be a passing state
    messages = watch.check()
    assert fake.cancelled == ["101"] and said == messages and len(messages) == 1
    msg = messages[0]
    assert msg.startswith("rule featurize (efficientnet_lite0_0): Slurm job 101 can never start")
    assert "reason PartitionConfig" in msg and "8 cores, 4000 MB, 1 GPU(s)" in msg
    assert "largest node has 2 cores, 6000 MB, 2 GPU(s)" in msg and "lower `features.threads` in your config" in msg
    assert watch.check() == []


# ------------------------------------------------------------------------------------------ sbatch refused

REFUSED_LOG = """\
Error in rule featurize:
    message: SLURM sbatch failed. The error message was 'sbatch: error: Batch job submission failed: Requested node configuration is not available'.
    sbatch call:
        sbatch --parsable --job-name 1b2 --output '/w/.snakemake/slurm_logs/rule_featurize/efficientnet_lite0_0/%j.log' --export=ALL --comment rule_featurize_wildcards_efficientnet_lite0_0 -A squidlab -p debug -t 240 --mem 4000 --cpus-per-task=1 -D /w --gpus=3 --wrap="python -m snakemake"

    jobid: 7
    output: results/features/efficientnet_lite0/shard0.parquet
Error in rule make_training_cache:
    message: SLURM sbatch failed. The error message was 'sbatch: error: Memory specification can not be satisfied
sbatch: error: Batch job submission failed: Requested node configuration is not available'.
    sbatch call:
        sbatch --parsable --job-name 1b2 --export=ALL --comment rule_make_training_cache_wildcards_SD -A squidlab -p debug -t 120 --mem 400000 --ntasks=1 --cpus-per-task=1 -D /w --wrap="python -m snakemake"

Error in rule video_manifest:
    message: SLURM sbatch failed. The error message was 'sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified'.
    sbatch call:
        sbatch --parsable --comment rule_video_manifest -A nolab -p debug --mem 4000 --cpus-per-task=2 --wrap="x"
"""


def test_refused_submissions_get_one_hint_per_rule() -> None:
    hints = slurm.failure_hints(REFUSED_LOG + REFUSED_LOG)
    assert len(hints) == 3
    gpu, mem, account = hints
    assert gpu.startswith(
        "rule featurize: sbatch refused the job: sbatch: error: Batch job submission failed: "
        "Requested node configuration is not available. Fix: featurize asks for 3 GPU(s)"
    )
    assert "SQUIDFLOW_SLURM_GPU_PARTITION" in gpu and "SQUIDFLOW_SLURM_GPUS=0" in gpu
    assert "asks for 1 cores and 400000 MB" in mem and "mem_mb` of make_training_cache" in mem
    assert "SQUIDFLOW_SLURM_ACCOUNT" in account


def test_watch_reports_refusals_from_the_run_log_once(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text(REFUSED_LOG.split("Error in rule make_training_cache")[0])
    said: list[str] = []
    watch = slurm.PendingWatch("/work/run", report=said.append, run=FakeSlurm(), log_file=log)
    assert len(watch.check_refusals()) == 1
    assert "(the largest node of partition debug has 2 cores, 6000 MB, 2 GPU(s)): lower SQUIDFLOW_SLURM_GPUS" in said[0]
    log.write_text(REFUSED_LOG)
    assert len(watch.check_refusals()) == 2 and len(said) == 3


@pytest.mark.parametrize(
    "comment,expected",
    [
        ("rule_train_wildcards_classification_SD_BL_0", ("train", "classification_SD_BL_0")),
        ("rule_all", ("all", "")),
        ("group_demo", ("demo", "")),
        ("someone else's", ("", "")),
    ],
)
def test_comments_name_rule_and_wildcards(comment: str, expected: tuple[str, str]) -> None:
    assert slurm.parse_comment(comment) == expected


def test_a_job_cancelled_by_someone_is_seen_as_cancelled_by_the_plugin() -> None:
    """`sacct` says `CANCELLED by 0`; the plugin as it ships (2.8.0) reads it as no failed state and keeps waiting
    for such a job for ever (docs/upstream.md); patched, it sees CANCELLED."""
    import logging

    import snakemake_executor_plugin_slurm as plugin

    command = "printf '12|CANCELLED by 0\\n13|COMPLETED\\n'"
    shipped, _ = asyncio.run(plugin.query_job_status(command, logging.getLogger("test")))
    if shipped == {"12": "CANCELLED", "13": "COMPLETED"} and not getattr(
        plugin.query_job_status, "squidflow_normalised", False
    ):
        pytest.fail("the plugin reads `CANCELLED by <uid>` itself now: drop patch_plugin_states (docs/upstream.md)")
    slurm_plugin.patch_plugin_states()
    assert slurm_plugin.patch_plugin_states() is False  # once per process
    states, _ = asyncio.run(plugin.query_job_status(command, logging.getLogger("test")))
    assert states == {"12": "CANCELLED", "13": "COMPLETED"}


def test_outside_the_tested_plugin_versions_nothing_is_patched_and_a_warning_says_so_once(monkeypatch) -> None:
    """A plugin newer (or older) than the versions in squidflow.runtime.upstream.TESTED runs as it ships: one warning per process
    names the version and the tested range, and its status query is left alone."""
    import types

    async def query_job_status(command, logger):
        return {"1": "CANCELLED by 0"}, 0.0

    from squidflow.runtime import upstream

    monkeypatch.setattr(upstream, "_warned", set())
    low, high = upstream.TESTED[slurm_plugin.PLUGIN]
    said: list[str] = []
    for version in ("9.0.0", "9.0.1", "0.1"):
        module = types.SimpleNamespace(query_job_status=query_job_status)
        assert slurm_plugin.patch_plugin_states(module, version=version, warn=said.append) is False
        assert module.query_job_status is query_job_status
    assert len(said) == 1 and "9.0.0 is outside" in said[0] and f"({low} to {high})" in said[0], said
    module = types.SimpleNamespace(query_job_status=query_job_status)
    assert slurm_plugin.patch_plugin_states(module, version=high, warn=said.append) is True
    assert asyncio.run(module.query_job_status("", None))[0] == {"1": "CANCELLED"}
    assert len(said) == 1


def test_a_job_stopped_with_sigterm_leaves_no_half_written_file(tmp_path: Path) -> None:
    """Slurm stops a cancelled job with SIGTERM (then SIGKILL after KillWait): the script's half-written temporary
    file beside its output is removed on the way out."""
    code = (
        "import time\n"
        "from squidflow.runtime.logs import setup\n"
        "from squidflow.contracts.io import atomic_path\n"
        "setup()\n"
        f"with atomic_path({str(tmp_path / 'out.parquet')!r}) as tmp:\n"
        "    tmp.write_text('half')\n"
        "    print('writing', flush=True)\n"
        "    time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    proc.terminate()
    assert proc.wait(timeout=30) == 128 + 15
    assert list(tmp_path.iterdir()) == []
