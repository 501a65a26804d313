"""Which configuration made a results folder: one results/ per configuration.

A run records, before its first job, the config files it read (their paths as given, and their contents) and the
configuration they made (every key, the schema's defaults filled in: what `squidflow config` prints for the same
arguments) in `results/report/run_config.yaml`, beside the run summary. The first config file names the
configuration (the demo's config/config.yaml, config/squid-e-release.yaml, ...); files after it are overlays on it
(a model added, a key changed). The next run in the same folder compares its first config file with the record's: the same one goes on
(overlays and edited contents too: Snakemake reruns what a changed key touches); another one
(`--configfile config/squid-e-release.yaml` in the demo's folder) stops the run before its first job, naming both
configurations and the fix: `--directory DIR`, one folder per configuration, or the top-level key
`replace_other_config: true` (`--config replace_other_config=true`) to replace the recorded results on purpose.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

RECORD = "results/report/run_config.yaml"


def _name(path: str | os.PathLike, repo_root: str | os.PathLike | None) -> str:
    """A config file as people name it: relative to the workflow's folder when it is inside it, else as given."""
    full = os.path.abspath(path)
    if repo_root is not None:
        rel = os.path.relpath(full, os.path.abspath(repo_root))
        if not rel.startswith(".."):
            return rel
    return str(path)


def current(
    configfiles: Sequence[str | os.PathLike],
    repo_root: str | os.PathLike | None = None,
    config: Mapping[str, Any] | None = None,
) -> dict:
    """The record of this run's configuration: each config file's name, sha256 and text (a proxy's password as
    `***`), in the order read, and the configuration they made (`config`: every key, the schema's defaults filled in,
    as `squidflow config` prints it for the same arguments; a proxy's password as `***`)."""
    from squidflow.fetch import redact_url_credentials

    files = []
    for f in dict.fromkeys(os.path.normpath(str(f)) for f in configfiles):
        data = Path(f).read_bytes() if os.path.exists(f) else b""
        files.append(
            {
                "file": _name(f, repo_root),
                "sha256": hashlib.sha256(data).hexdigest(),
                "text": redact_url_credentials(data.decode("utf-8", errors="replace")),
            }
        )
    record: dict[str, Any] = {"configfiles": files}
    if config is not None:
        record["config"] = redact(config)
    return record


def redact(value: Any) -> Any:
    """A configuration with every URL's password as `***` (squidflow.fetch.redact_url_credentials)."""
    from squidflow.fetch import redact_url_credentials

    if isinstance(value, Mapping):
        return {k: redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return redact_url_credentials(value) if isinstance(value, str) else value


def names(record: dict) -> list[str]:
    return [f["file"] for f in record.get("configfiles") or []]


def read(path: str | os.PathLike = RECORD) -> dict | None:
    """The recorded configuration, None when the folder has none (a fresh folder, or results from before 0.4)."""
    try:
        return yaml.safe_load(Path(path).read_text(encoding="utf-8")) or None
    except (OSError, yaml.YAMLError):
        return None


def conflict(recorded: dict | None, now: dict, *, folder: str | os.PathLike = ".", record: str = RECORD) -> str | None:
    """The message that stops a run whose first config file is not the one that made the folder's results (None: go
    on)."""
    if not recorded or names(recorded)[:1] == names(now)[:1]:
        return None
    was, new = " + ".join(names(recorded)) or "(none)", " + ".join(names(now))
    when = f" on {recorded['recorded']}" if recorded.get("recorded") else ""
    suggestion = Path(names(now)[-1]).stem if names(now) else "other-config"
    return (
        f"{os.path.abspath(folder)}/results holds the results of another configuration: {was} (recorded{when} in "
        f"{record}); this run reads {new}, and would overwrite them. Run each configuration in its own folder: add "
        f"`--directory runs/{suggestion}` (snakemake ... --directory DIR), or, to replace these results on purpose, "
        "add `--config replace_other_config=true`."
    )


def write(now: dict, path: str | os.PathLike = RECORD) -> None:
    """Record this run's configuration (atomically; the folder is made when missing)."""
    from squidflow.contracts.io import atomic_path

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    header = (
        "# The configuration that made this results/ folder (squidflow.runtime.run_record): a run whose first config "
        "file is another one stops before its first job.\n"
    )
    with atomic_path(path) as tmp:
        Path(tmp).write_text(
            header
            + yaml.dump({"recorded": stamp, **now}, Dumper=_Readable, sort_keys=False, allow_unicode=True, width=120),
            encoding="utf-8",
        )


class _Readable(yaml.SafeDumper):
    """Config texts as YAML literal blocks (`text: |`), readable as the files were written."""


def _text(dumper: yaml.SafeDumper, value: str):
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Readable.add_representer(str, _text)


def check_and_record(
    configfiles: Sequence[str | os.PathLike],
    *,
    replace: bool = False,
    repo_root: str | os.PathLike | None = None,
    folder: str | os.PathLike = ".",
    config: Mapping[str, Any] | None = None,
) -> str | None:
    """Before the first job: the stopping message when the folder holds another configuration's results (and
    `replace` is off); else record this configuration (the files and the `config` they made) and return None."""
    record = os.path.join(folder, RECORD)
    now = current(configfiles, repo_root, config)
    message = conflict(read(record), now, folder=folder)
    if message and not replace:
        return message
    write(now, record)
    return None
