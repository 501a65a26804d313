"""Events and their wording: the one place that says how an event is written and read back (SQUID-E §3.2, §4).

An event has an id (`birthday`, `covid-test`: config `events.<id>`, the release's dataset.csv) and a prompt, the
wording annotators saw (config `events.<id>.prompt`, else the release's wording "birthday party", else the id with
spaces). A judgment carries the prompt; every stage that needs the event back reads it through `prompt_to_event`, so
a spelling accepted by one stage is accepted by all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from squidflow.errors import InputError
from squidflow.vocabulary.release import PROMPTS

# An event id names files and jobs (`results/figures/frames_contact_sheets/<event>.png`, the `{event}` wildcard of
# workflow/rules/common.smk) and lands in the report's labels: letters, digits, `_` and `-` only, at most 64 of them.
EVENT_ID_PATTERN = r"[A-Za-z0-9_\-]+"
EVENT_ID_MAX = 64
_EVENT_ID = re.compile(EVENT_ID_PATTERN)


def check_event_id(event, where: str) -> str:
    """`event` when it is a usable event id, else an InputError naming `where` (file and row, or config key).

    Refused rather than slugged: an event id is also a config key (`events.<id>`) and the release's vocabulary, so a
    silently renamed event would lose its prompt and its judgments."""
    text = "" if event is None else str(event)
    if len(text) <= EVENT_ID_MAX and _EVENT_ID.fullmatch(text):
        return text
    shown = repr(text[:60]) + (f"... ({len(text)} characters)" if len(text) > 60 else "")
    why = (f"is longer than {EVENT_ID_MAX} characters" if len(text) > EVENT_ID_MAX
           else "is empty" if not text else "has characters other than letters, digits, '_' and '-'")  # fmt: skip
    raise InputError(
        f"{where}: event {shown} {why}; an event id names files and jobs. Write it as e.g. "
        "'birthday_party' (the wording annotators see goes in config events.<id>.prompt)."
    )


def normalise_event(text: str) -> str:
    """Case, `_`, `-` and runs of spaces do not distinguish events: "Birthday_party" == "birthday party"."""
    return " ".join(str(text).lower().replace("_", " ").replace("-", " ").split())


def event_prompt(event: str, events_config: Mapping | None = None) -> str:
    """The wording shown to annotators: config `events.<id>.prompt`, else the release's wording, else the id."""
    cfg = (events_config or {}).get(event) or {}
    return cfg.get("prompt") or PROMPTS.get(event) or event.replace("_", " ").replace("-", " ")


def prompt_to_event(events: Iterable[str], events_config: Mapping | None = None) -> dict[str, str]:
    """Every spelling of an event that a judgment prompt may carry (id, configured prompt, release wording), normalised
    -> the event id; the first of `events` to claim a spelling keeps it."""
    mapping: dict[str, str] = {}
    for event in events:
        spellings = [event, ((events_config or {}).get(event) or {}).get("prompt"), PROMPTS.get(event)]
        for s in spellings:
            if s:
                mapping.setdefault(normalise_event(s), event)
    return mapping
