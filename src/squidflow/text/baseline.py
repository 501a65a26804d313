"""A text-only event classifier: which event a frame shows, guessed from its co-occurring text alone.

If a video's title says "Our wedding (2019)", every frame of it — the blurred, the dark, the cut-away — is "wedding"
to a text model, whatever people see in the pixels. Scored like the image models (schemas.PREDICTIONS, read by the
evaluation stage into the accuracy-by-certainty tables, SQUID-E Table 1 style), it shows where human certainty is low
whether the text still gives the event away (the point "Apples to Oranges" makes about co-occurring text).

Each event is described by its id, prompt and description (config `events`); a frame by the fields and subtitle
window of a preprocessing setting. Two scorers:
- `tfidf`: cosine similarity of tf·idf vectors (the setting's terms; idf over the run's videos as for keywords, a
  term only the event descriptions use weighted as the rarest);
- `sbert`: cosine similarity of the packaged all-MiniLM-L6-v2 sentence embeddings (squidflow.encoders.text_embed).
Labels are ranked by score; exact ties (a frame sharing no term with any event) are broken by a seeded shuffle, so
a text that says nothing is a random guess rather than the first event of the list.
"""

from __future__ import annotations

import logging
import zlib
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
import polars as pl

from squidflow.contracts import schemas
from squidflow.text.keywords import field_texts, idf_weights, video_documents, window_cues
from squidflow.text.preprocess import Normaliser, Preprocessing

log = logging.getLogger(__name__)

METHODS = ("tfidf", "sbert")


def event_descriptions(events: Sequence[str], events_config: dict | None = None) -> dict[str, str]:
    """event id -> the text that describes it: the id's words, its prompt and its description."""
    from squidflow.vocabulary.events import event_prompt

    out = {}
    for e in events:
        cfg = (events_config or {}).get(e) or {}
        parts = [e.replace("_", " ").replace("-", " "), event_prompt(e, events_config), cfg.get("description") or ""]
        out[e] = ". ".join(dict.fromkeys(p for p in parts if p))
    return out


def frame_text(row: dict, setting: Preprocessing) -> str:
    """A frame's co-occurring text as one string (the setting's fields and window), for a sentence encoder."""
    return ". ".join(t.replace("\n", " ") for t, _ in field_texts(row, setting, window_cues(row, setting)) if t.strip())


def _unit(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms == 0, 1.0, norms)


def tfidf_scores(
    cooc: pl.DataFrame,
    videos: pl.DataFrame,
    subtitles: pl.DataFrame,
    events: dict[str, str],
    setting: Preprocessing,
    *,
    default_language: str = "en",
) -> np.ndarray:
    """frames × events cosine similarities of tf·idf vectors."""
    normaliser = Normaliser(setting, default_language)
    idf = idf_weights(video_documents(videos, subtitles, setting, normaliser))
    max_idf = max(idf.values(), default=1.0)
    frame_bags = [
        Counter(
            t
            for text, lang in field_texts(row, setting, window_cues(row, setting))
            for t in normaliser.tokens(text, lang)
        )
        for row in cooc.iter_rows(named=True)
    ]
    event_bags = [Counter(normaliser.tokens(text, default_language)) for text in events.values()]
    vocab = {t: i for i, t in enumerate(sorted({t for bag in frame_bags + event_bags for t in bag}))}
    weights = np.array([idf.get(t, max_idf) for t in vocab], dtype=np.float64)

    def matrix(bags: list[Counter]) -> np.ndarray:
        m = np.zeros((len(bags), len(vocab)))
        for r, bag in enumerate(bags):
            for t, c in bag.items():
                m[r, vocab[t]] = c
        return _unit(m * weights)

    return matrix(frame_bags) @ matrix(event_bags).T


def sbert_scores(
    cooc: pl.DataFrame,
    events: dict[str, str],
    setting: Preprocessing,
    *,
    encode: Callable[[list[str]], np.ndarray] | None = None,
) -> np.ndarray:
    """frames × events cosine similarities of SBERT embeddings (an empty frame text scores 0 for every event)."""
    if encode is None:
        from functools import partial

        from squidflow.encoders.text_embed import encode as sbert_encode

        encode = partial(sbert_encode, progress=True)  # a bar in the rule's log: texts per second, time left
    texts = [frame_text(row, setting) for row in cooc.iter_rows(named=True)]
    unique = list(dict.fromkeys(t for t in texts if t))
    vectors = _unit(np.asarray(encode(unique), dtype=np.float64)) if unique else np.zeros((0, 1))
    index = {t: i for i, t in enumerate(unique)}
    event_vectors = _unit(np.asarray(encode(list(events.values())), dtype=np.float64))
    out = np.zeros((len(texts), len(events)))
    for r, t in enumerate(texts):
        if t:
            out[r] = event_vectors @ vectors[index[t]]
    return out


def to_predictions(cooc: pl.DataFrame, scores: np.ndarray, labels: Sequence[str], *, seed: int = 0) -> pl.DataFrame:
    """schemas.PREDICTIONS: one row per (frame, rank), every label ranked by score, ties broken by a seeded shuffle."""
    rows = []
    for r, (vid, fi, img) in enumerate(cooc.select("video_id", "frame_index", "image_id").iter_rows()):
        rng = np.random.default_rng([seed, zlib.crc32(img.encode())])
        order = np.lexsort((rng.permutation(len(labels)), -np.round(scores[r], 12)))
        for rank, j in enumerate(order, start=1):
            rows.append(
                {
                    "video_id": vid,
                    "frame_index": fi,
                    "image": None,
                    "rank": rank,
                    "label": labels[j],
                    "score": float(scores[r, j]),
                }
            )
    if not rows:
        return schemas.empty(schemas.PREDICTIONS)
    return pl.DataFrame(rows, schema=schemas.PREDICTIONS.columns)


def text_baseline(
    cooc: pl.DataFrame,
    videos: pl.DataFrame,
    subtitles: pl.DataFrame,
    method: str,
    events: Sequence[str],
    setting: Preprocessing,
    *,
    events_config: dict | None = None,
    default_language: str = "en",
    seed: int = 0,
    encode: Callable[[list[str]], np.ndarray] | None = None,
) -> pl.DataFrame:
    """The text-only event predictions of one method (`tfidf` or `sbert`) for every frame of `cooc`."""
    if method not in METHODS:
        raise ValueError(f"text.baseline.methods: unknown method {method!r}; known: {METHODS}")
    if not events:
        raise ValueError("text baseline: no events to predict (config `events` is empty and frames.parquet has none)")
    described = event_descriptions(events, events_config)
    if method == "tfidf":
        scores = tfidf_scores(cooc, videos, subtitles, described, setting, default_language=default_language)
    else:
        scores = sbert_scores(cooc, described, setting, encode=encode)
    return to_predictions(cooc, scores, list(described), seed=seed)
