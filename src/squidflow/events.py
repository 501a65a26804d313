"""Events and their wording: the one place that says how an event is written and read back (SQUID-E §3.2, §4).

An event has an id (`birthday`, `covid-test`: config `events.<id>`, the release's dataset.csv) and a prompt, the
wording annotators saw (config `events.<id>.prompt`, else the release's wording "birthday party", else the id with
spaces). A judgment carries the prompt; every stage that needs the event back reads it through `prompt_to_event`, so
a spelling accepted by one stage is accepted by all.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from squidflow.release import PROMPTS


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
