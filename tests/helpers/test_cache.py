"""What the tests build once and keep between test sessions: the shared small run (and anything else costly that
only its inputs decide), under .test-cache/<name>/<key>/ in the checkout (git-ignored).

The key is a digest of every input that can change what is built: the content of the workflow, the scripts, the
library, the configs, the conda environments, the lock files and pyproject.toml, the public data's file list, the
Python version, and the caller's own recipe string. It is never a time, and never Snakemake's own code trigger (which
sees a rule's script but not the library it calls): editing one line of src/squidflow makes a new key, and so a new
build. `SQUIDFLOW_TEST_CACHE=0` turns the cache off (every session builds again, in its own temporary folder).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".test-cache"
# The inputs of a workflow run, as paths in the checkout (a folder: every file under it).
RUN_INPUTS = (
    "Snakefile",
    "workflow",
    "scripts",
    "src/squidflow",
    "config",
    "tests/configs",
    "envs",
    "requirements.lock",
    "requirements-gpu.lock",
    "pyproject.toml",
)
DONE = ".squidflow-test-cache-done"
T = TypeVar("T")


def _files(root: Path, inputs: Iterable[str]) -> list[str]:
    """The checkout's files under `inputs`, tracked or untracked-but-not-ignored (git), else every file there."""
    inputs = list(inputs)
    try:
        out = subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z", "--", *inputs],
            cwd=root,
            capture_output=True,
            check=True,
        ).stdout.decode()
        names = [n for n in out.split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = []
        for name in inputs:
            path = root / name
            found = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file() or p.is_symlink()]
            names += [p.relative_to(root).as_posix() for p in found if "__pycache__" not in p.parts]
    return sorted(set(names))


def input_key(root: Path | None = None, inputs: Iterable[str] = RUN_INPUTS, recipe: str = "") -> str:
    """A digest of every input that can change a build: each file's path and content (a link's target), the public
    data's file names and sizes, the Python version and `recipe` (how the caller builds)."""
    root = ROOT if root is None else root
    digest = hashlib.sha256()
    digest.update(f"python {platform.python_version()}\nrecipe {recipe}\n".encode())
    for name in _files(root, inputs):
        path = root / name
        digest.update(name.encode() + b"\0")
        if path.is_symlink():
            digest.update(b"link:" + os.readlink(path).encode())
        elif path.is_file():
            digest.update(path.read_bytes())
        digest.update(b"\0")
    data = os.environ.get("SQUIDFLOW_DATA")
    if data and Path(data).is_dir():
        for path in sorted(Path(data).rglob("*")):
            if path.is_file():
                digest.update(f"data {path.relative_to(data)} {path.stat().st_size}\n".encode())
    return digest.hexdigest()[:20]


def _session_id() -> str:
    """The same for every pytest-xdist worker of one pytest run, another for the next run."""
    return os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"solo-{os.getpid()}"


def cached_run(
    name: str,
    build: Callable[[Path], T],
    read: Callable[[Path], T],
    *,
    recipe: str = "",
    inputs: Iterable[str] = RUN_INPUTS,
) -> T:
    """What `build(folder)` makes, built once per key: the first caller (of any worker, tier or later session) builds it
    into .test-cache/<name>/<key>/ while holding a lock; later callers get `read(folder)`. The key is `input_key` of
    `inputs` (default: every input of a workflow run) and `recipe`. A build that failed in this pytest run fails the other workers
    at once, with its message; the next run tries again. Other keys' folders of `name` are removed once a new one is
    built, so the cache holds one build per name."""
    if os.environ.get("SQUIDFLOW_TEST_CACHE", "1") == "0":
        return build(Path(tempfile.mkdtemp(prefix=f"squidflow-{name}-")))
    key = input_key(inputs=inputs, recipe=recipe)
    folder = CACHE / name / key
    failed = CACHE / name / f"{key}.failed"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes: built, or failed
        if failed.exists():
            session, _, message = failed.read_text().partition("\n")
            if session == _session_id():
                raise RuntimeError(f"the cached build {name} failed earlier in this test run:\n{message}")
            failed.unlink()
        if (folder / DONE).exists():
            return read(folder)
        shutil.rmtree(folder, ignore_errors=True)  # a build a killed session left half done
        folder.mkdir()
        try:
            made = build(folder)
        except BaseException as exc:
            failed.write_text(f"{_session_id()}\n{exc}")
            shutil.rmtree(folder, ignore_errors=True)
            raise
        (folder / DONE).touch()
        for other in folder.parent.iterdir():
            if other.name != key and not other.name.startswith(f"{key}."):
                shutil.rmtree(other, ignore_errors=True) if other.is_dir() else other.unlink(missing_ok=True)
        return made
