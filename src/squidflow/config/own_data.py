"""What a config for your own videos and raters must say that the offline demo's defaults say for it (issue 47).

The schema's defaults are the offline demo's: `sources: [{type: demo}]`, `judgments.source: simulated` (the demo's
SIMULATED annotator panel, which rates the demo's synthetic videos from their truth table), training's demo events
and the demo videos' clean frames as its standard data. A config whose sources are not the demo's must not fall back
on any of them: `problems` names, before any job (`squidflow check-config` and the run alike), every key such a config
has to set, at once, with what to set it to. The publish keys (name, license, citation) are named here too, all of
them at once, with the licence id checked against the Hub's list (squidflow.vocabulary.licenses).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from squidflow.vocabulary import licenses

# Stages whose jobs read the judgments (or, with the demo's source, the demo's SIMULATED panels)
JUDGMENT_STAGES = ("judgments", "training", "evaluation", "publish", "text")
PUBLISH_KEYS = (
    ("name", "the dataset's id, e.g. my-events-dataset"),
    ("license", "a Hugging Face Hub licence id such as cc-by-4.0"),
    ("citation", "a BibTeX entry for the dataset"),
)
JUDGMENT_SOURCES_HELP = (
    "label_studio (your Label Studio exports: `squidflow label-studio pull` writes them to "
    "results/annotation/answers/label_studio/A.json and B.json), mturk (your MTurk batch-results CSVs in judgments.batches) "
    "or release (the SQUID-E release's judgments)"
)


def source_types(config: Mapping[str, Any]) -> list[str]:
    return [str(s.get("type")) for s in config.get("sources") or [] if isinstance(s, Mapping)]


def is_demo(config: Mapping[str, Any]) -> bool:
    """The offline demo (or a test of it): the demo's videos are among the sources."""
    return "demo" in source_types(config)


def _set_by_user(named: Mapping[str, Any] | None, *keys: str) -> bool:
    node: Any = named or {}
    for k in keys:
        if not isinstance(node, Mapping) or k not in node:
            return False
        node = node[k]
    return True


def run_events(config: Mapping[str, Any], base_dir: str | Path = ".") -> list[str]:
    """The events of the run as far as the config tells before any job: `events`, a youtube source's events, the
    sub-folders of a local source's root. Empty when none is known (a URL list names its events in its rows)."""
    found = list(config.get("events") or {})
    for s in config.get("sources") or []:
        if not isinstance(s, Mapping):
            continue
        if s.get("type") == "youtube":
            found += list(s.get("events") or {})
        elif s.get("type") == "local" and s.get("root"):
            root = Path(base_dir) / str(s["root"])
            if root.is_dir():
                found += sorted(e.name for e in os.scandir(root) if e.is_dir() and not e.name.startswith("."))
    return list(dict.fromkeys(found))


def judgment_source_problems(config: Mapping[str, Any], named: Mapping[str, Any] | None) -> list[str]:
    """`judgments.source: simulated` outside the demo, unless judgments.panel.truth declares what the panel sees
    (a benchmark's own clips): the SIMULATED panel rates images through a truth table, which only the demo's
    synthetic videos have of themselves; a user who left the default, or set it by mistake, is stopped here."""
    stages = set(config.get("stages") or [])
    judgments = config.get("judgments") or {}
    if is_demo(config) or judgments.get("source") != "simulated" or not stages & set(JUDGMENT_STAGES):
        return []
    if str((judgments.get("panel") or {}).get("truth") or "").strip():
        return []  # the truth is given (its file is checked with the other inputs, squidflow.config.check_inputs)
    types = ", ".join(sorted(set(source_types(config)))) or "none"
    needing = ", ".join(s for s in JUDGMENT_STAGES if s in stages)
    if not _set_by_user(named, "judgments", "source"):
        return [
            f"judgments.source is not set, and its default (simulated: the offline demo's SIMULATED annotator "
            f"panel, which rates the demo's synthetic videos) cannot rate videos from your sources ({types}), "
            f"which stages {needing} need. Set judgments.source: {JUDGMENT_SOURCES_HELP}."
        ]
    return [
        f"judgments.source is 'simulated' (the offline demo's SIMULATED annotator panel), which rates only the "
        f"demo's synthetic videos, but your sources are {types}. Set judgments.source: {JUDGMENT_SOURCES_HELP}; "
        "or add {type: demo} to sources for a demo run; or, for clips whose content you declare yourself (a "
        "benchmark's), set judgments.panel.truth to their truth table (squidflow.contracts.schemas.TRUTH)."
    ]


def training_problems(config: Mapping[str, Any], base_dir: str | Path = ".") -> list[str]:
    """Training outside the demo: its standard images (SD) and its events must be the run's own."""
    if "training" not in (config.get("stages") or []) or is_demo(config):
        return []
    out = []
    training = config.get("training") or {}
    if not str((config.get("standard_data") or {}).get("path") or "").strip():
        out.append(
            "stage training needs standard_data.path (the standard, high-certainty images SD of SQUID-E §5.1: "
            "a folder <path>/<event>/*.jpg or a Parquet file with image_path and event); its default, empty, "
            "means the demo videos' clean frames, which a run without the demo source does not make. Set "
            "standard_data.path, or remove training from stages."
        )
    events = run_events(config, base_dir)
    if "squid-e-release" in source_types(config) or not events:
        return out  # the release's events are its own (squidflow.vocabulary.release); a URL list's are in its rows
    classification = list((training.get("classification") or {}).get("events") or [])
    unknown = [e for e in classification if e not in events]
    if unknown:
        out.append(
            f"training.classification.events = {classification} names events this run has no videos of "
            f"({', '.join(unknown)}); the run's events are {events}. Set training.classification.events to "
            f"those you train on, e.g. {events[:4]}."
        )
    calibration = training.get("calibration") or {}
    pool = [e for e in classification if e in events] or events
    for key in ("target_event", "similar_event"):
        value = calibration.get(key)
        if value is not None and value not in pool:
            out.append(
                f"training.calibration.{key} = {value!r} is not one of the run's training events {pool}; set "
                f"training.calibration.{key} to one of them (SQUID-E §5.3's target and similar event)."
            )
    return out


def missing_publish_keys(publish: Mapping[str, Any]) -> list[str]:
    return [k for k, _ in PUBLISH_KEYS if not str(publish.get(k) or "").strip()]


def publish_problems(config: Mapping[str, Any]) -> list[str]:
    """Every empty publish key at once (outside the demo) and a licence that is not a Hub id."""
    publish = config.get("publish") or {}
    if "publish" not in (config.get("stages") or []):
        return []
    out = []
    demo = (config.get("judgments") or {}).get("source") == "simulated"
    missing = [] if demo else missing_publish_keys(publish)
    if missing:
        what = "; ".join(f"publish.{k}: {w}" for k, w in PUBLISH_KEYS if k in missing)
        one = len(missing) == 1
        out.append(
            f"publish.{', publish.'.join(missing)} {'is' if one else 'are'} empty: a published dataset needs "
            f"{'it' if one else 'them'} ({what}). Set {'it' if one else 'them'} in your config (config/README.md, "
            "section publish)."
        )
    return out + licenses.problems(dict(publish))


def storage_problems(config: Mapping[str, Any]) -> list[str]:
    """A local source whose root is in object storage (s3://) needs the Snakemake storage plugin that reads it."""
    import importlib.util

    out = []
    for i, s in enumerate(config.get("sources") or []):
        root = str(s.get("root") or "") if isinstance(s, Mapping) else ""
        if root.startswith("s3://") and importlib.util.find_spec("snakemake_storage_plugin_s3") is None:
            out.append(
                f"sources[{i}].root = '{root}': videos in S3 are read through snakemake-storage-plugin-s3, which is "
                "not installed; pip install snakemake-storage-plugin-s3 (README, Cloud and object storage)."
            )
    return out


def problems(
    config: Mapping[str, Any], named: Mapping[str, Any] | None = None, base_dir: str | Path = "."
) -> list[str]:
    """One line per key a config for your own data must set (see the module's docstring)."""
    return [
        *judgment_source_problems(config, named),
        *training_problems(config, base_dir),
        *publish_problems(config),
        *storage_problems(config),
    ]
