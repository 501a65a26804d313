"""A real single-node Slurm cluster for tests: Debian's munge, MariaDB, slurmdbd, slurmctld and slurmd, started by
hand (no systemd) under one temporary folder, with two fake GPUs and job accounting.

    cluster = start_cluster(Path("/tmp/..."))   # about 5 s
    cluster.cmd("sinfo")                         # any Slurm client, pointed at this cluster by $SLURM_CONF
    cluster.stop()                               # cancels its jobs, stops only the daemons it started

What a test cluster needs on these machines, and how this module handles it:
- no systemd: every daemon runs in the foreground as a child of the test process; its PID is recorded and only those
  PIDs are stopped.
- munged refuses a socket folder that is not searchable by everyone and a key readable by anyone but its owner:
  the key lives in a 0700 folder owned by user munge, the socket in a 0755 one. A private socket (not
  /run/munge) so a system munged, if any, is never touched; slurm.conf names it for the daemons (AuthInfo) and for
  the connection to slurmdbd (AccountingStoragePass).
- private TCP ports for slurmctld, slurmd, slurmdbd and MariaDB, so a second cluster (or a leftover one) never
  collides; MariaDB listens on 127.0.0.1 only.
- `ProctrackType=proctrack/linuxproc` and `TaskPlugin=task/affinity` (no cgroups in containers),
  `SelectType=select/cons_tres` with `CR_Core_Memory` and `DefMemPerCPU` (otherwise one job takes the whole node),
  `SlurmdParameters=config_overrides` so the declared node (1 socket, 2 cores) registers on any machine.
- fake GPUs: `GresTypes=gpu`, gres.conf with `AutoDetect=off` and `File=` character devices made with mknod (plain
  files and file-less `Count=` are refused); jobs that ask for a GPU get `CUDA_VISIBLE_DEVICES`.
- accounting through slurmdbd + MariaDB: without it `sacct` fails and the Snakemake executor plugin, which polls
  with `sacct`, waits forever. `AccountingStorageEnforce=associations` as on real clusters, so the account named
  by a job must exist (`sacctmgr add account`, and the submitting user added to it); `AccountingStoreFlags=
  job_comment` keeps the plugin's `rule_<name>_wildcards_<...>` comment in `sacct`; `AccountingStorageTRES=gres/gpu`
  records GPUs per job.
"""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .ports import free_port
from .runs import SNAKEMAKE

ROOT = Path(__file__).resolve().parents[2]
SBIN_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin", "/usr/local/sbin"])

# Debian package -> the commands it provides that the cluster runs
PACKAGES = {
    "munge": ["munged", "munge"],
    "mariadb-server": ["mariadbd", "mariadb-install-db", "mariadb"],
    "slurmdbd": ["slurmdbd"],
    "slurmctld": ["slurmctld"],
    "slurmd": ["slurmd"],
    "slurm-client": ["sbatch", "srun", "squeue", "sacct", "sacctmgr", "scontrol", "scancel", "sinfo"],
}
ENSURE_SCRIPT = ROOT / ".ci" / "ensure-slurm.sh"

CLUSTER = "squidtest"
PARTITION = "debug"
ACCOUNT = "squidlab"
NODE = "squidnode"
CPUS = 2
GPUS = 2


def _which(cmd: str) -> str | None:
    return shutil.which(cmd, path=SBIN_PATH)


def missing_packages() -> list[str]:
    """The Debian packages whose commands are not installed."""
    return [pkg for pkg, cmds in PACKAGES.items() if not all(_which(c) for c in cmds)]


def why_unavailable() -> str | None:
    """None when a cluster can be started here, else why not (the reason a test prints when it skips).

    Installs the missing Debian packages the way `make test-tools` does (.ci/ensure-slurm.sh) when we are root."""
    if os.name != "posix" or not hasattr(os, "geteuid"):
        return "a Slurm test cluster needs Linux"
    if os.geteuid() != 0:
        return (
            "a Slurm test cluster needs root (munged runs as user munge, slurmd starts jobs as their user); "
            "run the tests as root, e.g. in CI"
        )
    if missing_packages():
        res = subprocess.run(["bash", str(ENSURE_SCRIPT)], capture_output=True, text=True, timeout=900)
        still = missing_packages()
        if still:
            return (
                f"the Debian packages {still} are missing and could not be installed "
                f"({ENSURE_SCRIPT.relative_to(ROOT)} said: {(res.stdout + res.stderr).strip()[-500:]})"
            )
    return None


def _wait(what: str, check, timeout: float, log: Path | None = None, proc: subprocess.Popen | None = None) -> None:
    """Poll `check()` until it is true; fail naming the daemon and the end of its log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            break
        try:
            if check():
                return
        except (OSError, subprocess.SubprocessError):
            pass
        time.sleep(0.2)
    tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else "(no log)"
    state = f"exited with {proc.returncode}" if proc is not None and proc.poll() is not None else "not ready"
    raise RuntimeError(f"Slurm test cluster: {what} {state} after {timeout:.0f}s; end of {log}:\n{tail}")


@dataclass
class SlurmCluster:
    """A running test cluster: its folder, configuration, and the daemons this process started."""

    root: Path
    node: str = NODE
    partition: str = PARTITION
    account: str = ACCOUNT
    cpus: int = CPUS
    gpus: int = GPUS
    mem_mb: int = 16000
    daemons: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def conf(self) -> Path:
        return self.root / "etc" / "slurm.conf"

    @property
    def env(self) -> dict[str, str]:
        """The environment for Slurm clients (and for a snakemake that submits to this cluster)."""
        env = dict(os.environ)
        env["SLURM_CONF"] = str(self.conf)
        env["PATH"] = os.pathsep.join([str(self.root / "bin"), SBIN_PATH])
        for var in [v for v in env if v.startswith(("SLURM_", "SBATCH_", "SRUN_")) and v != "SLURM_CONF"]:
            env.pop(var)
        return env

    @property
    def pids(self) -> dict[str, int]:
        return {name: p.pid for name, p in self.daemons.items()}

    def cmd(self, *args: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess:
        """Run a Slurm client command against this cluster; output captured."""
        res = subprocess.run(list(args), env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and res.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed ({res.returncode}): {res.stdout}{res.stderr}")
        return res

    def log(self, daemon: str) -> str:
        path = self.root / "log" / f"{daemon}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def jobs(self, *extra: str) -> list[dict[str, str]]:
        """Every job this cluster has accounted for (one row per job, not per step), as `sacct` reports it."""
        fields = [
            "JobIDRaw",
            "JobName",
            "State",
            "ExitCode",
            "Comment",
            "Partition",
            "Account",
            "AllocTRES",
            "ReqTRES",
            "Start",
            "End",
            "Elapsed",
            "TotalCPU",
            "NodeList",
            "Reason",
        ]
        res = self.cmd(
            "sacct",
            "-X",
            "--allusers",
            "--parsable2",
            "--noheader",
            "--starttime",
            "now-1days",
            "--format=" + ",".join(fields),
            *extra,
        )
        return [dict(zip(fields, line.split("|"), strict=True)) for line in res.stdout.splitlines() if line]

    def queue(self) -> list[dict[str, str]]:
        """Jobs still queued or running: id, comment, state, reason."""
        res = self.cmd("squeue", "--noheader", "--format=%i|%k|%T|%r")
        rows = []
        for line in res.stdout.splitlines():
            jobid, comment, state, reason = line.split("|", 3)
            rows.append({"JobID": jobid, "Comment": comment, "State": state, "Reason": reason})
        return rows

    def profile_env(self, **extra: str) -> dict[str, str]:
        """The environment a researcher sets for profiles/slurm (account, partitions, memory), pointed at this
        cluster. The watch every 2 s: on a local cluster `squeue` costs milliseconds. The plugin's status checks
        are its own (`submit` sets only its public `--slurm-init-seconds-before-status-checks`)."""
        env = self.env | {
            "SQUIDFLOW_SLURM_ACCOUNT": self.account,
            "SQUIDFLOW_SLURM_PARTITION": self.partition,
            "SQUIDFLOW_SLURM_GPU_PARTITION": self.partition,
            "SQUIDFLOW_SLURM_MEM_MB": "1000",
            "SQUIDFLOW_SLURM_WATCH_SECONDS": "2",
        }
        return env | extra

    def submit(
        self, tree: Path, directory: Path, configfiles: Iterable[Path], *args: str, timeout: int = 3600, **env: str
    ) -> subprocess.CompletedProcess:
        """`snakemake --profile profiles/slurm` of the workflow in `tree` (a checkout) into `directory`, as the README
        shows it (the Snakemake process finds the library of `tree` through workflow/checks.smk, its jobs through
        scripts/squidflow); `timeout -k` around it so that a hang fails instead of
        blocking, and snakemake in its own session, killed whole if we are interrupted."""
        proc = self.start_submit(tree, directory, configfiles, *args, timeout=timeout, **env)
        try:
            out, err = proc.communicate(timeout=timeout + 30)
        except BaseException:  # interrupted: stop snakemake too (it is in its own session), never leave it running
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def start_submit(
        self, tree: Path, directory: Path, configfiles: Iterable[Path], *args: str, timeout: int = 3600, **env: str
    ) -> subprocess.Popen:
        """`submit` without waiting: the running `timeout snakemake ...`, in a session of its own (`os.killpg` of
        its pid stops it whole, as a lost login session would)."""
        cmd = [
            "timeout",
            "-k",
            "10",
            str(timeout),
            SNAKEMAKE,
            "--profile",
            "profiles/slurm",
            "--directory",
            str(directory),
            "--configfile",
            *map(str, configfiles),
            "--slurm-init-seconds-before-status-checks",
            "1",
            *args,
        ]
        return subprocess.Popen(
            cmd,
            cwd=tree,
            env=self.profile_env(**env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def wait_until_empty(self, timeout: float = 60) -> None:
        """Until no job of this cluster is queued or running."""
        _wait("job queue draining", lambda: not self.queue(), timeout, self.root / "log" / "slurmctld.log")

    def cancel_all(self) -> None:
        if self.queue():
            self.cmd("scancel", "--full", "--partition", self.partition, check=False)
            try:
                self.wait_until_empty(30)
            except RuntimeError:
                pass

    def stop(self) -> None:
        """Cancel this cluster's jobs, then stop the daemons this process started (only those PIDs), newest first."""
        if "slurmctld" in self.daemons and self.daemons["slurmctld"].poll() is None:
            try:
                self.cancel_all()
            except (OSError, subprocess.SubprocessError, RuntimeError):
                pass
        for name in reversed(list(self.daemons)):
            proc = self.daemons[name]
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=5)
        for fh in getattr(self, "_logs", []):
            fh.close()

    # --------------------------------------------------------------------------------------------- start-up

    def _spawn(self, name: str, argv: list[str], **kwargs) -> subprocess.Popen:
        self.root.joinpath("log").mkdir(exist_ok=True)
        out = open(self.root / "log" / f"{name}.out", "w")  # noqa: SIM115 - closed in stop()
        self.__dict__.setdefault("_logs", []).append(out)
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, **kwargs
        )
        self.daemons[name] = proc
        return proc


def _node_memory_mb() -> int:
    """RealMemory for the node: below what is free now (slurmd drains a node that has less than declared)."""
    avail_kb = next(
        int(line.split()[1])
        for line in Path("/proc/meminfo").read_text().splitlines()
        if line.startswith("MemAvailable:")
    )
    return max(4000, min(16000, avail_kb // 1024 - 2000))


def _write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)


def start_cluster(base: Path | None = None, *, gpus: int = GPUS) -> SlurmCluster:
    """Start a fresh cluster in a new folder under `base` (default: the system temp dir) and wait until its node is
    idle. The folder is world-searchable (munged checks every folder above its socket), so it is not a pytest
    tmp_path (0700)."""
    root = Path(tempfile.mkdtemp(prefix="squidflow-slurm-", dir=base))
    root.chmod(0o755)
    cluster = SlurmCluster(root=root, gpus=gpus, mem_mb=_node_memory_mb())
    try:
        _start(cluster)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _start(c: SlurmCluster) -> None:
    root = c.root
    etc, state, log, dev = root / "etc", root / "state", root / "log", root / "dev"
    for d in (etc, state / "ctld", state / "slurmd", log, dev):
        d.mkdir(parents=True, exist_ok=True)
    user = getpass.getuser()
    host = socket.gethostname().split(".")[0]
    ports = {k: free_port() for k in ("ctld", "slurmd", "dbd", "mysql")}

    # munge: key folder 0700 and socket folder 0755, both owned by munge
    munge_etc, munge_run = root / "munge-etc", root / "munge-run"
    for d, mode in ((munge_etc, 0o700), (munge_run, 0o755)):
        d.mkdir()
        shutil.chown(d, "munge", "munge")
        d.chmod(mode)
    key = munge_etc / "munge.key"
    key.write_bytes(os.urandom(1024))
    shutil.chown(key, "munge", "munge")
    key.chmod(0o400)
    sock = munge_run / "munge.socket"
    munged = c._spawn(
        "munged",
        [
            _which("munged"),
            "--foreground",
            f"--key-file={key}",
            f"--socket={sock}",
            f"--pid-file={munge_run / 'munged.pid'}",
            f"--log-file={munge_etc / 'munged.log'}",
            f"--seed-file={munge_etc / 'munged.seed'}",
        ],
        user="munge",
        group="munge",
    )
    _wait("munged", sock.exists, 15, log / "munged.out", munged)

    # MariaDB for slurmdbd, on a private port and socket
    data = root / "mysql"
    subprocess.run(
        [
            _which("mariadb-install-db"),
            "--no-defaults",
            f"--datadir={data}",
            f"--user={user}",
            "--auth-root-authentication-method=socket",
            "--skip-test-db",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    my_sock = root / "mysqld.sock"
    mysqld = c._spawn(
        "mariadbd",
        [
            _which("mariadbd"),
            "--no-defaults",
            f"--datadir={data}",
            f"--user={user}",
            f"--socket={my_sock}",
            f"--port={ports['mysql']}",
            "--bind-address=127.0.0.1",
            f"--pid-file={root / 'mysqld.pid'}",
            f"--log-error={log / 'mariadbd.log'}",
            "--skip-log-bin",
            "--innodb-buffer-pool-size=32M",
            "--innodb-log-file-size=16M",
        ],
    )
    sql = [_which("mariadb"), "--no-defaults", f"--socket={my_sock}", "-u", "root"]

    def db_ready() -> bool:
        return subprocess.run([*sql, "-e", "SELECT 1"], capture_output=True, timeout=10).returncode == 0

    _wait("mariadbd", db_ready, 60, log / "mariadbd.log", mysqld)
    subprocess.run(
        [
            *sql,
            "-e",
            "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurm-test';"
            "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';",
        ],
        check=True,
        capture_output=True,
    )

    _write(
        etc / "slurmdbd.conf",
        "\n".join(
            [
                "AuthType=auth/munge",
                f"AuthInfo=socket={sock}",
                "DbdHost=localhost",
                f"DbdPort={ports['dbd']}",
                f"SlurmUser={user}",
                f"LogFile={log / 'slurmdbd.log'}",
                f"PidFile={state / 'slurmdbd.pid'}",
                "StorageType=accounting_storage/mysql",
                "StorageHost=127.0.0.1",
                f"StoragePort={ports['mysql']}",
                "StorageUser=slurm",
                "StoragePass=slurm-test",
                "StorageLoc=slurm_acct_db",
                "",
            ]
        ),
        mode=0o600,
    )
    gpu_files = []
    for i in range(c.gpus):
        dev_file = dev / f"nvidia{i}"
        os.mknod(dev_file, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # like /dev/null: c 1 3
        gpu_files.append(dev_file)
    gres = f" Gres=gpu:{c.gpus}" if c.gpus else ""
    _write(
        etc / "slurm.conf",
        "\n".join(
            [
                f"ClusterName={CLUSTER}",
                f"SlurmctldHost={host}(127.0.0.1)",
                f"SlurmctldPort={ports['ctld']}",
                f"SlurmdPort={ports['slurmd']}",
                "AuthType=auth/munge",
                f"AuthInfo=socket={sock}",
                f"SlurmUser={user}",
                f"SlurmdUser={user}",
                f"StateSaveLocation={state / 'ctld'}",
                f"SlurmdSpoolDir={state / 'slurmd'}",
                f"SlurmctldPidFile={state / 'slurmctld.pid'}",
                f"SlurmdPidFile={state / 'slurmd.pid'}",
                f"SlurmctldLogFile={log / 'slurmctld.log'}",
                f"SlurmdLogFile={log / 'slurmd.log'}",
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/affinity",
                "MpiDefault=none",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core_Memory",
                "DefMemPerCPU=1024",
                "SlurmdParameters=config_overrides",
                "ReturnToService=2",
                "KillWait=5",
                "MinJobAge=300",
                "GresTypes=gpu",
                "AccountingStorageType=accounting_storage/slurmdbd",
                "AccountingStorageHost=localhost",
                f"AccountingStoragePort={ports['dbd']}",
                f"AccountingStoragePass={sock}",
                "AccountingStorageEnforce=associations",
                "AccountingStorageTRES=gres/gpu",
                "AccountingStoreFlags=job_comment",
                "JobAcctGatherType=jobacct_gather/linux",
                f"NodeName={c.node} NodeAddr=127.0.0.1 NodeHostname={host} Sockets=1 CoresPerSocket={c.cpus} "
                f"ThreadsPerCore=1 RealMemory={c.mem_mb}{gres} State=UNKNOWN",
                f"PartitionName={c.partition} Nodes={c.node} Default=YES MaxTime=INFINITE State=UP",
                "",
            ]
        ),
    )
    _write(etc / "gres.conf", "AutoDetect=off\n" + "".join(f"NodeName={c.node} Name=gpu File={f}\n" for f in gpu_files))
    # The Slurm executor plugin's job step clears every SLURM_* variable, SLURM_CONF too, before its inner `srun`;
    # real clusters keep slurm.conf where srun looks by default (/etc/slurm) or serve it configless, this one is in
    # a temporary folder: an `srun` first on the jobs' PATH names it again.
    _write(root / "bin" / "srun", f'#!/bin/sh\nSLURM_CONF={c.conf} exec {_which("srun")} "$@"\n', mode=0o755)
    env = c.env

    dbd = c._spawn("slurmdbd", [_which("slurmdbd"), "-D"], env=env)
    _wait(
        "slurmdbd",
        lambda: c.cmd("sacctmgr", "--noheader", "list", "cluster", check=False).returncode == 0,
        30,
        log / "slurmdbd.log",
        dbd,
    )
    for args in (
        ["add", "cluster", CLUSTER],
        ["add", "account", c.account, f"Cluster={CLUSTER}", "Description=squidflow tests", "Organization=squidflow"],
        ["add", "user", user, f"Account={c.account}", f"Cluster={CLUSTER}"],
    ):
        c.cmd("sacctmgr", "--immediate", *args)

    ctld = c._spawn("slurmctld", [_which("slurmctld"), "-D", "-i"], env=env)
    _wait("slurmctld", lambda: "UP" in c.cmd("scontrol", "ping", check=False).stdout, 30, log / "slurmctld.log", ctld)
    slurmd = c._spawn("slurmd", [_which("slurmd"), "-D", "-N", c.node], env=env)

    def node_idle() -> bool:
        return c.cmd("sinfo", "--noheader", "--format=%T", check=False).stdout.strip() == "idle"

    _wait("slurmd (node idle)", node_idle, 30, log / "slurmd.log", slurmd)
