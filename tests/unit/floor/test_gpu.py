"""The GPU slot allocator: concurrent jobs never share a device, and a killed job's slot comes back."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from squidflow.runtime.gpu import Slot, detect_devices, gpu_slot, slot_status

JOB = textwrap.dedent(
    """
    import json, os, sys, time
    from squidflow.runtime.gpu import gpu_slot
    lock_dir, out, hold = sys.argv[1], sys.argv[2], float(sys.argv[3])
    with gpu_slot(lock_dir, poll_s=0.02) as slot:
        start = time.time()
        visible = os.environ["CUDA_VISIBLE_DEVICES"]
        time.sleep(hold)
        end = time.time()
    with open(out, "w") as fh:
        json.dump({"device": slot.device_id, "visible": visible, "torch": slot.torch_device, "start": start, "end": end}, fh)
    """
)


def _env(devices: str) -> dict[str, str]:
    env = dict(os.environ)
    env["SQUIDFLOW_GPU_DEVICES"] = devices
    return env


def test_four_concurrent_jobs_over_two_gpus_never_share(tmp_path: Path) -> None:
    lock_dir = tmp_path / "slots"
    procs, outs = [], []
    for i in range(4):
        out = tmp_path / f"job{i}.json"
        outs.append(out)
        procs.append(subprocess.Popen([sys.executable, "-c", JOB, str(lock_dir), str(out), "0.6"], env=_env("0,1")))
    for p in procs:
        assert p.wait(timeout=60) == 0
    jobs = [json.loads(o.read_text()) for o in outs]
    assert {j["device"] for j in jobs} == {"0", "1"}
    for j in jobs:
        assert j["visible"] == j["device"] and j["torch"] == "cuda:0"
    for a in jobs:
        for b in jobs:
            if a is not b and a["device"] == b["device"]:
                assert a["end"] <= b["start"] or b["end"] <= a["start"], f"device {a['device']} double-booked"
    # four jobs of 0.6 s on two devices: two rounds, so it cannot all have run at once
    assert max(j["end"] for j in jobs) - min(j["start"] for j in jobs) >= 1.1


def test_killed_job_releases_its_slot(tmp_path: Path) -> None:
    lock_dir = tmp_path / "slots"
    out = tmp_path / "never.json"
    proc = subprocess.Popen([sys.executable, "-c", JOB, str(lock_dir), str(out), "60"], env=_env("0"))
    deadline = time.time() + 30
    while time.time() < deadline:
        os.environ["SQUIDFLOW_GPU_DEVICES"] = "0"
        try:
            if slot_status(lock_dir) == {"0": True}:
                break
        finally:
            del os.environ["SQUIDFLOW_GPU_DEVICES"]
        time.sleep(0.05)
    else:
        raise AssertionError("the job never took the slot")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    with gpu_slot(lock_dir, devices=["0"], timeout_s=5, set_env=False) as slot:
        assert slot == Slot("0", "cuda:0")
    assert not out.exists()


def test_slot_waits_while_all_devices_are_taken(tmp_path: Path) -> None:
    with gpu_slot(tmp_path, devices=["7"], set_env=False):
        try:
            with gpu_slot(tmp_path, devices=["7"], timeout_s=0.3, poll_s=0.05, set_env=False):
                raise AssertionError("a taken device was handed out twice")
        except TimeoutError as exc:
            assert "7" in str(exc)


def test_no_gpu_means_cpu(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SQUIDFLOW_GPU_DEVICES", "")
    assert detect_devices() == []
    with gpu_slot(tmp_path) as slot:
        assert slot == Slot(None, "cpu") and not slot.is_gpu


def test_scheduler_visible_devices_are_respected(monkeypatch) -> None:
    monkeypatch.delenv("SQUIDFLOW_GPU_DEVICES", raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert detect_devices() == ["2", "3"]


def test_snakemake_gpu_jobs_get_distinct_devices(tmp_path: Path) -> None:
    """Four GPU rules under `--resources gpu=2`: Snakemake runs two at a time, the slots keep them apart."""
    script = tmp_path / "job.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, os, time
            from squidflow.runtime.gpu import slot_for_job
            with slot_for_job(snakemake) as slot:
                start = time.time(); time.sleep(0.5)
                rec = {"device": slot.device_id, "visible": os.environ.get("CUDA_VISIBLE_DEVICES"), "start": start, "end": time.time()}
            open(snakemake.output[0], "w").write(json.dumps(rec))
            """
        )
    )
    (tmp_path / "Snakefile").write_text(
        textwrap.dedent(
            f"""
            rule all:
                input: expand("out/{{i}}.json", i=range(4))
            rule job:
                output: "out/{{i}}.json"
                resources: gpu=1
                script: "{script}"
            """
        )
    )
    env = _env("0,1")
    snakemake = Path(sys.executable).with_name("snakemake")
    res = subprocess.run(
        [str(snakemake), "--cores", "4", "--resources", "gpu=2", "--config", f"gpu={{lock_dir: {tmp_path / 'slots'}}}"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    jobs = [json.loads((tmp_path / "out" / f"{i}.json").read_text()) for i in range(4)]
    assert {j["device"] for j in jobs} == {"0", "1"}
    for a in jobs:
        assert a["visible"] == a["device"]
        for b in jobs:
            if a is not b and a["device"] == b["device"]:
                assert a["end"] <= b["start"] or b["end"] <= a["start"]
