"""The methods a run's published dataset was made with, one record per change (issue 58, item 4).

The published version follows what changed: a next round of ratings raises the minor number, a removal on request
the patch number (squidflow.videos.takedown.published_version), and a change of method raises the minor number too.
A change of method is a change of a setting that makes other published data from the same videos and answers
(METHOD_KEYS: which events and prompts, how frames are chosen, how ratings become soft labels and which raters are
left out, the intervals, the splits), not of where files go or how fast a job runs.

The run keeps `results/publish/methods/<n>.json`, the n-th method its publications used, each written once: when
the workflow is parsed it reads them (`recorded`), and when the config's method is not the latest one recorded
(`next_method`) rule method_record writes the next. The version counts the changes (`changes`); the card's
"Changes" names the keys each one changed, never a value that could name a video or a rater.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from squidflow.config.validation import ConfigError

METHODS_DIR = "results/publish/methods"
METHOD_KEYS = (
    "events",
    "frames.n",
    "features.backbone",
    "selection",
    "splits",
    "intervals",
    "judgments.aggregation",
    "judgments.pooling",
    "judgments.quality",
    "judgments.triage",
)
RECORD = re.compile(r"^([0-9]+)\.json\Z")


def record_path(n: int) -> str:
    return f"{METHODS_DIR}/{n}.json"


def method(config: Mapping) -> dict:
    """The config's method: METHOD_KEYS' values (None for one the config has not), as JSON would hold them."""
    out = {}
    for key in METHOD_KEYS:
        value: object = config
        for part in key.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        out[key] = value
    return json.loads(json.dumps(out, sort_keys=True, default=str))


def recorded(root: str | os.PathLike = ".") -> list[dict]:
    """The methods recorded under results/publish/methods/, in order (1 first): {"n", "method"} each."""
    folder = Path(root) / METHODS_DIR
    found = []
    if folder.is_dir():
        for entry in folder.iterdir():
            m = RECORD.match(entry.name)
            if m:
                try:
                    data = json.loads(entry.read_text(encoding="utf-8"))
                except (OSError, ValueError) as exc:
                    raise ConfigError(
                        f"{entry}: not readable as a record of the methods published ({str(exc)[:200]}); put it back "
                        "from a backup or delete the folder results/publish/methods/ to start the count again."
                    ) from None
                found.append({"n": int(m.group(1)), "method": data.get("method") if isinstance(data, dict) else None})
    return sorted(found, key=lambda r: r["n"])


def next_method(config: Mapping, records: list[dict]) -> int | None:
    """The number of the method record to write: 1 with none yet, the latest + 1 when the config's method is not the
    latest recorded; None when it is."""
    if not records:
        return 1
    return None if records[-1]["method"] == method(config) else records[-1]["n"] + 1


def record_text(settings: Mapping, n: int) -> str:
    """results/publish/methods/<n>.json's text: `settings` is `method(config)`."""
    return json.dumps({"n": n, "method": dict(settings)}, indent=1, sort_keys=True) + "\n"


def changes(records: list[dict]) -> list[list[str]]:
    """Per change of method after the first (in order): the METHOD_KEYS it changed."""
    return [
        [k for k in METHOD_KEYS if (a["method"] or {}).get(k) != (b["method"] or {}).get(k)]
        for a, b in zip(records, records[1:], strict=False)
    ]
