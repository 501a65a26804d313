"""GPU slots: which device a job that declared `resources: gpu=1` should use.

Snakemake counts `gpu` resources, so it never starts more GPU jobs than there are GPUs, but it never says *which*
GPU a job gets: without help, every job lands on cuda:0. Each GPU job therefore takes a slot here: an exclusive
`flock` on one lock file per device under a shared folder. The kernel drops a flock when its holder's file
descriptor closes — at exit, on an exception, and also when the process is killed with SIGKILL — so a crashed or
killed job can never leave a slot taken. No daemon, no state to clean up.

The slot is exported as CUDA_VISIBLE_DEVICES before CUDA is initialised, so inside the job the GPU is always
`cuda:0`. Without GPUs the job runs on the CPU.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

DEFAULT_LOCK_DIR = ".snakemake/gpu-slots"
ENV_DEVICES = "SQUIDFLOW_GPU_DEVICES"  # overrides detection, e.g. "0,1"; "" means no GPU (also used by tests)


@dataclass(frozen=True)
class Slot:
    """The device a job got: `device_id` as the driver names it (None on CPU), `torch_device` for torch."""

    device_id: str | None
    torch_device: str

    @property
    def is_gpu(self) -> bool:
        return self.device_id is not None


def detect_devices(configured: Sequence[int | str] | None = None) -> list[str]:
    """Devices this job may use: $SQUIDFLOW_GPU_DEVICES, else the config, else CUDA_VISIBLE_DEVICES, else nvidia-smi.

    CUDA_VISIBLE_DEVICES comes before nvidia-smi because a scheduler (SLURM) that sets it has already chosen the
    devices this job may touch.
    """
    if ENV_DEVICES in os.environ:
        return [d.strip() for d in os.environ[ENV_DEVICES].split(",") if d.strip()]
    if configured:
        return [str(d) for d in configured]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [d.strip() for d in visible.split(",") if d.strip() and d.strip() != "-1"]
    if shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(
                ["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=30,
                check=True,
            ).stdout
            return [line.strip() for line in out.splitlines() if line.strip()]
        except (subprocess.SubprocessError, OSError):
            return []
    return []


def _try_lock(lock_dir: Path, device: str):
    fh = open(lock_dir / f"gpu{device}.lock", "a+")  # noqa: SIM115 - held for the slot's lifetime
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        return None
    fh.seek(0)
    fh.truncate()
    fh.write(f"pid {os.getpid()}\n")
    fh.flush()
    return fh


@contextlib.contextmanager
def gpu_slot(
    lock_dir: str | os.PathLike = DEFAULT_LOCK_DIR,
    devices: Sequence[int | str] | None = None,
    *,
    timeout_s: float = 24 * 3600,
    poll_s: float = 0.2,
    set_env: bool = True,
) -> Iterator[Slot]:
    """Hold a free GPU for the duration of the block (or the CPU when there is no GPU).

    Waits when every device is taken, which happens only when something outside this workflow's resource counting
    uses the lock folder (a second snakemake on the same machine): better to wait than to double-book a device.
    """
    found = detect_devices(devices)
    if not found:
        yield Slot(None, "cpu")
        return
    lock_dir = Path(lock_dir)
    lock_dir.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout_s
    held = None
    while held is None:
        for device in found:
            fh = _try_lock(lock_dir, device)
            if fh is not None:
                held = (device, fh)
                break
        else:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no free GPU slot among {found} in {lock_dir} after {timeout_s:.0f}s")
            time.sleep(poll_s)
    device, fh = held
    previous = os.environ.get("CUDA_VISIBLE_DEVICES")
    if set_env:
        os.environ["CUDA_VISIBLE_DEVICES"] = device
    try:
        yield Slot(device, "cuda:0")
    finally:
        if set_env:
            if previous is None:
                os.environ.pop("CUDA_VISIBLE_DEVICES", None)
            else:
                os.environ["CUDA_VISIBLE_DEVICES"] = previous
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
        fh.close()


def slot_for_job(snakemake_obj) -> contextlib.AbstractContextManager[Slot]:
    """The slot for a Snakemake script job: CPU unless the rule declared `resources: gpu`, lock dir from config."""
    gpu_cfg = (getattr(snakemake_obj, "config", {}) or {}).get("gpu", {}) or {}
    wants_gpu = int(getattr(snakemake_obj.resources, "gpu", 0) or 0) > 0
    if not wants_gpu:
        return contextlib.nullcontext(Slot(None, "cpu"))
    return _logged(gpu_slot(_lock_dir_for(gpu_cfg), gpu_cfg.get("devices") or None))


def _lock_dir_for(gpu_cfg: dict) -> Path:
    """The configured lock folder, except inside a Slurm job that got its devices from Slurm: there the devices in
    CUDA_VISIBLE_DEVICES are this allocation's alone (with device cgroups every job even sees its GPU as "0"), so
    the locks only keep apart the jobs of one allocation and live in a folder of their own on the node, never on
    the filesystem the nodes share."""
    job_id = os.environ.get("SLURM_JOB_ID")
    if job_id and not gpu_cfg.get("devices") and ENV_DEVICES not in os.environ:
        return Path(tempfile.gettempdir()) / f"squidflow-gpu-slots-slurm-{job_id}"
    return Path(gpu_cfg.get("lock_dir", DEFAULT_LOCK_DIR))


@contextlib.contextmanager
def _logged(slot_cm: contextlib.AbstractContextManager[Slot]) -> Iterator[Slot]:
    """Say in the job's log which device it got; fall back to the CPU when the job's torch cannot use CUDA (a
    CPU-only torch build, or a node whose driver is missing) instead of failing on `cuda:0`."""
    log = logging.getLogger("squidflow.runtime.gpu")
    with slot_cm as slot:
        torch = sys.modules.get("torch")
        if slot.is_gpu and torch is not None and not torch.cuda.is_available():
            log.warning(
                "GPU slot: device %s, but this torch cannot use CUDA (torch %s): running on the CPU",
                slot.device_id,
                torch.__version__,
            )
            slot = Slot(slot.device_id, "cpu")
        log_slot(slot)
        yield slot


def log_slot(slot: Slot, run: int | None = None, runs: int | None = None) -> None:
    """The slot line of a job's log: which device (and Slurm job) a job's work ran on. A job of several runs, each
    with a log of its own, says it again in each run's log (`run` of `runs`), so that every log names its device."""
    of = f", the job's, run {run} of {runs}" if run is not None else ""
    logging.getLogger("squidflow.runtime.gpu").info(
        "GPU slot: device %s (CUDA_VISIBLE_DEVICES=%s, Slurm job %s) -> %s%s",
        slot.device_id,
        os.environ.get("CUDA_VISIBLE_DEVICES"),
        os.environ.get("SLURM_JOB_ID", "none"),
        slot.torch_device,
        of,
    )


def slot_status(
    lock_dir: str | os.PathLike = DEFAULT_LOCK_DIR, devices: Sequence[int | str] | None = None
) -> dict[str, bool]:
    """Which devices are taken right now (True = taken); for `squidflow gpu-slots`."""
    lock_dir = Path(lock_dir)
    lock_dir.mkdir(parents=True, exist_ok=True)
    status = {}
    for device in detect_devices(devices):
        fh = _try_lock(lock_dir, device)
        status[device] = fh is None
        if fh is not None:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
            fh.close()
    return status
