"""YouTube search in many languages, the way SQUID-E collected its videos (SQUID-E §3.1, SQUID-E supplement A.1).

Per event, each query in each language goes to yt-dlp's `ytsearchN:` with metadata only (no download). The results
are then filtered: live streams and premieres out (they have no fixed length), duration within bounds, each video
once even when several queries find it, at most `max_videos` per event taken round-robin over the queries so that
every language contributes, and optionally re-uploads removed (same duration, SBERT-similar titles).

The search itself (`search`) is the only part that needs the network; `select_entries` takes the info dicts yt-dlp
returns, so the filtering is tested on recorded results.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import polars as pl

log = logging.getLogger(__name__)

LIVE_STATES = {"is_live", "is_upcoming", "post_live"}


@dataclass(frozen=True)
class SearchSettings:
    """The keys of a `{type: youtube}` source (config/README.md)."""

    results_per_query: int = 50
    max_videos: int = 100
    min_duration_s: float = 10.0
    max_duration_s: float = 1200.0
    near_duplicates: bool = False
    title_similarity: float = 0.9
    duration_tolerance_s: float = 1.0

    @classmethod
    def from_source(cls, source: dict[str, Any]) -> SearchSettings:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in source.items() if k in known})


@dataclass(frozen=True)
class SearchResult:
    """What one `ytsearchN:` call returned, with the query that made it."""

    event: str
    language: str
    query: str
    info: dict[str, Any]


def search_term(query: str, n: int) -> str:
    return f"ytsearch{int(n)}:{query}"


def search(
    event: str,
    queries: dict[str, list[str]],
    settings: SearchSettings,
    ydl_params: dict[str, Any],
    licenses: list[str] | None = None,
) -> list[SearchResult]:
    """Run every query of one event through yt-dlp (flat: metadata only). Needs the network. `licenses` (a source's
    sources[].licenses) becomes yt-dlp's --match-filter: a result whose licence is known and not wanted is left out
    here, one whose flat entry states none is decided by its download (which passes the same filter)."""
    import yt_dlp

    params = {
        **ydl_params,
        "extract_flat": "in_playlist",
        "skip_download": True,
        "quiet": True,
        **ytdlp_licence_params(licenses),
    }
    out = []
    with yt_dlp.YoutubeDL(params) as ydl:
        for lang, qs in queries.items():
            for q in qs:
                try:
                    info = ydl.extract_info(search_term(q, settings.results_per_query), download=False) or {}
                except Exception as exc:  # a failed query is logged; the other queries still count
                    log.warning("search %r (%s, event %s) failed: %s", q, lang, event, exc)
                    continue
                out.append(SearchResult(event, lang, q, ydl.sanitize_info(info)))
    return out


def ytdlp_licence_params(licenses: list[str] | None) -> dict[str, Any]:
    """yt-dlp's `match_filter` option for a source's licence wish (empty: no wish), from squidflow.vocabulary.licenses."""
    from squidflow.vocabulary.licenses import ytdlp_match_filter

    expr = ytdlp_match_filter(licenses)
    if expr is None:
        return {}
    from yt_dlp.utils import match_filter_func

    return {"match_filter": match_filter_func(expr)}


def _is_live(entry: dict[str, Any]) -> bool:
    return bool(entry.get("is_live")) or entry.get("live_status") in LIVE_STATES


def _watch_url(entry: dict[str, Any]) -> str:
    url = entry.get("url") or ""
    if url.startswith("http"):
        return url
    return f"https://www.youtube.com/watch?v={entry['id']}"


def _kept_entries(res: SearchResult, settings: SearchSettings, dropped: dict[str, int]) -> list[dict[str, Any]]:
    """One query's entries that pass the filters (not live, a duration within bounds) as candidate rows; each one
    dropped is counted under its filter in `dropped`."""
    kept = []
    for e in res.info.get("entries") or []:
        if not e or not e.get("id"):
            continue
        if _is_live(e):
            dropped["live"] += 1
            continue
        dur = e.get("duration")
        if dur is None:
            dropped["no_duration"] += 1
            continue
        if dur < settings.min_duration_s:
            dropped["too_short"] += 1
            continue
        if dur > settings.max_duration_s:
            dropped["too_long"] += 1
            continue
        kept.append({
            "video_id": e["id"],
            "event": res.event,
            "source": "youtube",
            "url": _watch_url(e),
            "webpage_url": _watch_url(e),
            "title": e.get("title"),
            "description": e.get("description"),
            "uploader": e.get("channel") or e.get("uploader"),
            "duration_s": float(dur),
            "query": res.query,
            "query_language": res.language,
            "language": res.language,
        })  # fmt: skip
    return kept


def _round_robin(lists: list[list[dict[str, Any]]], max_videos: int, seen: set[str], dropped: dict[str, int]) -> list:
    """One event's rows taken round-robin over its queries' lists, up to `max_videos`; a video in `seen` (found by an
    earlier query) and those over the limit are counted in `dropped`."""
    rows, taken = [], 0
    for i in range(max((len(x) for x in lists), default=0)):
        for lst in lists:
            if i >= len(lst):
                continue
            row = lst[i]
            if row["video_id"] in seen:
                dropped["duplicate"] += 1
                continue
            if taken >= max_videos:
                dropped["over_max"] += 1
                continue
            seen.add(row["video_id"])
            rows.append(row)
            taken += 1
    return rows


def select_entries(results: list[SearchResult], settings: SearchSettings) -> tuple[pl.DataFrame, dict[str, int]]:
    """Filter search results into candidate rows (one per video); also return how many each filter dropped.

    Videos are taken round-robin over the queries (in the config's order) until `max_videos` per event, so that
    one prolific language does not crowd out the others; a video found by several queries keeps the first.
    """
    dropped = {"live": 0, "no_duration": 0, "too_short": 0, "too_long": 0, "duplicate": 0, "over_max": 0}
    per_event: dict[str, list[list[dict[str, Any]]]] = {}
    for res in results:
        per_event.setdefault(res.event, []).append(_kept_entries(res, settings, dropped))
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for lists in per_event.values():
        rows += _round_robin(lists, settings.max_videos, seen, dropped)
    schema = {"video_id": pl.Utf8, "event": pl.Utf8, "source": pl.Utf8, "url": pl.Utf8, "webpage_url": pl.Utf8,
              "title": pl.Utf8, "description": pl.Utf8, "uploader": pl.Utf8, "duration_s": pl.Float64,
              "query": pl.Utf8, "query_language": pl.Utf8, "language": pl.Utf8}  # fmt: skip
    return pl.DataFrame(rows, schema=schema), dropped


def near_duplicates(df: pl.DataFrame, embeddings, *, similarity: float, duration_tolerance_s: float) -> list[int]:
    """Row indices that re-upload an earlier row: same event, duration within tolerance, title cosine ≥ similarity.

    `embeddings` are L2-normalised title vectors (one per row, SBERT). The earlier row of a pair is kept.
    """
    import numpy as np

    emb = np.asarray(embeddings, dtype=np.float32)
    events = df["event"].to_list()
    durs = df["duration_s"].fill_null(-1e9).to_numpy()
    drop: set[int] = set()
    for i in range(len(df)):
        if i in drop:
            continue
        for j in range(i + 1, len(df)):
            if j in drop or events[j] != events[i] or abs(durs[i] - durs[j]) > duration_tolerance_s:
                continue
            if float(emb[i] @ emb[j]) >= similarity:
                drop.add(j)
    return sorted(drop)


def drop_near_duplicates(
    df: pl.DataFrame, settings: SearchSettings, model_path: str | None = None
) -> tuple[pl.DataFrame, int]:
    """Remove re-uploads with SBERT (the packaged all-MiniLM-L6-v2 unless `model_path` names another)."""
    if df.is_empty():
        return df, 0
    titles = df["title"].fill_null("").to_list()
    if model_path is None:
        from squidflow.encoders.text_embed import encode

        emb = encode(titles)
    else:
        from sentence_transformers import SentenceTransformer

        emb = SentenceTransformer(model_path, device="cpu").encode(
            titles, normalize_embeddings=True, show_progress_bar=False
        )
    drop = near_duplicates(
        df, emb, similarity=settings.title_similarity, duration_tolerance_s=settings.duration_tolerance_s
    )
    keep = [i for i in range(len(df)) if i not in set(drop)]
    return df[keep], len(drop)
