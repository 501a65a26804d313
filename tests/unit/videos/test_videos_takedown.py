"""Takedowns (issue 48, deliverable 4), the library's part: the list is read with its errors naming file and line,
listed videos leave the candidates with their downloads, journal lines and status rows, and the published dataset's
version, card and Croissant say so without naming them."""

from __future__ import annotations

import json

import polars as pl
import pytest
from helpers.publish_run import settings, small_run

from squidflow.contracts import schemas
from squidflow.contracts.io import conform, read_parquet, write_parquet
from squidflow.errors import InputError
from squidflow.publish.dataset import publish
from squidflow.videos.download_shards import shard_folder
from squidflow.videos.takedown import apply_takedowns, published_version, read_takedowns, removals_by_reason


def candidates(tmp_path) -> pl.DataFrame:
    rows = []
    for vid, download in (("keepme00001", True), ("takeme00002", True), ("local_a", False)):
        path = tmp_path / "results" / "videos" / ("youtube" if download else "mine") / f"{vid}.mp4"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"video")
        if download:
            (path.parent / f"{vid}.en.vtt").write_text("WEBVTT\n")
        rows.append(
            {
                "video_id": vid,
                "event": "wedding",
                "source": "youtube" if download else "local",
                "path": str(path),
                "download": download,
                "status": "pending",
            }
        )
    base = dict.fromkeys(schemas.VIDEO_CANDIDATES.columns)
    return conform(
        pl.DataFrame([{**base, **r} for r in rows], schema=schemas.VIDEO_CANDIDATES.columns), schemas.VIDEO_CANDIDATES
    )


def test_the_list_is_read_with_errors_that_name_file_and_line(tmp_path):
    ok = tmp_path / "takedown.csv"
    ok.write_text("video_id,requested,reason\ntakeme00002,2026-11-01,Privacy\ntakeme00002,2026-11-02,copyright\n")
    assert read_takedowns(ok).rows() == [("takeme00002", "2026-11-01", "privacy")]
    for body, needle in (
        ("video_id,requested\nx,2026-01-01\n", r"no column\(s\) reason"),
        ("video_id,requested,reason\nx,yesterday,privacy\n", "line 2: requested 'yesterday'"),
        ("video_id,requested,reason\nx,2026-02-30,privacy\n", "line 2: requested '2026-02-30' is not a calendar"),
        ("video_id,requested,reason\n,2026-01-01,privacy\n", "line 2: empty video_id"),
        ("video_id,requested,reason\nx,2026-01-01,\n", "line 2: empty reason"),
    ):
        bad = tmp_path / "bad.csv"
        bad.write_text(body)
        with pytest.raises(InputError, match=needle):
            read_takedowns(bad)
    with pytest.raises(InputError, match="not found"):
        read_takedowns(tmp_path / "none.csv")


def test_a_listed_video_leaves_the_candidates_with_its_files_journal_lines_and_status_rows(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cands = candidates(tmp_path)
    journal = tmp_path / "results" / "videos" / "journal"
    journal.mkdir(parents=True)
    (journal / "shard0.jsonl").write_text(
        "".join(json.dumps({"video_id": v, "status": "ok"}) + "\n" for v in ("keepme00001", "takeme00002"))
    )
    status = tmp_path / "results" / "videos" / "status"
    status.mkdir(parents=True)
    rows = cands.with_columns(pl.lit("ok").alias("status"), pl.lit(0).alias("retry_generation"))
    write_parquet(conform(rows, schemas.VIDEO_STATUS), status / "shard0of1.g0.parquet", schemas.VIDEO_STATUS)
    # the download jobs' shard folders (two generations) hold links to the working copies (shard_folder)
    downloads = tmp_path / "results" / "videos" / "downloads"
    work = [c for c in cands.iter_rows(named=True) if c["download"]]
    for gen in ("shard0of1.g0", "shard0of1.g1"):
        shard_folder(downloads / gen, [{**c, "_work": c["path"]} for c in work], [{"status": "ok"} for _ in work])
    listing = tmp_path / "takedown.csv"
    listing.write_text(
        "video_id,requested,reason\ntakeme00002,2026-11-01,privacy\nlocal_a,2026-11-03,consent withdrawn\n"
        "notlisted99,2026-11-04,privacy\n"
    )
    kept, log = apply_takedowns(cands, listing, journal_dirs=[journal], status_dir=status, downloads_dir=downloads)
    assert kept["video_id"].to_list() == ["keepme00001"]
    assert dict(zip(log["video_id"], log["outcome"], strict=True)) == {
        "takeme00002": "removed",
        "local_a": "removed",
        "notlisted99": "not in the sources",
    }
    videos = tmp_path / "results" / "videos" / "youtube"
    assert sorted(p.name for p in videos.iterdir()) == ["keepme00001.en.vtt", "keepme00001.mp4"]
    assert (tmp_path / "results" / "videos" / "mine" / "local_a.mp4").exists()  # a user's own file is left alone
    for gen in ("shard0of1.g0", "shard0of1.g1"):
        left = sorted(p.name for p in (downloads / gen).iterdir())
        assert left == [".squidflow-videos", "keepme00001.en.vtt", "keepme00001.mp4"], left
    assert "takeme00002" not in (journal / "shard0.jsonl").read_text()
    assert read_parquet(status / "shard0of1.g0.parquet", schemas.VIDEO_STATUS)["video_id"].to_list() == ["keepme00001"]
    assert removals_by_reason(log) == {"consent withdrawn": 1, "privacy": 1}


def test_the_version_is_raised_by_the_videos_removed():
    assert published_version("1.0.0", 0) == "1.0.0" and published_version("1.0.0", 2) == "1.0.2"
    assert published_version("2024.1", 1) == "2024.1+takedown.1"


def test_the_card_and_croissant_count_removals_by_reason_name_none_and_say_how_to_ask(tmp_path):
    run = small_run(tmp_path / "run")
    run.takedowns = pl.DataFrame(
        {
            "video_id": ["secret_vid_1", "secret_vid_2", "other_9"],
            "requested": ["2026-11-01"] * 3,
            "reason": ["privacy", "privacy", "copyright"],
            "outcome": ["removed", "removed", "not in the sources"],
            "applied": ["2026-11-28"] * 3,
        }
    )
    folder = tmp_path / "out" / "x"
    publish(folder, run, settings(contact="takedown@example.org"))
    readme = (folder / "README.md").read_text(encoding="utf-8")
    meta = json.loads((folder / "croissant.json").read_text(encoding="utf-8"))
    assert meta["version"] == "1.0.2"
    assert "## Changes" in readme and "Version 1.0.2 (from 1.0.0): 2 videos removed on request" in readme
    assert "| privacy | 2 |" in readme and "copyright" not in readme.split("## Changes")[1].split("##")[0]
    assert (
        "write to takedown@example.org" in readme and "takedown@example.org" in meta["rai:dataReleaseMaintenancePlan"]
    )
    text = readme + json.dumps(meta)
    assert not any(v in text for v in ("secret_vid_1", "secret_vid_2", "other_9"))


def test_a_removed_video_keeps_its_place_in_the_split_shuffle_so_no_other_video_moves():
    from squidflow.frames.splits import SplitsConfig, split_videos

    videos = pl.DataFrame({"video_id": [f"v{i:02d}" for i in range(20)], "event": ["wedding", "parade"] * 10})
    before = split_videos(videos, SplitsConfig())
    for gone in ("v03", "v10"):
        rest = videos.filter(pl.col("video_id") != gone)
        after = split_videos(rest, SplitsConfig(), removed=videos.filter(pl.col("video_id") == gone))
        assert after == {v: s for v, s in before.items() if v != gone}
    # without the removed list the shuffle moves others (what the takedown log prevents)
    moved = split_videos(videos.filter(pl.col("video_id") != "v03"), SplitsConfig())
    assert moved != {v: s for v, s in before.items() if v != "v03"}


def test_the_log_reads_back_ids_that_start_with_a_dash(tmp_path):
    """YouTube ids may start with `-`: write_csv guards them with an apostrophe, read_log takes it off again."""
    from squidflow.contracts.io import write_csv
    from squidflow.videos.takedown import log_table, read_log

    takedowns = pl.DataFrame({"video_id": ["-OMFa5uJuDk"], "requested": ["2026-11-01"], "reason": ["privacy"]})
    removed = pl.DataFrame({"video_id": ["-OMFa5uJuDk"], "event": ["protest"]})
    write_csv(log_table(takedowns, removed, "2026-11-28"), tmp_path / "log.csv")
    assert "'-OMFa5uJuDk" in (tmp_path / "log.csv").read_text()
    back = read_log((tmp_path / "log.csv").read_text())
    assert back.row(0, named=True) == {
        "video_id": "-OMFa5uJuDk",
        "requested": "2026-11-01",
        "reason": "privacy",
        "event": "protest",
        "outcome": "removed",
        "applied": "2026-11-28",
    }


def test_the_listing_notes_name_no_video_taken_down():
    """Issue 58: candidates_notes.txt keeps no note that names a removed video, by id or file; it says how many left."""
    import polars as pl

    from squidflow.videos.takedown import notes_without

    log = pl.DataFrame(
        {"video_id": ["concert_stage_a", "gone_elsewhere"], "outcome": ["removed", "not in the sources"]}
    )
    candidates = pl.DataFrame({"video_id": ["concert_stage_a"], "path": ["my videos/concert/stage a.mp4"]})
    notes = [
        "my videos/concert: id 'concert_stage_a' (the file name has characters job names cannot hold)",
        "skipped stage a.mp4: unreadable",
        "my videos/market: 3 videos",
    ]
    assert notes_without(notes, log, candidates) == [
        "my videos/market: 3 videos",
        "2 note(s) about videos taken down left out",
    ]
    assert notes_without(notes, log.filter(pl.col("outcome") != "removed"), candidates) == notes
