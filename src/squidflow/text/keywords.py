"""Keyword baselines from co-occurring text: term frequency, tf·idf and random, per frame and preprocessing setting.

These are the baselines of "Apples to Oranges": an image's keywords are the words of its surrounding text ranked by
how often they occur there (tf), or by that count weighted by how rare the word is across the collection (tf·idf);
random picks from the same candidates and shows what the measures give for nothing. Here the surrounding text of a
frame is the fields a setting names, with the subtitles of its window; the collection is every video of the run,
each video's document being the same fields with its whole subtitle track, so a word every upload says ("video",
"subscribe") sinks and a word only the frame's video says rises:

    idf(t) = ln((1 + N) / (1 + df(t))) + 1        (N videos, df(t) = videos whose document contains t)

Ties are broken by first occurrence (the title is read first), so rankings are stable; random is seeded per frame
and setting.
"""

from __future__ import annotations

import logging
import math
import zlib
from collections import Counter

import numpy as np
import polars as pl

from squidflow.contracts import schemas
from squidflow.text.preprocess import Normaliser, Preprocessing
from squidflow.text.subtitles import in_window

log = logging.getLogger(__name__)

SYSTEMS = ("tf", "tfidf", "random")


def field_texts(row: dict, setting: Preprocessing, cues: list[dict]) -> list[tuple[str, str | None]]:
    """(text, language) of each field the setting reads, in the setting's order."""
    out = []
    for name in setting.fields:
        if name == "tags":
            out.append((" . ".join(row["tags"] or []), row["language"]))
        elif name == "subtitles":
            out.append(("\n".join(c["text"] for c in cues), row["subtitle_language"]))
        else:
            out.append((row[name] or "", row["language"]))
    return out


def window_cues(row: dict, setting: Preprocessing) -> list[dict]:
    """The cues of a co-occurring row within the setting's window (all of them when the setting has none)."""
    cues = row["cues"] or []
    if setting.window_s is None:
        return cues
    have = row["pts_s"] - row["window_start_s"]
    if setting.window_s > have + 1e-9:
        raise ValueError(
            f"text.keywords.settings[{setting.name}].window_s = {setting.window_s} is wider than the window "
            f"results/text/cooccurring.parquet was cut with (text.subtitles.window_s = {have:g}); widen "
            "text.subtitles.window_s or narrow the setting"
        )
    df = pl.DataFrame(cues, schema=schemas.CUE.to_schema()).with_row_index("cue")
    return in_window(df, row["pts_s"], setting.window_s).drop("cue").to_dicts() if df.height else []


def frame_terms(row: dict, setting: Preprocessing, normaliser: Normaliser) -> list[tuple[str, str]]:
    """(term, surface) of every candidate token of a frame's co-occurring text, in reading order."""
    pairs = []
    for text, language in field_texts(row, setting, window_cues(row, setting)):
        pairs += normaliser.surface_pairs(text, language)
    return pairs


def video_documents(
    videos: pl.DataFrame, subtitles: pl.DataFrame, setting: Preprocessing, normaliser: Normaliser
) -> dict[str, set[str]]:
    """Per `ok` video of the manifest (every video of the run, with selected frames or not), the set of terms of its
    document: the setting's fields, with the whole subtitle track."""
    tracks = {
        vid: (lang, cues or []) for vid, lang, cues in subtitles.select("video_id", "language", "cues").iter_rows()
    }
    docs = {}
    ok = videos.filter(pl.col("status") == "ok") if "status" in videos.columns else videos
    for row in ok.select("video_id", "language", "title", "description", "tags").iter_rows(named=True):
        language, cues = tracks.get(row["video_id"], (None, []))
        full = dict(row, subtitle_language=language, cues=cues)
        docs[row["video_id"]] = {
            t for text, lang in field_texts(full, setting, cues) for t in normaliser.tokens(text, lang)
        }
    return docs


def idf_weights(documents: dict[str, set[str]]) -> dict[str, float]:
    """Smoothed inverse document frequency of every term of the documents (see the module docstring)."""
    n = len(documents)
    df = Counter(t for terms in documents.values() for t in terms)
    return {t: math.log((1 + n) / (1 + d)) + 1.0 for t, d in df.items()}


def rank_frame(
    pairs: list[tuple[str, str]], idf: dict[str, float], *, top_k: int, rng: np.random.Generator
) -> dict[str, list[tuple[str, str, float | None]]]:
    """Per system, the top-k (term, surface, score) of one frame."""
    counts = Counter(t for t, _ in pairs)
    first: dict[str, int] = {}
    surface: dict[str, str] = {}
    for i, (t, s) in enumerate(pairs):
        if t not in first:
            first[t], surface[t] = i, s
    terms = list(first)  # reading order
    # a term the idf has never seen (cannot happen for the frame's own video) counts as the rarest
    max_idf = max(idf.values(), default=1.0)
    tf = sorted(terms, key=lambda t: (-counts[t], first[t]))
    tfidf = sorted(terms, key=lambda t: (-counts[t] * idf.get(t, max_idf), first[t]))
    random = [terms[i] for i in rng.permutation(len(terms))] if terms else []
    return {
        "tf": [(t, surface[t], float(counts[t])) for t in tf[:top_k]],
        "tfidf": [(t, surface[t], counts[t] * idf.get(t, max_idf)) for t in tfidf[:top_k]],
        "random": [(t, surface[t], None) for t in random[:top_k]],
    }


def keyword_baselines(
    cooc: pl.DataFrame,
    videos: pl.DataFrame,
    subtitles: pl.DataFrame,
    settings: list[Preprocessing],
    *,
    top_k: int = 10,
    seed: int = 0,
    default_language: str = "en",
) -> pl.DataFrame:
    """schemas.TEXT_KEYWORDS: every frame's top-k keywords for each setting and system (a frame whose text has no
    candidate term under a setting has no rows there: the system leaves that item empty)."""
    if top_k < 1:
        raise ValueError(f"text.keywords.top_k = {top_k}: must be at least 1")
    rows = []
    for setting in settings:
        normaliser = Normaliser(setting, default_language)
        idf = idf_weights(video_documents(videos, subtitles, setting, normaliser))
        n_empty = 0
        for row in cooc.iter_rows(named=True):
            rng = np.random.default_rng([seed, zlib.crc32(row["image_id"].encode()), zlib.crc32(setting.name.encode())])
            ranked = rank_frame(frame_terms(row, setting, normaliser), idf, top_k=top_k, rng=rng)
            n_empty += not ranked["tf"]
            for system in SYSTEMS:
                for rank, (term, surface, score) in enumerate(ranked[system], start=1):
                    rows.append(
                        {
                            "image_id": row["image_id"],
                            "video_id": row["video_id"],
                            "frame_index": row["frame_index"],
                            "setting": setting.name,
                            "system": system,
                            "rank": rank,
                            "keyword": term,
                            "surface": surface,
                            "score": score,
                        }
                    )
        log.info(
            "setting %s: %d terms in the idf, %d of %d frames without any candidate keyword",
            setting.name,
            len(idf),
            n_empty,
            cooc.height,
        )
    if not rows:
        return schemas.empty(schemas.TEXT_KEYWORDS)
    return pl.DataFrame(rows, schema=schemas.TEXT_KEYWORDS.columns)
