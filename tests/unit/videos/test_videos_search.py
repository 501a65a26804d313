"""YouTube search handling on recorded yt-dlp `ytsearchN:` results (tests/fixtures/ytdlp/<event>.<language>.json).

The fixtures hold what yt-dlp's flat search returns: entries with durations, live streams and premieres (no
duration, `live_status`), shorts and three-hour uploads, the same video found by queries in two languages, titles
in Korean, Hindi and Arabic, and a re-upload of a wedding film under a new id with the same duration.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet, write_parquet
from squidflow.videos.sources import combine, youtube_source
from squidflow.videos.youtube import (
    SearchResult,
    SearchSettings,
    drop_near_duplicates,
    near_duplicates,
    search,
    select_entries,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "ytdlp"


def recorded(*names: str) -> list[SearchResult]:
    out = []
    for name in names:
        event, lang, _ = name.split(".")
        info = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
        query = info["webpage_url"].split(":", 1)[1]
        out.append(SearchResult(event, lang, query, info))
    return out


WEDDING = ("wedding.en.json", "wedding.ko.json", "wedding.hi.json")


def test_filters_live_length_and_duplicates_round_robin_over_languages():
    df, dropped = select_entries(recorded(*WEDDING, "protest.ar.json"), SearchSettings())
    wedding = df.filter(pl.col("event") == "wedding")
    # round-robin over en, ko, hi: first of each list, then the second of each, ...; duplicates keep the first
    assert wedding["video_id"].to_list() == [
        "Yb7zQ2kLm0A", "Ww3cVb8Nn6P", "p3RkT8vWx1c", "a1S2d3F4g5H", "Gg6Tt5Rr4Ee", "Hh8Jj7Kk6Ll", "Vv3Bb2Nn1Mm",
        "Rr2eSd9Ff0G", "Mm5Nn4Bb3Vv",
    ]  # fmt: skip
    assert dropped == {"live": 4, "no_duration": 0, "too_short": 2, "too_long": 2, "duplicate": 2, "over_max": 0}
    # the Korean query found Ww3cVb8Nn6P first in round-robin order, so it carries that query and language
    row = wedding.filter(pl.col("video_id") == "Ww3cVb8Nn6P").row(0, named=True)
    assert (row["query"], row["query_language"]) == ("결혼식 영상", "ko")
    assert df.filter(pl.col("event") == "protest")["video_id"].to_list() == ["Ee1Rr2Tt3Yy", "Oo7Pp8Aa9Ss"]
    assert df["url"].str.starts_with("https://www.youtube.com/watch?v=").all()


def test_max_videos_per_event_and_bounds():
    df, dropped = select_entries(recorded(*WEDDING), SearchSettings(max_videos=5, max_duration_s=2000))
    assert len(df) == 5 and dropped["over_max"] == 5 and dropped["too_long"] == 1  # Uu9 (1780 s) is now in
    assert "Uu9Ii8Oo7Pp" in df["video_id"].to_list()


def test_non_ascii_metadata_survives_the_candidates_table(tmp_path):
    listing = youtube_source({"type": "youtube"}, results=recorded(*WEDDING, "protest.ar.json"))
    cands, notes = combine([listing])
    write_parquet(cands, tmp_path / "c.parquet", schemas.VIDEO_CANDIDATES)
    back = read_parquet(tmp_path / "c.parquet", schemas.VIDEO_CANDIDATES)
    titles = dict(zip(back["video_id"], back["title"], strict=True))
    assert titles["a1S2d3F4g5H"] == "결혼식 본식 영상 | 서울 더채플앳청담 | 신랑 신부 입장"
    assert titles["Gg6Tt5Rr4Ee"] == "हल्दी और मेहंदी की रस्म - शादी समारोह 2024"
    assert titles["Ee1Rr2Tt3Yy"] == "مظاهرة حاشدة في وسط المدينة"
    assert back["download"].all() and (back["status"] == "pending").all()
    assert back["path"].to_list()[0] == "results/videos/youtube/Yb7zQ2kLm0A.mp4"
    assert any("dropped live=4" in n for n in notes)


def test_near_duplicate_needs_both_similar_title_and_equal_duration():
    df = pl.DataFrame({"event": ["w", "w", "w", "p"], "duration_s": [100.0, 100.5, 300.0, 100.0]})
    e = np.array([[1, 0], [0.96, 0.28], [1, 0], [1, 0]], dtype=np.float32)  # row 1 ~ row 0, row 2 = row 0
    assert near_duplicates(df, e, similarity=0.9, duration_tolerance_s=1.0) == [1]  # 2: other length; 3: other event
    assert near_duplicates(df, e, similarity=0.99, duration_tolerance_s=1.0) == []


def test_sbert_removes_the_reupload_of_the_wedding_film():
    df, _ = select_entries(recorded(*WEDDING), SearchSettings())
    kept, n = drop_near_duplicates(df, SearchSettings(near_duplicates=True, title_similarity=0.8))
    assert n == 1 and "Rr2eSd9Ff0G" not in kept["video_id"].to_list() and "Yb7zQ2kLm0A" in kept["video_id"].to_list()


def test_a_failing_search_is_logged_not_fatal(caplog):
    # no network here: a proxy on a closed loopback port makes every query fail at once
    params = {"proxy": "http://127.0.0.1:9", "socket_timeout": 1}
    with caplog.at_level("WARNING"):
        out = search("wedding", {"en": ["wedding ceremony"]}, SearchSettings(results_per_query=3), params)
    assert out == []
    assert "wedding ceremony" in caplog.text


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.json")))
def test_fixtures_look_like_ytdlp_search_output(name):
    info = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    assert info["_type"] == "playlist" and info["extractor_key"] == "YoutubeSearch"
    assert info["webpage_url"].startswith("ytsearch")
    for e in info["entries"]:
        assert e["ie_key"] == "Youtube" and len(e["id"]) == 11
        assert (e["duration"] is None) == (e["live_status"] in {"is_live", "is_upcoming"})
