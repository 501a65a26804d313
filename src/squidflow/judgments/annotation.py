"""Annotation tasks (SQUID-E §3.2 "Task Variants", SQUID-E supplement A.2 and B): which six images a HIT shows, for which
event prompt, written as an MTurk batch input CSV plus the task page that MTurk fills in from it.

- Variant A: six images of the prompted event, from six different videos (when the event has fewer than six
  videos, images of one video are spread over as many HITs as possible and a warning says so).
- Variant B: three images of the prompted event and three of its most similar event. Each event's images are split
  in two halves: one half is rated under its own prompt, the other half is shown as the similar event's images
  under the partner's prompt, so every image is rated once per variant (as in the release: 1,800 images per
  variant). Pairs come from config (the paper's: birthday party–wedding, parade–protest, COVID test–medical
  procedure) or, for an event without one, from SBERT similarity between the events' descriptions.

The task page (`templates/hit_template.html`) uses MTurk's `${column}` placeholders; the batch CSV has one column
per placeholder. `render_task_page` fills them in (HTML-escaped) for a preview or a test.
"""

from __future__ import annotations

import html
import logging
import re
from collections import defaultdict
from importlib import resources

import numpy as np
import polars as pl

from squidflow.vocabulary.events import event_prompt

log = logging.getLogger(__name__)

PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_]+)\}")
# MTurk fills ${column} into the task page verbatim (no escaping): a batch CSV value is written with the characters
# that could open markup or close an attribute as character references. The config refuses them in a prompt and in
# annotation.image_base_url (schema patterns); this keeps a value that reaches the CSV another way inert.
MTURK_UNSAFE = {"<": "&lt;", ">": "&gt;", '"': "&quot;"}


def mturk_value(text: str) -> str:
    """`text` safe to be filled verbatim into the HTML of an MTurk task page (text, or an attribute in double quotes)."""
    return "".join(MTURK_UNSAFE.get(c, c) for c in str(text))


def mturk_text(value: str) -> str:
    """A value MTurk sends back (`Input.event_prompt`) as squidflow wrote it before `mturk_value`: exactly its
    character references undone, nothing else (issue 57: `rock & roll <live> concert` came back `rock & roll
    &lt;live&gt; concert` and was published so). Exact because a prompt may not hold them itself (the schema)."""
    for char, ref in MTURK_UNSAFE.items():
        value = value.replace(ref, char)
    return value


# --- events: pairs --------------------------------------------------------------------------------------------
def event_pairs(
    events: list[str],
    configured: list[list[str]],
    events_config: dict | None = None,
    *,
    embed=None,
) -> dict[str, str]:
    """Each event's most similar event: the configured pair if there is one, else the nearest by SBERT cosine
    similarity of the events' descriptions (config `events.<id>.description`, else the prompt)."""
    present = set(events)
    partner: dict[str, str] = {}
    for a, b in configured:
        if a in present and b in present and a not in partner and b not in partner:
            partner[a], partner[b] = b, a
    rest = [e for e in events if e not in partner]
    if rest and len(events) > 1:
        texts = [
            ((events_config or {}).get(e) or {}).get("description") or event_prompt(e, events_config) for e in events
        ]
        vectors = np.asarray((embed or sbert_embed)(texts), dtype=float)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        sim = vectors @ vectors.T
        np.fill_diagonal(sim, -np.inf)
        for e in rest:
            i = events.index(e)
            partner[e] = events[int(np.argmax(sim[i]))]
            log.info("variant B pairs %s with %s (SBERT similarity %.3f)", e, partner[e], sim[i].max())
    return partner


def sbert_embed(texts: list[str]) -> np.ndarray:
    """SBERT (all-MiniLM-L6-v2, packaged: no network) sentence embeddings, through the project's one loader."""
    from squidflow.encoders.text_embed import encode

    return encode(texts)


# --- HITs --------------------------------------------------------------------------------------------------------
def _interleave_by_video(frames: pl.DataFrame, rng: np.random.Generator) -> list[str]:
    """Image ids ordered so that consecutive images come from different videos (round robin over videos)."""
    groups = defaultdict(list)
    for vid, img in frames.select("video_id", "image_id").iter_rows():
        groups[vid].append(img)
    videos = sorted(groups)
    rng.shuffle(videos)
    for v in videos:
        rng.shuffle(groups[v])
    out = []
    while any(groups.values()):
        for v in videos:
            if groups[v]:
                out.append(groups[v].pop())
    return out


def _chunks(items: list, n: int) -> list[list]:
    return [items[i : i + n] for i in range(0, len(items), n)]


def _variant_a_hits(
    by_event: dict[str, pl.DataFrame], rng: np.random.Generator, images_per_hit: int
) -> list[tuple[str, list[str]]]:
    """Variant A: each event's own images, interleaved across its videos, `images_per_hit` to a HIT."""
    hits = []
    for e, frames in by_event.items():
        ordered = _interleave_by_video(frames, rng)
        n_videos = frames["video_id"].n_unique()
        if n_videos < images_per_hit:
            log.warning("event %s has %d videos (< %d): variant A HITs repeat videos", e, n_videos, images_per_hit)
        hits += [(e, chunk) for chunk in _chunks(ordered, images_per_hit)]
    return hits


def _variant_b_hits(
    by_event: dict[str, pl.DataFrame], pairs: dict[str, str], rng: np.random.Generator, images_per_hit: int
) -> list[tuple[str, list[str]]]:
    """Variant B: half of each HIT the event's own images, half its similar event's (`pairs`), shuffled together."""
    half = images_per_hit // 2
    own, lent = {}, {}
    for e, frames in by_event.items():
        ordered = _interleave_by_video(frames, rng)
        own[e], lent[e] = ordered[0::2], ordered[1::2]
    hits = []
    for e in by_event:
        p = pairs.get(e)
        if p is None or p not in lent:
            raise ValueError(f"variant B needs a similar event for {e!r}; set annotation.pairs in the config")
        targets, others = _chunks(own[e], half), _chunks(lent[p], half)
        for k, target in enumerate(targets):
            # the partner's images are lent once: a partner with fewer images leaves the last HITs short rather
            # than showing the same images twice under one prompt (a worker would rate them twice)
            other = others[k] if k < len(others) else []
            chunk = target + other[: len(target)]
            rng.shuffle(chunk)
            hits.append((e, chunk))
    return hits


def make_hits(
    frames: pl.DataFrame,
    variant: str,
    *,
    events_config: dict | None = None,
    pairs: dict[str, str] | None = None,
    images_per_hit: int = 6,
    base_url: str = "../dataset/images",
    seed: int = 0,
) -> pl.DataFrame:
    """One row per HIT: hit_index, variant, event, event_prompt, image_{i}_id, image_{i}_url, image_{i}_event."""
    rng = np.random.default_rng(seed + (0 if variant == "A" else 1))
    events = sorted(frames["event"].unique().to_list())
    by_event = {e: frames.filter(pl.col("event") == e).sort("image_id") for e in events}
    if variant == "A":
        hits = _variant_a_hits(by_event, rng, images_per_hit)
    elif variant == "B":
        hits = _variant_b_hits(by_event, pairs or {}, rng, images_per_hit)
    else:
        raise ValueError(f"unknown variant {variant!r} (A or B)")
    event_of = dict(frames.select("image_id", "event").iter_rows())
    path_of = {
        img: mturk_value(f"{base_url.rstrip('/')}/{vid}/{fi}.jpg")
        for img, vid, fi in frames.select("image_id", "video_id", "frame_index").iter_rows()
    }
    rows = []
    for k, (e, chunk) in enumerate(hits):
        row = {
            "hit_index": k,
            "variant": variant,
            "event": e,
            "event_prompt": mturk_value(event_prompt(e, events_config)),
        }
        for i in range(images_per_hit):
            img = chunk[i] if i < len(chunk) else ""
            row[f"image_{i + 1}_id"] = img
            row[f"image_{i + 1}_url"] = path_of.get(img, "")
            row[f"image_{i + 1}_event"] = event_of.get(img, "")
        rows.append(row)
    return pl.DataFrame(rows)


# --- CSV and HTML that are safe to open ---------------------------------------------------------------------------
# The neutralising CSV writer lives in squidflow.contracts.io (one writer for every CSV a person opens); these names stay
# importable from here.
def task_template() -> str:
    return resources.files("squidflow").joinpath("templates/hit_template.html").read_text(encoding="utf-8")


def render_task_page(template: str, hit: dict) -> str:
    """Fill MTurk's ${column} placeholders with a HIT's values, HTML-escaped (the data's text is never markup)."""
    return PLACEHOLDER.sub(lambda m: html.escape(str(hit.get(m.group(1), "")), quote=True), template)


def task_pages(hits_a: pl.DataFrame, dataset_images: set[str] | None = None) -> tuple[str, str]:
    """The MTurk task page and a preview of the first variant-A HIT (rows of hits_A.csv as written: neutralised cells
    read back as MTurk fills them in) whose images are all still in the dataset (`dataset_images`: a takedown's
    video is shown in no preview, though its issued HITs keep its ids)."""
    from squidflow.contracts.io import unneutralise

    template = task_template()
    rows = [
        {k: unneutralise(v) if isinstance(v, str) else v for k, v in r.items()} for r in hits_a.iter_rows(named=True)
    ]
    shown = [
        r
        for r in rows
        if dataset_images is None or all(r[c] in dataset_images for c in r if PLACEHOLDER_ID.match(c) and r[c])
    ]
    return template, render_task_page(template, shown[0] if shown else {})


PLACEHOLDER_ID = re.compile(r"^image_[0-9]+_id\Z")


def annotation_tasks(
    frames: pl.DataFrame, annotation: dict, events_config: dict | None, variants: tuple[str, ...] = ("A", "B")
) -> tuple[dict[str, pl.DataFrame], str, str]:
    """frames -> each variant's HITs (hits_{A,B}.csv), the MTurk task page, and a preview of the first variant-A HIT
    (`annotation`: the config section, its defaults filled in by the schema)."""
    events = sorted(frames["event"].unique().to_list())
    pairs = event_pairs(events, annotation["pairs"], events_config)
    hits = {
        v: make_hits(
            frames,
            v,
            events_config=events_config,
            pairs=pairs,
            images_per_hit=annotation["images_per_hit"],
            base_url=annotation["image_base_url"],
            seed=annotation["seed"],
        )
        for v in variants
    }
    template = task_template()
    first = hits["A"].row(0, named=True) if len(hits.get("A", [])) else {}
    return hits, template, render_task_page(template, first)
