"""A real, local Label Studio server for the tests and the benchmark (not part of the library).

`label-studio` pins its own Django stack, so it lives in its own virtualenv under a cache folder
(`~/.cache/squidflow/label-studio-venv`, or $SQUIDFLOW_LABEL_STUDIO_VENV), never in the project's `.venv`. The
server keeps its SQLite database and media in a temporary folder, listens on a free loopback port, has one user whose
API token is made by its own CLI (`label-studio init --user-token`), serves local files from a document root, and is
stopped by its PID. `label-studio --version` checks PyPI and hangs offline: it is never called.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from helpers.ports import free_port

LABEL_STUDIO_VERSION = "1.23.2"
VENV = Path(os.environ.get("SQUIDFLOW_LABEL_STUDIO_VENV", Path.home() / ".cache" / "squidflow" / "label-studio-venv"))
START_TIMEOUT = float(os.environ.get("SQUIDFLOW_LABEL_STUDIO_START_TIMEOUT", "240"))


def venv_python() -> Path:
    return VENV / "bin" / "python"


def ensure_venv() -> str | None:
    """Install label-studio into its own venv if it is not there; None when ready, else why it cannot be."""
    exe = VENV / "bin" / "label-studio"
    if exe.exists():
        return None
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
    return None if exe.exists() else f"no {exe} after installing label-studio"


@dataclass
class Server:
    url: str
    token: str
    email: str
    password: str
    data_dir: Path
    document_root: Path
    process: subprocess.Popen
    log_path: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)  # its own process group: the server and its workers
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)


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
    server = Server(f"http://127.0.0.1:{port}", token, email, password, data_dir, document_root, process, log_path)
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

    def tasks(self, project: int) -> list[dict]:
        return self("GET", f"/api/tasks/?project={project}&page_size=1000")["tasks"]


if (
    __name__ == "__main__"
):  # python tests/helpers/label_studio_server.py DIR: a server to try things against, until Ctrl-C
    d = Path(sys.argv[1])
    s = start(d / "data", d)
    print(s.url, s.token, s.email, s.password, s.process.pid, flush=True)
    try:
        s.process.wait()
    finally:
        s.stop()
