"""The SIMULATED keyword panel of the offline demo: answers to the keyword task (variant K, "Apples to Oranges" §3).

Annotators answer from each frame's known content (schemas.TRUTH): they name words of the events visible in the frame
(the demo's phrase banks), in proportion to their evidence, and the condition when the picture is black, dark,
blurred or blocked. The answers are an MTurk batch-results CSV that `squidflow.judgments.keywords` reads back like a
real one.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import polars as pl

from squidflow.config.validation import defaults_from_schema
from squidflow.contracts.io import unneutralise
from squidflow.demo.panel import truth_lookup
from squidflow.demo.text import EN, GENERIC
from squidflow.judgments.keywords import VARIANT

log = logging.getLogger(__name__)

FUNCTION_WORDS = frozenset(
    "a an the and or of in on at to by for with from over across behind into up out all every each their his her its "
    "our your them they it is are be that this one two some very just says held high tied lit long small big huge "
    "giant matching other another same lined down around".split()
)
CONDITION_WORDS = {
    "black": ["black", "dark", "nothing", "blank", "screen"],
    "dark": ["dark", "night", "shadows", "dim"],
    "blur": ["blurry", "blur", "unfocused"],
    "occlusion": ["grey", "blocked", "bar"],
}
CONDITION_SHARE = {"black": 1.0, "dark": 0.3, "blur": 0.3, "occlusion": 0.25}


@dataclass(frozen=True)
@defaults_from_schema("text.gold.panel", keywords_per_image="text.gold.keywords_per_image")
class KeywordPanelConfig:
    annotators: int
    assignments_per_hit: int
    keywords_per_image: int
    visible_min: float  # below this evidence of every event a frame shows nothing (as in the rating panel)
    seed: int


def event_vocabulary(event: str) -> list[tuple[str, float]]:
    """The words people would type for an event (its name, tags and clue words in the demo's phrase bank), with how
    salient each is (how often the bank uses it; the name and tags count double)."""
    readable = event.replace("_", " ")
    bank = EN.get(event) or {"name": [readable], "tags": readable.split(), **GENERIC}
    counts: defaultdict[str, float] = defaultdict(float)
    for weight, phrases in ((2.0, bank["name"] + bank["tags"]), (1.0, bank["clues"])):
        for phrase in phrases:
            for word in re.findall(r"[a-zà-ÿ]+", phrase.lower()):
                if word not in FUNCTION_WORDS and len(word) > 2:
                    counts[word] += weight
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def simulate_keywords(hits: pl.DataFrame, truth: pl.DataFrame, cfg: KeywordPanelConfig) -> pl.DataFrame:
    """SIMULATED MTurk batch results of the keyword task (`hits` as read from hits_K.csv, all strings)."""
    lookup = truth_lookup(truth)
    rng = np.random.default_rng([cfg.seed, ord(VARIANT)])
    if cfg.assignments_per_hit > cfg.annotators:
        raise ValueError(
            f"keyword panel: {cfg.assignments_per_hit} assignments per HIT need at least as many annotators "
            f"(have {cfg.annotators})"
        )
    events = sorted({e for _, ev in lookup.values() for e in ev})
    vocab = {e: event_vocabulary(e) for e in events}
    # each annotator's own taste: a log-normal preference per word on top of the words' shared salience
    taste = {a: {e: np.exp(rng.normal(0, 0.6, len(vocab[e]))) for e in events} for a in range(cfg.annotators)}
    activity = 1.0 / np.arange(1, cfg.annotators + 1) ** 0.7
    activity /= activity.sum()
    slots = sorted(int(c.split("_")[1]) for c in hits.columns if c.startswith("image_") and c.endswith("_id"))
    rows = []
    for rec in hits.iter_rows(named=True):
        workers = rng.choice(cfg.annotators, size=cfg.assignments_per_hit, replace=False, p=activity)
        hit_id = f"SIMULATED-K-{int(rec['hit_index']):05d}"
        for a in workers:
            worker = f"SIMULATED-K-{int(a) + 1:02d}"
            row = {
                "HITId": hit_id,
                "AssignmentId": f"{hit_id}-{worker}",
                "WorkerId": worker,
                "AssignmentStatus": "Approved",
            }
            row |= {f"Input.{k}": ("" if v is None else str(v)) for k, v in rec.items()}
            for i in slots:
                img = unneutralise(rec[f"image_{i}_id"] or "")
                if img and img not in lookup:
                    raise KeyError(f"keyword panel: image {img} of HIT {rec['hit_index']} has no row in truth.parquet")
                words = _annotate(lookup[img], vocab, taste[int(a)], cfg, rng) if img else []
                row |= {
                    f"Answer.keyword_{i}_{j}": (words[j - 1] if j <= len(words) else "")
                    for j in range(1, cfg.keywords_per_image + 1)
                }
            rows.append(row)
    return pl.DataFrame(rows)


def _annotate(
    seen: tuple[str, dict[str, float]], vocab, taste, cfg: KeywordPanelConfig, rng: np.random.Generator
) -> list[str]:
    """One annotator's keywords for one frame, most salient first."""
    condition, evidence = seen
    visible = {e: w for e, w in evidence.items() if w > 0}
    if max(visible.values(), default=0.0) < cfg.visible_min:
        condition, visible = "black", {}
    share = CONDITION_SHARE.get(condition, 0.0)
    n = int(rng.integers(2, cfg.keywords_per_image + 1))
    out: list[str] = []
    for _ in range(4 * n):
        if len(out) == n:
            break
        if not visible or rng.random() < share:
            pool = CONDITION_WORDS.get(condition) or CONDITION_WORDS["black"]
            word = pool[int(rng.integers(len(pool)))]
        else:
            names = sorted(visible)
            p = np.array([visible[e] for e in names])
            e = names[int(rng.choice(len(names), p=p / p.sum()))]
            weights = np.array([s for _, s in vocab[e]]) ** 1.5 * taste[e]
            word = vocab[e][int(rng.choice(len(weights), p=weights / weights.sum()))][0]
        if word not in out:
            out.append(word)
    return out
