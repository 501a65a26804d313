"""`squidflow label-studio push | pull`: the projects created and the tasks imported on a running Label Studio, and
their annotations pulled back as JSON exports — through `label-studio-sdk`.

The SDK runs in a Python that has it (see `label_studio.client`: its pins clash with squidflow's environment): the
current one if it can import `label_studio_sdk`, else `annotation.label_studio.sdk_python` (default: the Label
Studio virtualenv at ~/.cache/squidflow/label-studio-venv). The server's URL comes from the config
(`annotation.label_studio.url`), the API token from the environment variable `annotation.label_studio.token_env`
(default LABEL_STUDIO_API_KEY): it is handed to the SDK's process in its environment only, never on a command line,
in a file, a log or a message.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

from squidflow.config.validation import ConfigError
from squidflow.contracts.io import inside
from squidflow.errors import UserError
from squidflow.fetch import PROXY_ENV
from squidflow.judgments.label_studio.tasks import TASKS, is_task, task_order

log = logging.getLogger(__name__)

CLIENT = Path(__file__).with_name("client.py")
DEFAULT_SDK_PYTHON = Path.home() / ".cache" / "squidflow" / "label-studio-venv" / "bin" / "python"
PROJECTS_FILE = "projects.json"


class LabelStudioError(UserError):
    """The server refused or could not be reached; the message names the server, the project and the fix."""


def sdk_python(configured: str | None = None) -> str:
    if configured:
        return str(Path(configured).expanduser())
    if importlib.util.find_spec("label_studio_sdk") is not None:
        return sys.executable
    return str(DEFAULT_SDK_PYTHON)


def _run(command: str, request: dict, ls: dict, what: str) -> dict:
    python = sdk_python(ls.get("sdk_python"))
    token_env = ls.get("token_env") or "LABEL_STUDIO_API_KEY"
    if not os.environ.get(token_env):
        raise ConfigError(
            f"Label Studio at {ls['url']}: the environment variable {token_env} (annotation.label_studio."
            "token_env) is empty. Set it to your API token (Account & Settings > Access Token); the "
            "token is never put in a config file."
        )
    if not Path(python).exists():
        raise ConfigError(
            f"no Python with label-studio-sdk at {python}: install it there "
            f"(`python -m venv {Path(python).parents[1]} && {python} -m pip install label-studio-sdk`) "
            "or point annotation.label_studio.sdk_python at one."
        )
    request = {**request, "url": ls["url"], "token_env": token_env}
    proc = subprocess.run(
        [python, str(CLIENT), command],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=3600,
        env=os.environ.copy(),
    )
    answer = None
    for line in reversed(proc.stdout.strip().splitlines()):
        try:
            answer = json.loads(line)
            break
        except json.JSONDecodeError:
            continue
    if proc.returncode != 0 or not isinstance(answer, dict) or "error" in answer:
        why = (
            answer.get("error") if isinstance(answer, dict) else (proc.stderr.strip().splitlines() or ["no output"])[-1]
        )
        why = redact(str(why), [os.environ.get(token_env, ""), os.environ.get(PROXY_ENV, "")])[:2000]
        raise LabelStudioError(
            f"Label Studio at {ls['url']}, {what}: {why}. Check that the server runs at that URL "
            f"(annotation.label_studio.url) and that {token_env} holds a valid token of a user who "
            "may create projects there."
        )
    return answer


def redact(text: str, secrets) -> str:
    """`text` with each secret (the API token, the download proxy) and the password of any URL replaced by `***`: a
    server may echo the request, headers included, in its error body."""
    from squidflow.fetch import redact_url_credentials

    for secret in sorted({str(s) for s in secrets if s and len(str(s)) >= 4}, key=len, reverse=True):
        text = text.replace(secret, "***")
    return redact_url_credentials(text)


def _projects(record: dict, record_path: Path, tasks) -> dict[str, int]:
    """The task -> project id pairs of projects.json: only the task keys squidflow writes (TASKS) and integer ids,
    since a key becomes the export's file name and an id goes to the server."""
    projects = record.get("projects") if isinstance(record, dict) else None
    if not isinstance(projects, dict):
        raise UserError(
            f'{record_path}: no "projects" mapping; expected {{"url": ..., "projects": {{"A": <project id>, ...}}}}}}.'
        )
    out = {}
    for key, pid in projects.items():
        if not is_task(key):
            raise UserError(
                f"{record_path}: project key {str(key)[:80]!r} is not a task squidflow knows "
                f"({', '.join(TASKS)}, A_round<k>, B_round<k>); fix or remove it."
            )
        if isinstance(pid, bool) or not isinstance(pid, int) or pid < 0:
            raise UserError(
                f"{record_path}: project id of task {key} is {str(pid)[:80]!r}, not an integer; write "
                "the id Label Studio shows in the project's URL."
            )
        if tasks is None or key in tasks:
            out[key] = pid
    return out


def pushed(out_dir: Path, url: str) -> dict:
    """The projects projects.json records for this server (empty when none or another server's)."""
    try:
        old = json.loads((Path(out_dir) / PROJECTS_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return {}
    ok = isinstance(old, dict) and old.get("url") == url and isinstance(old.get("projects"), dict)
    return dict(old["projects"]) if ok else {}


def push(
    out_dir: str | Path,
    ls: dict,
    *,
    tasks: tuple[str, ...] | None = None,
    local_files_path: str | None = None,
    assignments_per_hit: int = 3,
) -> dict:
    """Create one project per task folder under `out_dir` (results/annotation/label_studio) and import its tasks;
    the project ids go to `<out_dir>/projects.json` (what `pull` reads), beside those pushed before to the same
    server. Without `tasks`: every task folder not pushed to this server yet (so the next round's A_round2 and
    B_round2 are pushed on their own, once the workflow has written them). A task folder with no task (a variant the
    next round chose no image of) makes no project."""
    out_dir = Path(out_dir)
    if tasks is None:
        done = pushed(out_dir, ls["url"])
        written = [p.name for p in out_dir.iterdir() if p.is_dir() and is_task(p.name)] if out_dir.is_dir() else []
        tasks = tuple(t for t in sorted(written, key=task_order) if t not in done)
    projects = []
    for task in tasks:
        folder = out_dir / task
        if not (folder / "tasks.json").exists():
            continue
        meta = json.loads((folder / "project.json").read_text(encoding="utf-8"))
        if not meta.get("n_tasks"):
            log.info("task %s: no task to label (the round chose no image of it): no project", task)
            continue
        projects.append(
            {
                "task": task,
                "title": meta["title"],
                "tasks_file": str((folder / "tasks.json").absolute()),
                "label_config": (folder / "label_config.xml").read_text(encoding="utf-8"),
                "instructions": (folder / "instructions.html").read_text(encoding="utf-8"),
                "maximum_annotations": assignments_per_hit if task != "comparison" else 2,
                **({"local_files_path": str(Path(local_files_path).absolute())} if local_files_path else {}),
            }
        )
    if not projects:
        raise UserError(
            f"{out_dir}: no <task>/tasks.json to import that is not pushed to {ls['url']} already "
            f"({out_dir / PROJECTS_FILE}); run the workflow with annotation.platform: label_studio first "
            "(rule label_studio_tasks), or name a task with --task."
        )
    answer = _run("push", {"projects": projects}, ls, f"creating projects {[p['title'] for p in projects]}")
    record = {"url": ls["url"], "projects": {t: v["id"] for t, v in answer["projects"].items()}}
    record["projects"] = {**pushed(out_dir, ls["url"]), **record["projects"]}  # a later push adds to this server's
    (out_dir / PROJECTS_FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    for t, v in answer["projects"].items():
        log.info(
            "task %s: project %s (%r), %d tasks imported in %.1f s", t, v["id"], v["title"], v["n_tasks"], v["seconds"]
        )
    return answer["projects"]


def pull(out_dir: str | Path, exports_dir: str | Path, ls: dict, *, tasks: tuple[str, ...] | None = None) -> dict:
    """Export every project of `<out_dir>/projects.json` as JSON into `<exports_dir>/<task>.json`."""
    record_path = Path(out_dir) / PROJECTS_FILE
    if not record_path.exists():
        raise UserError(
            f"{record_path} is missing: it is written by `squidflow label-studio push`. Push first, or "
            'write it by hand: {"url": ..., "projects": {"A": <project id>, "B": ...}}.'
        )
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, RecursionError, UnicodeDecodeError) as exc:
        raise UserError(f"{record_path}: not valid JSON ({str(exc)[:200]}); push again or fix the file.") from None
    projects = _projects(record, record_path, tasks)
    Path(exports_dir).mkdir(parents=True, exist_ok=True)
    out = {t: str(inside(exports_dir, f"{t}.json", what=f"{record_path}: task")) for t in projects}
    answer = _run(
        "pull",
        {"projects": projects, "out": out},
        ls,
        "exporting project(s) " + ", ".join(f"{t}={p}" for t, p in projects.items()),
    )
    for t, v in answer["exports"].items():
        log.info(
            "task %s: project %s exported, %d tasks, %d annotations in %.1f s -> %s",
            t,
            v["project"],
            v["n_tasks"],
            v["n_annotations"],
            v["seconds"],
            v["path"],
        )
    return answer["exports"]
