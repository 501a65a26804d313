"""GuessWhat?! games in: the dataset's JSON Lines files, reduced to what the litmus test reads (litmus test §3.2).

Each line of `guesswhat.{train,valid,test}.jsonl.gz` is one game: the image (`image.width`, `image.height`), the
candidate objects (`objects[i].id`, `.category`, `.category_id`, `.bbox` = MS-COCO [left, top, width, height]), the
target (`object_id`), the game's `status` and its question–answer turns (`qas[i].question`, `.answer`, `.id`).
Only first turns are used, as in the paper; the reader keeps every game (a first answer "N/A", or no turn at all, is
kept with that answer so that it can be counted) and the soft-label step leaves those out.

A malformed line stops the run with the file, the line number and the field (`objects[3].bbox`), because a game
silently dropped changes the counts the paper's tables are compared against.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from tqdm import tqdm

from squidflow.config.bounds import gzip_lines
from squidflow.contracts.io import json_lines
from squidflow.contracts.schemas import LITMUS_GAMES
from squidflow.errors import UserError
from squidflow.fetch import fetch

ANSWERS = {"yes": "yes", "no": "no", "n/a": "n/a", "na": "n/a"}
SPLITS = ("train", "valid", "test")
_SPLIT_RE = re.compile(r"(?:^|[._-])(train|valid|test)(?:[._-]|$)")


class GameFileError(UserError, ValueError):
    """A GuessWhat?! games file breaks the format; the message names the file, the line and the field."""


@dataclass(frozen=True)
class GameSource:
    """One games file: where to read it (`path`, local), what to call it in errors (`name`) and its split."""

    path: str
    split: str
    name: str = ""


def split_of(name: str) -> str:
    """The split in an official file name (guesswhat.train.jsonl.gz -> train)."""
    m = _SPLIT_RE.search(Path(str(name)).name)
    if not m:
        raise GameFileError(
            f"{name}: cannot tell its split (train, valid or test) from the file name; name it like the official "
            "files (guesswhat.test.jsonl.gz) or give it as {path: ..., split: test} in litmus.games"
        )
    return m.group(1)


def source_of(entry: str | dict[str, str]) -> tuple[str, str]:
    """A `litmus.games` entry (a path/URL, or {path, split}) -> (path, split)."""
    if isinstance(entry, dict):
        path = entry["path"]
        return path, entry.get("split") or split_of(path)
    return entry, split_of(entry)


def _open_lines(path: Path, name: str | None = None) -> Iterator[bytes]:
    """The file's lines as bytes (gzip or plain): io.json_lines decodes them, naming the line of a byte that is not
    UTF-8 or where a gzip stream breaks off. A gzip file unpacks to at most squidflow.config.bounds.gzip_allowance bytes."""
    with open(path, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    if gz:
        yield from gzip_lines(path, name or str(path), GameFileError)
        return
    with open(path, "rb") as fh:
        yield from fh


class _Line:
    """Field access that names the file, line and field when something is missing or has the wrong type."""

    def __init__(self, name: str, lineno: int):
        self.where = f"{name}, line {lineno}"

    def fail(self, field: str, problem: str) -> GameFileError:
        return GameFileError(
            f"{self.where}: field '{field}' {problem}. Each line must be one GuessWhat?! game in the dataset's JSON "
            "Lines format (see config/README.md, section litmus); fix or remove the line."
        )

    def get(self, obj: dict, key: str, field: str, kind: type | tuple[type, ...], *, optional: bool = False) -> Any:
        if not isinstance(obj, dict) or key not in obj or obj[key] is None:
            if optional:
                return None
            raise self.fail(field, "is missing")
        value = obj[key]
        if kind in (int, float) or kind == (int, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self.fail(field, f"must be a number, not {value!r}")
            if isinstance(value, float) and not math.isfinite(value):  # JSON's 1e999 reads as infinity
                raise self.fail(field, f"must be a finite number, not {value!r}")
            if kind is int and float(value) != int(value):
                raise self.fail(field, f"must be an integer, not {value!r}")
            return int(value) if kind is int else float(value)
        if not isinstance(value, kind):
            names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise self.fail(field, f"must be a {names}, not {type(value).__name__} {value!r}"[:200])
        return value


def _parse_object(at: _Line, obj: Any, field: str, seen: set[int]) -> dict[str, Any]:
    """One candidate object of a game (`field`: objects[i]), its id added to `seen`."""
    if not isinstance(obj, dict):
        raise at.fail(field, "must be a JSON object")
    oid = at.get(obj, "id", f"{field}.id", int)
    if oid in seen:
        raise at.fail(f"{field}.id", f"repeats object id {oid}")
    seen.add(oid)
    bbox = at.get(obj, "bbox", f"{field}.bbox", list)
    if len(bbox) != 4 or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in bbox):
        raise at.fail(f"{field}.bbox", f"must be 4 numbers [left, top, width, height], not {bbox!r}")
    if bbox[2] < 0 or bbox[3] < 0:
        raise at.fail(f"{field}.bbox", f"has a negative width or height: {bbox!r}")
    return {
        "object_id": oid,
        "category": at.get(obj, "category", f"{field}.category", str),
        "category_id": at.get(obj, "category_id", f"{field}.category_id", int, optional=True),
        "bbox": {"left": float(bbox[0]), "top": float(bbox[1]), "width": float(bbox[2]), "height": float(bbox[3])},
    }


def _first_qa(at: _Line, qas: list) -> dict[str, Any]:
    """The game's first question and its answer (Yes, No or N/A); None each for a game without questions."""
    if not qas:
        return {"qa_id": None, "question": None, "answer": None}
    qa = qas[0]
    if not isinstance(qa, dict):
        raise at.fail("qas[0]", "must be a JSON object")
    raw = at.get(qa, "answer", "qas[0].answer", str)
    answer = ANSWERS.get(raw.strip().lower())
    if answer is None:
        raise at.fail("qas[0].answer", f"= {raw!r} is not Yes, No or N/A")
    return {
        "qa_id": at.get(qa, "id", "qas[0].id", int, optional=True),
        "question": at.get(qa, "question", "qas[0].question", str),
        "answer": answer,
    }


def _parse_game(game: dict, name: str, lineno: int, split: str) -> dict[str, Any]:
    at = _Line(name, lineno)
    game_id = at.get(game, "id", "id", int)
    image = at.get(game, "image", "image", dict)
    width = at.get(image, "width", "image.width", (int, float))
    height = at.get(image, "height", "image.height", (int, float))
    for field, value in (("image.width", width), ("image.height", height)):
        if value <= 0:
            raise at.fail(field, f"must be positive, not {value}")
    objects_raw = at.get(game, "objects", "objects", list)
    if not objects_raw:
        raise at.fail("objects", "is empty: a game needs its candidate objects")
    seen: set[int] = set()
    objects = [_parse_object(at, obj, f"objects[{i}]", seen) for i, obj in enumerate(objects_raw)]
    target = at.get(game, "object_id", "object_id", int)
    if target not in seen:
        raise at.fail("object_id", f"= {target} is not the id of any of the game's objects {sorted(seen)}")
    qas = at.get(game, "qas", "qas", list)
    first = _first_qa(at, qas)
    return {
        "game_id": game_id,
        "split": split,
        "source": name,
        "line": lineno,
        "image_id": at.get(image, "id", "image.id", int, optional=True),
        "image_width": float(width),
        "image_height": float(height),
        "status": at.get(game, "status", "status", str),
        "target_object_id": target,
        "n_turns": len(qas),
        **first,
        "objects": objects,
    }


def read_games_file(path: str | Path, split: str, name: str | None = None) -> list[dict[str, Any]]:
    """Every game of one JSON Lines file (gzip or plain), as LITMUS_GAMES rows."""
    name = name or str(path)
    rows = []
    lines = tqdm(_open_lines(Path(path), name), desc=Path(name).name, unit=" games", mininterval=5)
    for lineno, game in json_lines(lines, name, what="one game as a JSON object", error=GameFileError):
        rows.append(_parse_game(game, name, lineno, split))
    if not rows:
        raise GameFileError(f"{name}: has no games (empty file); point litmus.games at a GuessWhat?! JSON Lines file")
    return rows


def read_games(sources: Iterable[GameSource]) -> pl.DataFrame:
    """The games of every file, one row each (LITMUS_GAMES); a game id seen twice is an error naming both places."""
    rows: list[dict[str, Any]] = []
    for src in sources:
        if src.split not in SPLITS:
            raise GameFileError(f"{src.name or src.path}: split {src.split!r} is not one of {SPLITS}")
        rows += read_games_file(src.path, src.split, src.name or src.path)
    where: dict[int, str] = {}
    for r in rows:
        here = f"{r['source']}, line {r['line']}"
        if r["game_id"] in where:
            raise GameFileError(
                f"{here}: field 'id' repeats game id {r['game_id']} of {where[r['game_id']]}; "
                "list each games file once in litmus.games"
            )
        where[r["game_id"]] = here
    return pl.DataFrame(rows, schema=LITMUS_GAMES.columns, strict=False)


def load_games(sources: Iterable[dict[str, str]], cache_dir: str | Path) -> pl.DataFrame:
    """Read the configured games files ({path, split, name}: a local path or a URL, fetched once into `cache_dir`)."""
    return read_games(
        GameSource(str(fetch(s["path"], cache_dir)), s["split"], s.get("name") or s["path"]) for s in sources
    )
