"""A real, local Label Studio server for the tests and the benchmark (not part of the library).

`label-studio` pins its own Django stack, so it lives in its own virtualenv, never in the project's `.venv`: the one
the library looks for by default (`~/.cache/squidflow/label-studio-venv`, or $SQUIDFLOW_LABEL_STUDIO_VENV), installed
by `make test-tools` (`cd tests && python -m helpers.label_studio_server --install`), never inside a test, and installed
again only when its key (the Label Studio version and the Python that made the venv) changes. The
server keeps its SQLite database and media in a temporary folder, listens on a free loopback port, has one user whose
API token is made by its own CLI (`label-studio init --user-token`), serves local files from a document root, and is
stopped by its PID. `label-studio --version` checks PyPI and hangs offline: it is never called.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .ports import free_port

LABEL_STUDIO_VERSION = "1.23.2"
VENV = Path(os.environ.get("SQUIDFLOW_LABEL_STUDIO_VENV", Path.home() / ".cache" / "squidflow" / "label-studio-venv"))
START_TIMEOUT = float(os.environ.get("SQUIDFLOW_LABEL_STUDIO_START_TIMEOUT", "240"))


def venv_python() -> Path:
    return VENV / "bin" / "python"


def _venv_key() -> str:
    return f"label-studio=={LABEL_STUDIO_VERSION} python={sys.version.split()[0]}"


def venv_ready() -> str | None:
    """None when the venv `make test-tools` installs is there with this key, else why not (and what to run)."""
    stamp = VENV / ".squidflow-venv-key"
    if (VENV / "bin" / "label-studio").exists() and stamp.exists() and stamp.read_text() == _venv_key():
        return None
    return f"no Label Studio {LABEL_STUDIO_VERSION} venv at {VENV}: run `make test-tools` (it installs it)"


def ensure_venv() -> str | None:
    """Install label-studio into its own venv unless it is there with this key; None when ready, else why it cannot
    be. `make test-tools` calls it; a test only checks (venv_ready)."""
    if venv_ready() is None:
        return None
    shutil.rmtree(VENV, ignore_errors=True)
    exe = VENV / "bin" / "label-studio"
    try:
        VENV.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, capture_output=True, timeout=300)
        subprocess.run(
            [str(venv_python()), "-m", "pip", "install", "-q", f"label-studio=={LABEL_STUDIO_VERSION}"],
            check=True,
            capture_output=True,
            text=True,
            timeout=1200,
        )
    except (subprocess.SubprocessError, OSError) as exc:
        tail = getattr(exc, "stderr", "") or ""
        return f"label-studio {LABEL_STUDIO_VERSION} could not be installed into {VENV}: {exc} {str(tail)[-500:]}"
    if not exe.exists():
        return f"no {exe} after installing label-studio"
    (VENV / ".squidflow-venv-key").write_text(_venv_key())
    return None


@dataclass
class Server:
    url: str
    token: str
    email: str
    password: str
    data_dir: Path
    document_root: Path
    pid: int
    log_path: Path

    def running(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def stop(self) -> None:
        """SIGTERM to its process group (the server and its workers), SIGKILL after 30 s."""
        for sig, wait in ((signal.SIGTERM, 30.0), (signal.SIGKILL, 30.0)):
            try:
                os.killpg(self.pid, sig)
            except ProcessLookupError:
                return
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                try:
                    if os.waitpid(self.pid, os.WNOHANG)[0]:
                        return
                except ChildProcessError:  # started by another worker: not our child
                    if not self.running():
                        return
                time.sleep(0.2)


def workdir(srv: Server, name: str) -> Path:
    """A test's own folder under the server's document root (the root is the session's; configs name it with
    `annotation.label_studio.images.document_root`)."""
    folder = srv.document_root / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def shared_server(common: Path) -> tuple[Server | None, str, bool]:
    """The test session's one server, started by the first caller of any pytest-xdist worker (under a lock in the
    session's shared folder `common`) and read back by the others: (server, '', started here), or (None, why, False)
    where the venv is missing or the server did not start (every worker then skips with the same reason)."""
    info, why_file = common / "label_studio.json", common / "label_studio.skip"
    with open(common / "label_studio.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if why_file.exists():
            return None, why_file.read_text(), False
        if info.exists():
            fields = json.loads(info.read_text())
            return (
                Server(**{**fields, **{k: Path(fields[k]) for k in ("data_dir", "document_root", "log_path")}}),
                "",
                False,
            )
        why = venv_ready()
        if why is None:
            root = common / "label_studio_documents"
            root.mkdir(exist_ok=True)
            try:
                srv = start(common / "label_studio_data", root)
            except RuntimeError as exc:
                why = f"Label Studio did not start here: {str(exc)[:1500]}"
        if why is not None:
            why_file.write_text(why)
            return None, why, False
        info.write_text(json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in vars(srv).items()}))
        _stop_with(os.getppid() if os.environ.get("PYTEST_XDIST_WORKER") else os.getpid(), srv.pid)
        return srv, "", True


def _stop_with(owner: int, server: int) -> None:
    """A watcher that stops the server's process group once `owner` (the pytest run: xdist's controller, or the one
    pytest process) has ended, whoever started the server and however the run ended."""
    watch = (
        "import os, signal, sys, time\n"
        "owner, server = int(sys.argv[1]), int(sys.argv[2])\n"
        "while os.path.exists(f'/proc/{owner}'):\n    time.sleep(2)\n"
        "for sig in (signal.SIGTERM, signal.SIGKILL):\n"
        "    try:\n        os.killpg(server, sig)\n    except ProcessLookupError:\n        break\n    time.sleep(20)\n"
    )
    subprocess.Popen(
        [sys.executable, "-c", watch, str(owner), str(server)],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _env(data_dir: Path, document_root: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LABEL_STUDIO", "DJANGO"))}
    env.update(
        LABEL_STUDIO_BASE_DATA_DIR=str(data_dir),
        LOCAL_FILES_SERVING_ENABLED="true",
        LOCAL_FILES_DOCUMENT_ROOT=str(document_root),
        SENTRY_DSN="",
        FRONTEND_SENTRY_DSN="",
        COLLECT_ANALYTICS="false",
        LABEL_STUDIO_DISABLE_TELEMETRY="true",
        PYTHONUNBUFFERED="1",
    )
    return env


def start(data_dir: Path, document_root: Path) -> Server:
    """Create the user and token with the CLI, start the server, wait for /health; raise RuntimeError with the log."""
    exe = str(VENV / "bin" / "label-studio")
    data_dir.mkdir(parents=True, exist_ok=True)
    env = _env(data_dir, document_root)
    email, password, token = "squidflow-test@localhost", secrets.token_hex(12), secrets.token_hex(20)
    log_path = data_dir / "label-studio.log"
    common = ["--data-dir", str(data_dir), "--enable-legacy-api-token"]
    init = subprocess.run(
        [
            exe,
            "init",
            "squidflow-test",
            *common,
            "--username",
            email,
            "--password",
            password,
            "--user-token",
            token,
            "--no-browser",
        ],
        env=env,
        cwd=data_dir,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if init.returncode != 0:
        raise RuntimeError(f"label-studio init failed ({init.returncode}): {init.stdout[-2000:]} {init.stderr[-2000:]}")
    port = free_port()
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [exe, "start", "squidflow-test", *common, "--no-browser", "--internal-host", "127.0.0.1", "-p", str(port)],
            env=env,
            cwd=data_dir,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = Server(f"http://127.0.0.1:{port}", token, email, password, data_dir, document_root, process.pid, log_path)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"label-studio exited ({process.returncode}): {log_path.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{server.url}/health", timeout=5) as r:
                if r.status == 200:
                    return server
        except OSError:
            time.sleep(1)
    server.stop()
    raise RuntimeError(f"label-studio did not answer /health in {START_TIMEOUT:.0f} s: {log_path.read_text()[-3000:]}")


class Api:
    """The server's REST API as its one user (token authentication): `api("POST", "/api/users/", json=...)` returns
    the answer's JSON and fails the test on an HTTP error, naming the call."""

    def __init__(self, srv: Server):
        import requests

        self.url, self.s = srv.url, requests.Session()
        self.s.headers["Authorization"] = f"Token {srv.token}"

    def __call__(self, method: str, path: str, **kw):
        r = self.s.request(method, f"{self.url}{path}", timeout=120, **kw)
        assert r.status_code < 300, f"{method} {path}: {r.status_code} {r.text[:500]}"
        return r.json() if r.text else None

    def user(self, name: str) -> int:
        """The id of the annotator `name` (`<name>@lab.example`), created on first use. One server serves the whole
        session, its workers included, so two tests that name the same annotator get the same user (created once,
        whichever test asks first), not a failed second creation."""
        email = f"{name}@lab.example"
        body = {"username": name, "email": email, "password": f"pw-{name}-{name}-{name}"}
        r = self.s.post(f"{self.url}/api/users/", json=body, timeout=120)
        if r.status_code < 300:
            return r.json()["id"]
        ids = {u["email"]: u["id"] for u in self("GET", "/api/users/")}
        assert email in ids, f"POST /api/users/ for {name}: {r.status_code} {r.text[:500]}"
        return ids[email]

    def tasks(self, project: int) -> list[dict]:
        return self("GET", f"/api/tasks/?project={project}&page_size=1000")["tasks"]


if __name__ == "__main__":
    # `--install`: the venv (make test-tools); DIR: a server to try things against, until Ctrl-C
    if sys.argv[1] == "--install":
        why = ensure_venv()
        print(why or f"Label Studio {LABEL_STUDIO_VERSION}: {VENV}")
        sys.exit(1 if why else 0)
    d = Path(sys.argv[1])
    s = start(d / "data", d)
    print(s.url, s.token, s.email, s.password, s.pid, flush=True)
    try:
        while s.running():
            time.sleep(1)
    finally:
        s.stop()
