"""Raters by pseudonym (`Ann<k>`) in everything people read or that is published (issue 57).

A platform's rater id identifies a person: an MTurk WorkerId links to the worker's public profile, a Label Studio
id is an e-mail address. The raw ids stay in the run's own tables under results/judgments/ (judgments.parquet, the
annotator report, rater_triage.parquet with its `annotator` and `pseudonym` columns: the owner's key), which are never
published. Everything else — the tables under results/tables/, the figures and the report, the triage's reasons
that name a partner rater, the published dataset — names a rater `Ann<k>` only.

One numbering for the run: the raters of the judgments, sorted by id, are Ann1, Ann2, ...; annotators of another
task only (the keyword task's) follow them. So the rater triage of the report and the published dataset say the same
Ann<k> for the same person.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import polars as pl

# Where the raw ids are, for the tables and the report to say so
RAW_IDS = (
    "results/judgments/rater_triage.parquet (columns annotator and pseudonym; judgments.parquet holds the ids too), "
    "which stays on this machine and is never published"
)


def pseudonyms(raters: Iterable[str], *others: Iterable[str]) -> dict[str, str]:
    """Every rater id -> `Ann<k>`, k by the raters' sorted ids; then the ids of `others` (another task's annotators)
    that are not raters, sorted, numbered after them. One person keeps one pseudonym across variants and tasks."""
    ids = sorted({str(a) for a in raters if a is not None})
    seen = set(ids)
    ids += sorted({str(a) for column in others for a in column if a is not None} - seen)
    return {a: f"Ann{k}" for k, a in enumerate(ids, start=1)}


def named(ids: Iterable[str], names: Mapping[str, str]) -> list[str]:
    """`ids` as their pseudonyms (an id the mapping lacks is shown as `Ann?`, never as itself)."""
    return [names.get(str(a), "Ann?") for a in ids]


def for_people(table: pl.DataFrame) -> pl.DataFrame:
    """A table with `annotator` (raw id) and `pseudonym` columns as people see it: the pseudonym in `annotator`."""
    return table.with_columns(pl.col("pseudonym").alias("annotator")).drop("pseudonym")


# What looks like a rater id in text anyone may read: an MTurk WorkerId (`A` and 11-20 capitals and digits, at least
# one digit), an e-mail address (a Label Studio user). Looked for in a published folder (`squidflow publish check`).
WORKER_ID = re.compile(r"(?<![A-Za-z0-9])A(?=[A-Z]*[0-9])[0-9A-Z]{11,20}(?![A-Za-z0-9])")
EMAIL = re.compile(r"(?<![\w.%+-])[\w.%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])")
_TOKEN = re.compile(r"[^\s,;:()\[\]{}\"'<>|=*`]+")


def findable(ids: Iterable[str]) -> set[str]:
    """The raw ids that can be looked for as words of a text: at least 4 characters and not a plain number (a
    Label Studio id `7` cannot be told from the number 7)."""
    return {str(a) for a in ids if a is not None and len(str(a)) >= 4 and not str(a).isdigit()}


def raw_ids_in(text: str, ids: set[str]) -> list[str]:
    """The ids of `ids` (see `findable`) that `text` holds as a word (a trailing `.` of a sentence aside)."""
    found = []
    for token in _TOKEN.findall(str(text)):
        for word in (token, token.rstrip(".")):
            if word in ids and word not in found:
                found.append(word)
    return found


def looks_like_ids(text: str) -> list[str]:
    """The strings of `text` that look like an MTurk WorkerId or an e-mail address."""
    return [*WORKER_ID.findall(str(text)), *EMAIL.findall(str(text))]


# The published columns that speak of raters: their names and the reasons they were left out (the other text columns
# come from the videos' sources and the task, where a rater id would be a coincidence of words, not a leak)
RATER_COLUMNS = ("annotator", "excluded_because")


def raw_ids_in_tables(
    tables: Mapping[str, pl.DataFrame], ids: Iterable[str], columns: tuple[str, ...] = RATER_COLUMNS
) -> list[str]:
    """`<config>.<column>: <id>` for every raw id (`ids`) that a rater column (`columns`) of the published `tables`
    holds."""
    wanted = findable(ids)
    out = []
    for config, table in tables.items():
        for column, dtype in table.schema.items():
            if dtype != pl.Utf8 or column not in columns:
                continue
            for value in table[column].drop_nulls().unique(maintain_order=True).to_list():
                out += [f"{config}.{column}: {a}" for a in raw_ids_in(value, wanted)]
    return sorted(set(out))
