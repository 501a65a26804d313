"""`squidflow init FOLDER`: a config of your own for a folder of videos in event sub-folders (FOLDER/<event>/*.mp4):
the events from the folder names, a `local` source, the annotation platform and the judgment source that goes with
it, the `publish` keys to fill, and nothing of the demo's (no simulated component). A run with `--configfile` reads
it on the schema's defaults alone (the demo's config/config.yaml is read only when no config file is given:
squidflow.config.layers), so it sets every key whose default would not fit your videos.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import yaml

from squidflow.config.validation import ConfigError
from squidflow.vocabulary.events import check_event_id

VIDEO_EXTENSIONS = ("mp4", "mkv", "webm", "avi", "mov", "m4v")
PLATFORM_SOURCE = {"label_studio": "label_studio", "mturk": "mturk"}


def events_in(folder: Path) -> dict[str, int]:
    """event -> number of videos, from the sub-folders of `folder` that hold a video."""
    out = {}
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
        videos = [f for f in sub.iterdir() if f.is_file() and f.suffix.lower().lstrip(".") in VIDEO_EXTENSIONS]
        if videos:
            check_event_id(sub.name, where=str(sub))
            out[sub.name] = len(videos)
    return out


def dataset_name(folder: Path) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", folder.resolve().name).strip("-._")
    return name or "my-dataset"


def config_for(
    folder: Path,
    *,
    directory: Path,
    platform: str = "label_studio",
    name: str = "",
    license_id: str = "",
    citation: str = "",
    video_license: str | None = None,
) -> dict:
    """The config (a dict) for `folder`, its root written relative to the run's `directory` when it is inside it.
    The videos' licence is `video_license` or null ("unknown" on the card: never guessed); `images_per_hit` is left
    at the paper's (the schema's default) unless an event has fewer videos than that (`forced_settings` says why)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(
            f"{folder}: no such folder; give the folder that holds one sub-folder of videos per event "
            f"(FOLDER/<event>/*.mp4; {', '.join(VIDEO_EXTENSIONS)})."
        )
    events = events_in(folder)
    if len(events) < 2:
        raise ConfigError(
            f"{folder}: {len(events)} event sub-folder(s) with videos ({', '.join(events) or 'none'}); "
            "squidflow needs at least two events (variant B rates an image under a similar event's "
            "prompt). Put each event's videos in a sub-folder named for the event."
        )
    root = os.path.relpath(folder.resolve(), Path(directory).resolve())  # the run's paths are relative to it
    if Path(root).parts[:3] == ("..", "..", ".."):  # far away: where it is
        root = str(folder.resolve())
    annotation: dict = {"platform": platform}
    forced = forced_settings(events)
    if forced:
        annotation["images_per_hit"] = forced["images_per_hit"][0]
    annotation |= {"assignments_per_hit": 3, "next_round": {"budget": 36}}  # ratings a round (12 HITs of three)
    if platform == "label_studio":  # the README's Label Studio steps: the server serves the run's images itself
        annotation["label_studio"] = {"images": "local_files"}
    return {
        "stages": ["videos", "frames", "judgments", "publish"],
        "sources": [{"type": "local", "root": root, "license": video_license or None}],
        "events": {e: {"prompt": e.replace("_", " "), "description": e.replace("_", " ")} for e in events},
        "annotation": annotation,
        "judgments": {"source": PLATFORM_SOURCE[platform], "quality": {"exclude": "triage"}},
        "publish": {
            "name": name or dataset_name(folder),
            "license": license_id,
            "citation": citation,
            "images": "embed",
        },
    }


def forced_settings(events: dict[str, int]) -> dict[str, tuple[int, str]]:
    """The settings a folder forces away from their defaults, each with why: variant A shows images of different
    videos of an event (the paper's six per HIT, an even number: variant B shows half of each event), so an event
    with fewer videos makes the HITs smaller."""
    from squidflow.config.validation import schema_default

    default = int(schema_default("annotation.images_per_hit"))
    fewest = min(events.values())
    if fewest >= default:
        return {}
    n = max(2, fewest // 2 * 2)
    few = ", ".join(f"{e} ({k})" for e, k in events.items() if k < default)
    why = (
        f"annotation.images_per_hit: {n}, not {default}: variant A shows images of different videos of an event, "
        f"and these events have fewer than {default} videos: {few}"
    )
    return {"images_per_hit": (n, why)}


HEADER = """\
# squidflow config for your own videos in {folder} (written by `squidflow init`; every key: config/README.md).
# Events: {events} (the sub-folders). Judgments: {platform}; nothing of the offline demo (no simulated panel).
# Check it, then run the journey of README.md, "Build your own dataset":
#   .venv/bin/squidflow check-config --configfile {config}{dir_flag}
#   .venv/bin/snakemake --configfile {config}{dir_flag} --cores 2 {targets}
# Read on the schema's defaults (never on the demo's config/config.yaml); `squidflow config` with the same arguments
# prints every key a run reads.
"""
NEXT_TARGETS = {
    "label_studio": "results/annotation/label_studio/A/tasks.json results/annotation/label_studio/B/tasks.json",
    "mturk": "results/annotation/hits_A.csv results/annotation/hits_B.csv results/annotation/hit_template.html",
}


def one_line(value: str | Path, what: str) -> str:
    """`value` as it may go into the config's comments: refused (ConfigError naming it) when it holds a line break or
    another character YAML would not keep in a comment (a folder named `x\nretry_failed: true` would write a live
    key; issue 57). Every other value is written by the YAML emitter."""
    text = str(value)
    if not text.isprintable():
        bad = next(c for c in text if not c.isprintable())
        raise ConfigError(
            f"{what} {text[:120]!r} holds {bad!r} (a line break or control character), which would end the "
            "config's comment line and write what follows as keys; rename it (letters, digits, spaces, `._-/`) "
            "and run squidflow init again."
        )
    return text


def write_config(
    folder: Path,
    out: Path,
    *,
    directory: Path,
    platform: str = "label_studio",
    name: str = "",
    license_id: str = "",
    citation: str = "",
    force: bool = False,
    video_license: str | None = None,
) -> dict:
    out = Path(out)
    one_line(folder, "squidflow init: the folder")
    one_line(out, "squidflow init: --output")
    if out.exists() and not force:
        raise ConfigError(f"{out} exists; give another --output or --force to replace it.")
    config = config_for(
        folder,
        directory=directory,
        platform=platform,
        name=name,
        license_id=license_id,
        citation=citation,
        video_license=video_license,
    )
    text = HEADER.format(
        folder=folder,
        events=", ".join(config["events"]),
        platform=platform,
        config=out,
        dir_flag="" if Path(directory) == Path(".") else f" --directory {directory}",
        targets=NEXT_TARGETS[platform],
    )
    for _, why in forced_settings(events_in(Path(folder))).values():
        text += f"# {why}.\n"
    if not video_license:
        text += (
            "# The videos' licence is unknown (sources[0].license: null; the card says `unknown`): set it, e.g. "
            "cc-by-4.0, or give --video-license.\n"
        )
    body = yaml.safe_dump(config, sort_keys=False, allow_unicode=True, width=110)
    todo = [k for k in ("license", "citation") if not config["publish"][k]]
    if todo:
        text += (
            "# To fill before publishing: "
            + ", ".join(f"publish.{k}" for k in todo)
            + " (a Hugging Face Hub licence id such as cc-by-4.0; a BibTeX entry).\n"
        )
    out.write_text(text + body, encoding="utf-8")
    return config
