"""Issued tasks: the annotation tasks of every round, written once and never again (collected answers are data).

A round's tasks are what people were asked: an MTurk HIT row (its `hit_index` and its images), a Label Studio task
(its `data.hit` and its images). Once a round's tasks are written they are a record, not an output: the answers
collected on them match them by id, so a takedown, a new round, a changed config or a rerun of any stage never
changes them. Each round's tasks live under results/annotation/:

- round 1: `hits_A.csv`, `hits_B.csv` (rule annotation_hits); round k >= 2: `round<k>/hits_A.csv`, `round<k>/hits_B.csv`,
  `round<k>/plan.parquet` and `round<k>/chosen.csv` (rule next_round: the ratings per soft label planned from the
  judgments after round k-1, squidflow.judgments.allocation, and the soft labels that got some);
- their Label Studio tasks: `label_studio/A/`, `label_studio/B/`, `label_studio/A_round<k>/`, ...
  (rule label_studio_tasks);
- `issued/round<k>.json`: the settings the round was written with and each HITs file's sha256;
- `answers/label_studio/<task>.json`: the answers collected on them, as `squidflow label-studio pull` exported them
  (ANSWERS_DIR; what ingestion reads). They are data that cannot be collected again, kept with the tasks they answer:
  like the tasks, they keep the ids they were given after a takedown (ingestion leaves the video's answers out).

The workflow reads this record when it is parsed (workflow/rules/inputs/judgments.smk): a round whose HITs exist
has no rule that makes them (they are inputs the rules take as given), a Label Studio task folder whose tasks.json
exists likewise, and `check_issued` stops the run before any job when a file of the record was changed or when the
config asks for tasks other than those issued (a round's `images_per_hit`; round 1's `seed` and `pairs`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from squidflow.config.validation import ConfigError

ANNOTATION_DIR = "results/annotation"
ROUND1_HITS = {"A": f"{ANNOTATION_DIR}/hits_A.csv", "B": f"{ANNOTATION_DIR}/hits_B.csv"}
ISSUED_DIR = f"{ANNOTATION_DIR}/issued"
ANSWERS_DIR = f"{ANNOTATION_DIR}/answers/label_studio"  # `squidflow label-studio pull`'s exports, <task>.json
VARIANTS = ("A", "B")
ROUND_DIR = re.compile(r"^round([0-9]+)\Z")
# the settings that decide which images a round's HITs hold, per round kind (round 1: the pairing too)
ROUND1_SETTINGS = ("images_per_hit", "seed", "pairs")
NEXT_SETTINGS = ("images_per_hit",)


def round_dir(k: int) -> str:
    return f"{ANNOTATION_DIR}/round{k}"


def hits_paths(k: int) -> dict[str, str]:
    """Round k's HITs files, per variant."""
    return dict(ROUND1_HITS) if k == 1 else {v: f"{round_dir(k)}/hits_{v}.csv" for v in VARIANTS}


def plan_path(k: int) -> str:
    """Round k's plan (k >= 2; schemas.NEXT_ROUND_PLAN): the ratings per soft label its HITs were written from."""
    return f"{round_dir(k)}/plan.parquet"


def record_path(k: int) -> str:
    return f"{ISSUED_DIR}/round{k}.json"


def label_studio_task(variant: str, k: int) -> str:
    """The Label Studio task (project) of a variant's round: A, B, A_round2, B_round3, ..."""
    return variant if k == 1 else f"{variant}_round{k}"


def issued_rounds(root: str | os.PathLike = ".") -> list[int]:
    """The rounds whose HITs files are all written, in order (1 first)."""
    root = Path(root)
    found = [1] if all((root / p).is_file() for p in ROUND1_HITS.values()) else []
    folder = root / ANNOTATION_DIR
    if folder.is_dir():
        for entry in folder.iterdir():
            m = ROUND_DIR.match(entry.name)
            if m and int(m.group(1)) >= 2 and all((root / p).is_file() for p in hits_paths(int(m.group(1))).values()):
                found.append(int(m.group(1)))
    return sorted(found)


def settings(annotation: dict, k: int) -> dict:
    """What round k's tasks were (or would be) written with, from the config's `annotation` section."""
    keys = ROUND1_SETTINGS if k == 1 else NEXT_SETTINGS
    return {key: annotation[key] for key in keys}


def sha256(path: str | os.PathLike) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def record(annotation: dict, k: int, hits: dict[str, str | os.PathLike]) -> str:
    """issued/round<k>.json's text: the round, its settings and each written HITs file's sha256."""
    files = {v: {"path": hits_paths(k)[v], "sha256": sha256(p)} for v, p in sorted(hits.items())}
    return json.dumps({"round": k, "settings": settings(annotation, k), "files": files}, indent=1) + "\n"


def _read_record(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not readable as the record of an issued round ({str(exc)[:200]}).") from None
    return data if isinstance(data, dict) else {}


def _slots(path: Path) -> int:
    with path.open(encoding="utf-8") as fh:
        header = fh.readline()
    return len(re.findall(r"(?:^|,)image_[0-9]+_id(?=,|$)", header.strip()))


def check_issued(annotation: dict, rounds: list[int], root: str | os.PathLike = ".") -> None:
    """Stop (ConfigError naming the round and the fix) when an issued round's HITs file is not the one issued, or
    when the config asks for other tasks than a round was issued with."""
    root = Path(root)
    for k in rounds:
        rec_file = root / record_path(k)
        rec = _read_record(rec_file) if rec_file.is_file() else {}
        for v, path in hits_paths(k).items():
            want = ((rec.get("files") or {}).get(v) or {}).get("sha256")
            if want and sha256(root / path) != want:
                raise ConfigError(
                    f"{path}: round {k}'s variant-{v} tasks are not the ones issued (their sha256 is recorded in "
                    f"{record_path(k)}). Issued tasks are never rewritten: the answers collected on them match them "
                    "by id. Put the issued file back (from a backup or the copy you uploaded)."
                )
        recorded = dict(rec.get("settings") or {})
        if "images_per_hit" not in recorded:  # a round issued before its record was kept: its files say it
            recorded["images_per_hit"] = _slots(root / hits_paths(k)["A"])
        for key, was in recorded.items():
            now = annotation.get(key)
            if key in settings(annotation, k) and now != was:
                raise ConfigError(
                    f"annotation.{key} is {now!r}, but round {k}'s tasks ({', '.join(hits_paths(k).values())}) "
                    f"were issued with {key} {was!r}. Issued tasks are never rewritten (their answers match them by "
                    f"id): set annotation.{key} back to {was!r}, or make tasks of the new setting in another "
                    "results folder (--directory)."
                )


def next_round_number(rounds: list[int], answered: set[int]) -> int | None:
    """The round the workflow writes next: 2 while only round 1 is issued (or none yet: it is written in the same
    run); k+1 once round k (k >= 2) has answers to ingest; None while the latest round waits for its answers."""
    latest = max(rounds, default=1)
    if latest == 1:
        return 2
    return latest + 1 if latest in answered else None
