"""The `squid-e-release` source on the real dataset.csv (../shared/data/squid-e), and the paper-scale dry run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from helpers.videotools import make_mp4

from squidflow.contracts import schemas
from squidflow.videos.download import DownloadOptions
from squidflow.videos.manifest import build_manifest, check_local, download_report
from squidflow.videos.sources import list_candidates, release_source
from squidflow.vocabulary.release import read_dataset_csv

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def release(shared_data):
    return read_dataset_csv(shared_data / "squid-e" / "dataset.csv")


def test_every_release_row_is_read_and_the_quirks_are_reported(release):
    rows = release.rows
    assert len(rows) == 2000
    youtube = [r for r in rows if r.kind == "youtube"]
    assert len(youtube) == 1934 and len({r.video_id for r in youtube}) == 1932
    assert sum(r.kind == "ucf" for r in rows) == 66
    assert all(len(r.frames) == 6 for r in rows if r.video_id != "_lSMhDXPazM")
    assert [r.frames for r in rows if r.video_id == "_lSMhDXPazM"] == [()]
    assert not any('"' in r.video_id for r in rows)
    assert sum(r.video_id.startswith("-") for r in rows) >= 18
    quirks = "\n".join(release.quirks)
    assert "CRLF" in quirks
    assert "18 ids written in triple quotes" in quirks
    assert "_lSMhDXPazM" in quirks
    assert "HpLQCPkGLhs listed 2 times: birthday (line 48), wedding (line 553)" in quirks
    assert "cIuGwaBFX8I listed 2 times under the same event" in quirks
    assert len({r.event for r in rows}) == 20


def test_release_candidates_account_for_all_2000_rows(release, tmp_path):
    listing = release_source(release, str(tmp_path / "ucf"))
    cands = listing.candidates
    assert cands.schema == pl.Schema(schemas.VIDEO_CANDIDATES.columns)
    downloads = cands.filter(pl.col("download"))
    assert len(downloads) == 1932 and downloads["video_id"].n_unique() == 1932
    assert downloads["url"].str.starts_with("https://www.youtube.com/watch?v=").all()
    assert downloads["path"].str.starts_with("results/videos/squid-e-release/").all()
    ucf = cands.filter(~pl.col("download"))
    assert len(ucf) == 66 and ucf["video_id"].str.contains(r"^banner\d+$").all() and (ucf["event"] == "protest").all()
    assert ucf["path"].to_list()[0].startswith(str(tmp_path / "ucf"))
    # every release row is carried, with its 6 frame numbers in the release's (unsorted) order
    listed = cands.select("video_id", "release_rows").explode("release_rows").unnest("release_rows")
    assert len(listed) == 2000
    assert (listed.filter(pl.col("video_id") != "_lSMhDXPazM")["frames"].list.len() == 6).all()
    first = cands.filter(pl.col("video_id") == "-5VIQPJ8YOA").row(0, named=True)
    assert first["release_rows"] == [{"event": "birthday", "frames": [190, 950, 1900, 3990, 5700, 6460]}]
    two = cands.filter(pl.col("video_id") == "HpLQCPkGLhs").row(0, named=True)
    assert two["event"] == "birthday" and [r["event"] for r in two["release_rows"]] == ["birthday", "wedding"]
    assert two["release_frames"] == [585, 1872, 2223, 2691, 3042, 3627, 3978, 4095]
    assert "listed under events birthday, wedding" in two["notes"][0]
    assert cands.filter(pl.col("video_id") == "-OMFa5uJuDk")["release_frames"].to_list() == [
        [0, 835, 2171, 2505, 3340, 4843]
    ]


def test_release_through_candidates_manifest_and_report(shared_data, tmp_path, monkeypatch):
    """UCF videos present in ucf_dir are probed ok, absent ones are `unavailable` saying what to do."""
    monkeypatch.chdir(tmp_path)
    for vid in ("banner02", "banner08"):
        make_mp4(tmp_path / "ucf" / f"{vid}.mp4")
    cfg = {"dataset_csv": str(shared_data / "squid-e" / "dataset.csv"), "ucf_dir": "ucf"}
    cands, notes = list_candidates([{"type": "squid-e-release", "events": ["protest", "tsunami"]}], release_cfg=cfg)
    assert set(cands["event"]) == {"protest", "tsunami"} and len(cands) == 200
    status = check_local(cands, DownloadOptions(), journal_dir=tmp_path / "journal")
    manifest = build_manifest(cands, [status])  # the YouTube downloads have no record yet: reported as failed
    ucf = manifest.filter(pl.col("video_id").str.starts_with("banner"))
    by = dict(zip(ucf["video_id"], ucf["status"], strict=True))
    assert by["banner02"] == by["banner08"] == "ok" and sum(s == "unavailable" for s in by.values()) == 64
    err = ucf.filter(pl.col("video_id") == "banner100")["error"][0]
    assert "ucf/banner100.mp4: not found" in err and "squid_e_release.ucf_dir" in err
    report = download_report(manifest, notes)
    assert "18 ids written in triple quotes" in report and "| protest | 2 | 64 |" in report


def test_a_malformed_release_file_is_reported_not_fatal(tmp_path):
    bad = tmp_path / "dataset.csv"
    bad.write_bytes(
        b"video_ID,event,frame0,frame1,frame2,frame3,frame4,frame5\r\n"
        b"abcdefghijk,fire,1,2,3,4,5,6\r\n"
        b"short,fire,1,2,3,4,5,6\r\n"
        b"lmnopqrstuv,fire,1,2,x,4,5,6\r\n"
        b"wxyzABCDEFG,fire,1,2\r\n"
    )
    table = read_dataset_csv(bad)
    assert [r.video_id for r in table.rows] == ["abcdefghijk"]
    quirks = "\n".join(table.quirks)
    assert "line 3" in quirks and "line 4" in quirks and "line 5" in quirks
    with pytest.raises(ValueError, match="expected video_ID,event,frame0..frame5"):
        (tmp_path / "other.csv").write_text("id,label\n1,2\n")
        read_dataset_csv(tmp_path / "other.csv")


def test_paper_scale_config_dry_runs_offline(tmp_path):
    """The paper-scale config plans with every proxy pointing at a dead port: nothing is fetched while the DAG is
    built (a fetch would fail or hang into the timeout). Not timed: how long planning takes is a benchmark's
    question (benchmarks/dag.py), and a time limit here failed under load."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "no_proxy": "", "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9"}  # fmt: skip
    (tmp_path / "data" / "standard").mkdir(parents=True)  # the user's standard images, which the config check requires
    run = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "-s", str(ROOT / "Snakefile"), "--configfile",
         str(ROOT / "config" / "squid-e.yaml"), "--directory", str(tmp_path), "--cores", "2"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert "video_candidates" in run.stdout + run.stderr
    assert not (tmp_path / "results" / "downloads").exists()  # the release CSV is read in the checkpoint job only
