"""Which labels count as correct for an image, and whether the labels are the ones the model family knows.

SQUID-E §5.2 scores situation-recognition models on its parade and protest images by the imSitu verbs of those
events (supplement D.2): `evaluation.label_map` maps each event to the labels that count as correct (`parade:
[parading]`). A judged image's event is the event its judgment prompt names — for variant A, the event of the
image's own video — matched to the map's keys by event id, its configured prompt, or the release's wording
("birthday party" is `birthday`/`birthday_party`).

A label outside the model family's vocabulary (`evaluation.vocabulary`, e.g. the 504 imSitu verbs) can never be
predicted or can never be right; such labels are counted and named in the log and the table captions rather than
silently scored as wrong.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from squidflow.errors import UserError
from squidflow.vocabulary.events import normalise_event, prompt_to_event

log = logging.getLogger(__name__)


def judged_events(
    prompts: pl.Series, label_map: Mapping[str, list[str]], events_config: Mapping | None = None
) -> pl.Series:
    """The label_map key each judgment prompt names (null when the prompt's event is not in the map)."""
    mapping = prompt_to_event(label_map, events_config)
    return prompts.map_elements(lambda p: mapping.get(normalise_event(p)), return_dtype=pl.Utf8)


# --- vocabulary --------------------------------------------------------------------------------------------------
class VocabularyError(UserError, ValueError):
    """A label list that cannot be read."""


def read_vocabulary(path: str | Path) -> list[str]:
    """A label list from a local file: imSitu's `imsitu_space.json` (the keys of `verbs`), a JSON list, a
    tab-separated `id<TAB>label` file (imSitu's verb_id.tab), or one label per line."""
    path = Path(path)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad_line = raw[: exc.start].count(b"\n") + 1
        raise VocabularyError(
            f"{path} line {bad_line}: byte 0x{raw[exc.start : exc.start + 1].hex()} is not UTF-8; save the "
            "label list as UTF-8"
        ) from None
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            why = "nested too deeply" if isinstance(exc, RecursionError) else exc
            raise VocabularyError(
                f"{path}: not valid JSON ({why}); expected imsitu_space.json or a JSON list of labels"
            ) from exc
        if isinstance(data, dict) and isinstance(data.get("verbs"), dict):
            return list(data["verbs"])
        if isinstance(data, list) and all(isinstance(x, str) for x in data):
            return list(data)
        raise VocabularyError(
            f"{path}: expected an object with a `verbs` object (imsitu_space.json) or a list of strings"
        )
    labels = []
    for line_no, text_line in enumerate(text.splitlines(), start=1):
        line = text_line.strip()
        if not line:
            continue
        fields = line.split("\t")
        if len(fields) > 2:
            raise VocabularyError(
                f"{path}: line {line_no} has {len(fields)} tab-separated fields; expected "
                "`id<TAB>label` or one label per line"
            )
        labels.append(fields[-1].strip())
    if not labels:
        raise VocabularyError(f"{path}: no labels in it")
    return labels


@dataclass(frozen=True)
class VocabularyReport:
    """Labels outside the vocabulary: in the label map, and among a model's predicted labels (with their rows)."""

    vocabulary_size: int
    map_outside: list[str]
    predicted_outside: list[str]
    predicted_outside_rows: int

    def to_dict(self) -> dict:
        return {
            "vocabulary_size": self.vocabulary_size,
            "map_labels_outside_vocabulary": self.map_outside,
            "predicted_labels_outside_vocabulary": self.predicted_outside,
            "prediction_rows_outside_vocabulary": self.predicted_outside_rows,
        }


def check_vocabulary(
    predicted: pl.Series, label_map: Mapping[str, list[str]], vocabulary: list[str] | None, *, where: str = ""
) -> VocabularyReport | None:
    """Count the labels of the map and of the predictions that the vocabulary lacks; None without a vocabulary."""
    if vocabulary is None:
        return None
    known = set(vocabulary)
    map_outside = sorted({lab for labs in label_map.values() for lab in labs} - known)
    outside_mask = ~predicted.is_in(list(known))
    predicted_outside = sorted(set(predicted.filter(outside_mask).to_list()))
    report = VocabularyReport(len(known), map_outside, predicted_outside, int(outside_mask.sum()))
    if map_outside:
        log.warning(
            "evaluation.label_map: %d label(s) not in the vocabulary (%d labels): %s — they can never be "
            "predicted by a model of that vocabulary",
            len(map_outside),
            len(known),
            map_outside,
        )
    if predicted_outside:
        log.warning(
            "%s: %d prediction row(s) carry %d label(s) not in the vocabulary: %s",
            where or "predictions",
            report.predicted_outside_rows,
            len(predicted_outside),
            predicted_outside[:20],
        )
    return report
