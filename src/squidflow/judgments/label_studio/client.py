"""The calls to a running Label Studio server, through `label-studio-sdk` — and nothing of squidflow.

This file imports only the standard library and `label_studio_sdk`, so it can run in whichever Python has the SDK:
`label-studio-sdk` pins numpy < 2.3 and other packages squidflow's environment has newer, so it is not installed
there; `squidflow label-studio push|pull` runs this file with the Python of the Label Studio virtualenv (or any
Python with the SDK: `annotation.label_studio.sdk_python`). The request comes as JSON on stdin, the answer goes as
JSON to stdout. The API token is read from the environment variable the request names, and is never written,
logged or echoed.

    push: {"url", "token_env", "projects": [{"task", "title", "label_config", "instructions", "tasks_file",
           "local_files_path"?}]} -> {"projects": {task: {"id", "title", "n_tasks", "seconds"}}}
    pull: {"url", "token_env", "projects": {task: id}, "out": {task: path}} -> {"exports": {task: {...}}}
"""

from __future__ import annotations

import json
import os
import sys
import time

IMPORT_BATCH = 2000  # tasks per import request (Label Studio takes a JSON list; big lists are slow to parse at once)


def _client(request: dict):
    from label_studio_sdk import LabelStudio

    token = os.environ.get(request["token_env"], "")
    if not token:
        raise SystemExit(
            json.dumps(
                {
                    "error": f"the environment variable {request['token_env']} is empty: set it to "
                    "your Label Studio personal access token (Account & Settings > Personal Access Token; "
                    "Label Studio 1.22 and later disable the legacy tokens)"
                }
            )
        )
    return LabelStudio(base_url=request["url"], api_key=token, timeout=600)


def push(request: dict) -> dict:
    client = _client(request)
    out, storages = {}, {}
    for p in request["projects"]:
        t0 = time.perf_counter()
        project = client.projects.create(
            title=p["title"],
            label_config=p["label_config"],
            expert_instruction=p["instructions"],
            show_instruction=True,
            show_skip_button=True,
            maximum_annotations=p.get("maximum_annotations", 1),
        )
        if p.get("local_files_path"):
            storage = client.import_storage.local.create(
                project=project.id, path=p["local_files_path"], title="squidflow images", use_blob_urls=False
            )
            storages[p["task"]] = storage.id
        with open(p["tasks_file"], encoding="utf-8") as f:
            tasks = json.load(f)
        for i in range(0, len(tasks), IMPORT_BATCH):
            client.projects.import_tasks(id=project.id, request=tasks[i : i + IMPORT_BATCH], commit_to_project=True)
        out[p["task"]] = {
            "id": project.id,
            "title": p["title"],
            "n_tasks": len(tasks),
            "seconds": round(time.perf_counter() - t0, 3),
        }
    return {"projects": out, "storages": storages}


def pull(request: dict) -> dict:
    client = _client(request)
    emails = {u.id: u.email for u in client.users.list()}
    out = {}
    for task, pid in request["projects"].items():
        t0 = time.perf_counter()
        raw = b"".join(client.projects.exports.download_sync(int(pid), export_type="JSON", download_all_tasks=True))
        export = json.loads(raw)
        for t in export:
            for a in t.get("annotations") or []:
                who = a.get("completed_by")
                if isinstance(who, int):
                    a["completed_by"] = {"id": who, "email": emails.get(who, f"user-{who}")}
        path = request["out"][task]
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        tmp = f"{path}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(export, f, ensure_ascii=False)
        os.replace(tmp, path)
        out[task] = {
            "project": int(pid),
            "path": path,
            "n_tasks": len(export),
            "n_annotations": sum(len(t.get("annotations") or []) for t in export),
            "seconds": round(time.perf_counter() - t0, 3),
        }
    return {"exports": out}


def _redact(text: str, request: dict) -> str:
    """`text` with the API token (and the download proxy squidflow hands over) replaced by `***`: a server may echo
    the request's headers in its error body. squidflow redacts again (label_studio.server.redact)."""
    secrets = {
        os.environ.get(str(request.get("token_env") or "LABEL_STUDIO_API_KEY"), ""),
        os.environ.get("SQUIDFLOW_DOWNLOAD_PROXY", ""),
    }
    for secret in sorted((s for s in secrets if len(s) >= 4), key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def main() -> int:
    command = sys.argv[1]
    request = json.load(sys.stdin)
    try:
        answer = {"push": push, "pull": pull}[command](request)
    except SystemExit:
        raise
    except Exception as exc:  # the SDK's ApiError carries the server's answer: pass its status and body on
        body = getattr(exc, "body", None)
        status = getattr(exc, "status_code", None)
        what = f"HTTP {status}: {json.dumps(body)}" if status else f"{type(exc).__name__}: {exc}"
        print(json.dumps({"error": _redact(what, request)[:1500]}))  # redacted before it is cut: no token in part
        return 1
    print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
