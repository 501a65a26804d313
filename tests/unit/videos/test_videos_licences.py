"""Provenance and licence per video and per published image, on recorded yt-dlp info dicts of one YouTube video under
CC BY, one under the standard licence as yt-dlp gives it now (no `license`) and one as older pages stated it
(tests/fixtures/ytdlp/videos/). Issue 48, deliverables 1 and 2."""

from __future__ import annotations

import json
import time
from pathlib import Path

import polars as pl

from squidflow.contracts import schemas
from squidflow.contracts.io import conform
from squidflow.publish.facts import images_by_licence
from squidflow.publish.tables import UNKNOWN_LICENSE, images_table
from squidflow.videos.download import DownloadResult, info_metadata
from squidflow.videos.download_shards import outcome_record, status_row
from squidflow.videos.sources import licence_filter, youtube_source

VIDEOS = Path(__file__).resolve().parents[2] / "fixtures" / "ytdlp" / "videos"
RECORDED = {
    name: json.loads((VIDEOS / f"video.{name}.json").read_text(encoding="utf-8"))
    for name in ("cc-by", "standard", "standard-stated")
}


def candidate(info: dict, **kw) -> dict:
    return {
        "video_id": info["id"],
        "event": "wedding",
        "source": "youtube",
        "url": info["webpage_url"],
        "webpage_url": info["webpage_url"],
        "path": f"results/videos/youtube/{info['id']}.mp4",
        "download": True,
        "status": "pending",
        **kw,
    }


def downloaded_row(info: dict, **kw) -> dict:
    """The manifest row of a video whose download returned `info` (what acquire_videos writes)."""
    result = DownloadResult("ok", attempts=1, metadata=info_metadata(info))
    return status_row(candidate(info, **kw), outcome_record(info["id"], 0, result))


def manifest(rows: list[dict]) -> pl.DataFrame:
    return conform(pl.DataFrame(rows, schema=schemas.VIDEO_STATUS.columns), schemas.VIDEOS)


def test_a_downloaded_video_carries_its_licence_and_provenance_as_the_page_states_them():
    before = time.time()
    rows = {name: downloaded_row(info) for name, info in RECORDED.items()}
    cc, std, stated = rows["cc-by"], rows["standard"], rows["standard-stated"]
    assert cc["license"] == "Creative Commons Attribution license (reuse allowed)"
    assert std["license"] is None  # yt-dlp gives none for the standard licence: never guessed
    assert stated["license"] == "Standard YouTube License"
    assert cc["uploader"] == "Open Weddings" and cc["upload_date"] == "20210612"
    assert cc["webpage_url"] == "https://www.youtube.com/watch?v=cC7byWed01A"
    got = pl.Series([cc["retrieved_at"]]).str.to_datetime(time_zone="UTC").dt.epoch("s").item()
    assert int(before) - 1 <= got <= time.time() + 1
    table = manifest(list(rows.values()))
    assert table["license"].to_list() == [cc["license"], None, "Standard YouTube License"]


def test_a_declared_licence_is_the_videos_and_files_on_disk_have_no_retrieval_time():
    cc = RECORDED["cc-by"]
    row = downloaded_row(cc, source="urls", license="cc-by-sa-4.0")  # a urls source's declared licence wins
    assert row["license"] == "cc-by-sa-4.0"
    local = status_row(
        {**candidate(cc), "download": False, "source": "local"},
        outcome_record(cc["id"], 0, DownloadResult("ok", attempts=0)),
    )
    assert local["retrieved_at"] is None and local["license"] is None


def test_each_published_image_carries_its_videos_licence_and_provenance_and_the_card_counts_them():
    rows = [downloaded_row(info) for info in RECORDED.values()]
    videos = manifest(rows)
    frames = pl.DataFrame(
        [
            {
                "video_id": r["video_id"],
                "frame_index": f,
                "pts_s": f / 25,
                "event": "wedding",
                "split": "test",
                "cluster": f,
                "image_path": None,
            }
            for r in rows
            for f in (0, 50)
        ]
    )
    images = images_table(frames, videos, pl.DataFrame())
    by_video = {r["video_id"]: r for r in images.iter_rows(named=True)}
    cc, std, stated = (by_video[RECORDED[n]["id"]] for n in ("cc-by", "standard", "standard-stated"))
    assert cc["license"] == "Creative Commons Attribution license (reuse allowed)"
    assert std["license"] == UNKNOWN_LICENSE == "unknown" and stated["license"] == "Standard YouTube License"
    assert (cc["uploader"], cc["upload_date"], cc["source"]) == (
        "Open Weddings",
        "20210612",
        "https://www.youtube.com/watch?v=cC7byWed01A",
    )
    assert cc["retrieved_at"] == rows[0]["retrieved_at"]
    assert set(schemas.PUBLISH_IMAGES.columns) <= set(images.columns)
    assert images_by_licence(images) == {
        "Creative Commons Attribution license (reuse allowed)": 2,
        "Standard YouTube License": 2,
        "unknown": 2,
    }


def test_a_youtube_search_lists_videos_with_their_sources_wish():
    from squidflow.videos.youtube import SearchResult

    entries = [
        {"id": i["id"], "url": i["webpage_url"], "title": i["title"], "duration": i["duration"]}
        for i in RECORDED.values()
    ]
    source = {"type": "youtube", "licenses": ["cc-by"]}
    results = [SearchResult("wedding", "en", "wedding", {"entries": entries})]
    listing = licence_filter(youtube_source(source, results=results), source)
    # the flat search states no licence: every video is still to download, carrying the wish to its download
    assert listing.candidates["licenses"].to_list() == [["cc-by"]] * 3
    assert listing.candidates["status"].to_list() == ["pending"] * 3 and listing.candidates["download"].all()


# --- deliverable 2: the licence filter at acquisition -----------------------------------------------------------------
def test_ytdlps_match_filter_skips_the_standard_licence_before_any_byte_and_takes_cc_by(tmp_path):
    """The download passes the source's wish to yt-dlp as its match filter: yt-dlp itself, on the recorded info
    dicts, skips the standard-licence videos (no file, no format request) and lets the CC BY one through."""
    from squidflow.videos.download import DownloadOptions, _session_class, ydl_params
    from squidflow.videos.youtube import ytdlp_licence_params
    from squidflow.vocabulary.licenses import licence_refusal

    params = ydl_params(DownloadOptions(), str(tmp_path / "%(id)s.%(ext)s")) | ytdlp_licence_params(["cc-by"])
    with _session_class()(params) as ydl:
        ydl.start_attempt()
        for name in ("standard", "standard-stated"):
            info = ydl.process_ie_result(json.loads(json.dumps(RECORDED[name])), download=True)
            assert info["id"] == RECORDED[name]["id"] and "requested_downloads" not in info
            assert licence_refusal(info_metadata(info).get("license"), ["cc-by"]).endswith(
                "the source asks for cc-by (sources[].licenses)"
            )
        assert params["match_filter"](RECORDED["cc-by"]) is None
        assert licence_refusal(info_metadata(RECORDED["cc-by"]).get("license"), ["cc-by"]) is None
    assert list(tmp_path.iterdir()) == []


def test_a_direct_media_link_states_no_licence_and_is_not_fetched(tmp_path):
    from squidflow.videos.download import DownloadOptions, download

    # a closed loopback port: a request would end `network`; the wish ends it before any request
    out = download("http://127.0.0.1:9/clip.mp4", tmp_path / "clip.mp4", DownloadOptions(), licenses=["cc-by"])
    assert (out.status, out.reason, out.attempts) == ("unavailable", "licence", 0)
    assert out.error == "no licence stated; the source asks for cc-by (sources[].licenses)"


def make_local(root: Path, prefix: str) -> None:
    for event, name in (("wedding", "a"), ("wedding", "b"), ("parade", "c")):
        (root / event).mkdir(parents=True, exist_ok=True)
        (root / event / f"{prefix}{name}.mp4").write_bytes(b"not probed")


def test_declared_licences_filter_local_and_urls_sources_and_the_report_counts_them(tmp_path):
    from squidflow.videos.manifest import build_manifest, download_report
    from squidflow.videos.sources import list_candidates

    make_local(tmp_path / "cc", "")
    make_local(tmp_path / "mine", "m")
    (tmp_path / "urls.csv").write_text(
        "url,event,video_id\nhttps://example.org/v/1,wedding,u1\nhttps://www.youtube.com/watch?v=cC7byWed01A,wedding,\n"
    )
    (tmp_path / "open.csv").write_text("url,event,video_id\nhttps://example.org/v/2,parade,u2\n")
    sources = [
        {"type": "local", "root": str(tmp_path / "cc"), "license": "CC BY-SA 4.0", "licenses": ["cc-by-sa"]},
        {"type": "local", "root": str(tmp_path / "mine"), "licenses": ["cc-by"]},  # states nothing: left out
        {"type": "urls", "path": str(tmp_path / "urls.csv"), "license": "all rights reserved", "licenses": ["cc-by"]},
        {"type": "urls", "path": str(tmp_path / "open.csv"), "licenses": ["cc-by"]},  # the page decides
    ]
    candidates, notes = list_candidates(sources)
    by_id = {r["video_id"]: r for r in candidates.iter_rows(named=True)}
    assert {v for v, r in by_id.items() if r["status"] == "pending"} == {"a", "b", "c", "u2"}
    left = {v for v, r in by_id.items() if r["reason"] == "licence"}
    assert left == {"ma", "mb", "mc", "u1", "cC7byWed01A"}
    assert by_id["a"]["license"] == "CC BY-SA 4.0" and by_id["u2"]["licenses"] == ["cc-by"]
    assert by_id["u1"]["error"] == "licence 'all rights reserved'; the source asks for cc-by (sources[].licenses)"
    assert not any(by_id[v]["download"] for v in left)
    assert sum("left out for their licence" in n for n in notes) == 2
    manifest = build_manifest(candidates, [])
    settled = manifest.filter(pl.col("reason") == "licence")
    assert settled["status"].unique().to_list() == ["unavailable"] and settled.height == 5
    report = download_report(manifest, notes)
    assert "| `licence` (files on disk) | unavailable | 3 | declare the folder's licence" in report, report
    assert "| `licence` | unavailable | 2 | none (the source's wish)" in report, report
