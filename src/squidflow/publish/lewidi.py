"""The judgments in the LeWiDi 2025 JSON format (Learning with Disagreements, 3rd edition: one JSON object per split,
item id -> item), so that a squidflow dataset is scored by the learning-with-disagreement community's own code.

One item per image and prompt of a variant: `annotators` (comma-separated pseudonyms), `annotations` (pseudonym ->
rating as a string), `number of annotators`, `number of annotations`, `soft_label` (the share of the ratings in each
certainty bin, each rating binned on its own as in SQUID-E supplement D.3), `split` (train | dev | test), `lang`, and
`other_info` with the image id and the prompt. The ratings are those of `soft_labels` (first round, annotators the
quality step excluded left out). `<name>_annotators_meta.json`: pseudonym -> what publish.annotators.meta says of the
annotator, "not collected" otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from squidflow.contracts.image_ids import image_id
from squidflow.statistics.certainty import CERTAINTY_BINS, certainty_bin_of

LEWIDI_SPLITS = {"train": "train", "validation": "dev", "test": "test"}
TASK = "event uncertainty rating (0-100)"


def _annotations(annotators: list[str], ratings: list[int]) -> dict[str, str]:
    """pseudonym -> rating; a pseudonym rating the item again (the release repeats a few images in a variant, and
    its annotators are rating positions) gets `#2`, `#3`."""
    out: dict[str, str] = {}
    for a, r in zip(annotators, ratings, strict=True):
        key, k = a, 1
        while key in out:
            k += 1
            key = f"{a}#{k}"
        out[key] = str(int(r))
    return out


def items(rated: pl.DataFrame, names: Mapping[str, str], splits: Mapping[str, str]) -> dict[str, dict[str, dict]]:
    """variant -> LeWiDi split -> {item id: item} from squidflow.publish.tables.rated_items; `splits`: image id ->
    the `datasets` split."""
    out: dict[str, dict[str, dict]] = {}
    for row in rated.sort("variant", "video_id", "frame_index", "event_prompt").iter_rows(named=True):
        img = image_id(row["video_id"], row["frame_index"])
        split = LEWIDI_SPLITS[splits.get(img, "test")]
        ann = _annotations([names[a] for a in row["annotators"]], row["ratings"])
        counts = {b: 0 for b in CERTAINTY_BINS}
        for r in row["ratings"]:
            counts[certainty_bin_of(float(r))] += 1
        n = max(len(row["ratings"]), 1)
        item = {
            "annotation task": TASK,
            "text": {"image_id": img, "prompt": row["event_prompt"]},
            "number of annotators": len(set(row["annotators"])),
            "annotators": ",".join(ann),
            "number of annotations": len(row["ratings"]),
            "annotations": ann,
            "soft_label": {b: c / n for b, c in counts.items()},  # full precision: the shares sum to 1 within 1e-15
            "split": split,
            "lang": "en",
            "other_info": {
                "image_id": img,
                "prompt": row["event_prompt"],
                "video_id": row["video_id"],
                "frame_index": row["frame_index"],
                "variant": row["variant"],
            },
        }
        out.setdefault(row["variant"], {}).setdefault(split, {})[f"{img}|{row['event_prompt']}"] = item
    return out


# Fields of publish.annotators.meta that would name the person behind a pseudonym (compared lowercase, letters and
# digits only): refused, as is any value that holds an annotator's id as the judgments table has it.
IDENTITY_FIELDS = {
    "annotatorid",
    "annotator",
    "workerid",
    "worker",
    "id",
    "assignmentid",
    "hitid",
    "userid",
    "user",
    "username",
    "name",
    "fullname",
    "email",
    "emailaddress",
    "participantid",
    "participant",
    "raterid",
    "rater",
    "prolificid",
    "mturkid",
    "ip",
    "ipaddress",
}


def _identity_problems(original: str, known: Mapping, ids: set[str]) -> list[str]:
    out = []
    for field, value in known.items():
        where = f"publish.annotators.meta.{original}.{field}"
        if "".join(c for c in str(field).lower() if c.isalnum()) in IDENTITY_FIELDS:
            out.append(
                f"{where}: an identity field; the published files carry the annotator's pseudonym only. Remove it."
            )
        elif not isinstance(value, (str, int, float, bool)) and value is not None:
            out.append(f"{where}: a {type(value).__name__}; give one plain value (text or a number).")
        elif any(i == str(value) or (len(i) >= 4 and i in str(value)) for i in ids):
            out.append(f"{where}: holds an annotator id ({str(value)[:40]!r}), which the pseudonyms hide. Remove it.")
    return out


def annotators_meta(names: Mapping[str, str], meta: Mapping[str, Mapping]) -> dict[str, dict]:
    """pseudonym -> {"Annotator_id": pseudonym, ...publish.annotators.meta of the annotator}; "not collected" when
    the config says nothing of them (never invented). A field that would name the person (an id, a name, an email,
    or a value holding an annotator id) is refused with its key: the pseudonyms are the point."""
    from squidflow.errors import UserError

    ids = {str(i) for i in [*names, *meta]}
    problems = [p for original, known in meta.items() if isinstance(known, Mapping)
                for p in _identity_problems(str(original), known, ids)]  # fmt: skip
    if problems:
        raise UserError(problems[0] + (f" ({len(problems) - 1} more such fields)" if len(problems) > 1 else ""))
    out = {}
    for original, pseudonym in sorted(names.items(), key=lambda kv: int(kv[1][3:])):
        known = meta.get(original)
        out[pseudonym] = {
            "Annotator_id": pseudonym,
            **({k: v for k, v in known.items()} if known else {"demographics": "not collected"}),
        }
    return out
