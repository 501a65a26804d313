"""Video acquisition on real tools: ffmpeg-made MP4s served by a loopback HTTP server, downloaded by yt-dlp.

The server answers like the internet does on a bad day: 404, a 500 that clears after two tries, a body cut short
of its Content-Length, a body that stalls. The acceptance test runs the videos stage through Snakemake on a URL
list, in two shard jobs, and checks the statuses and reasons, the report, that a rerun downloads nothing and that
`retry_failed` retries only the videos that are not ok. (Scale: tests/unit/videos/test_videos_scale.py.)
"""

from __future__ import annotations

import http.server
import json
import math
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import polars as pl
import pytest
import yaml
from helpers.runs import in_folder, planned_outputs, snakemake
from helpers.videotools import make_mp4

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet, write_parquet
from squidflow.videos.download import DownloadOptions, download
from squidflow.videos.download_shards import acquire_shard
from squidflow.videos.failures import classify, status_of
from squidflow.videos.manifest import (
    build_manifest,
    check_local,
    download_report,
    shard_status_paths,
    shards_holding,
)
from squidflow.videos.probe import ProbeError, probe
from squidflow.videos.sources import combine, local_source, safe_video_id, url_video_id, urls_source

ROOT = Path(__file__).resolve().parents[3]
FAST = DownloadOptions(retries=3, backoff_s=0.05, socket_timeout_s=1.0)


@pytest.fixture(scope="session")
def mp4s(tmp_path_factory) -> dict[str, bytes]:
    d = tmp_path_factory.mktemp("mp4s")
    return {
        name: make_mp4(d / f"{name}.mp4", pattern=pat).read_bytes()
        for name, pat in [("a", "testsrc"), ("b", "smptebars"), ("c", "mandelbrot")]
    }


class MediaServer:
    """A threaded loopback server; `hits[path]` counts GET requests per path (HEAD is not counted)."""

    def __init__(self, files: dict[str, bytes]):
        self.files = files
        self.hits: Counter[str] = Counter()
        self.lock = threading.Lock()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                try:
                    self._get()
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeouts): expected
                    pass

            def _get(self):
                with server.lock:
                    server.hits[self.path] += 1
                    n = server.hits[self.path]
                kind, _, name = self.path.strip("/").partition("/")
                body = server.files.get(Path(name).stem, b"")
                if kind == "missing" or not body:
                    return self._error(404)
                if kind == "flaky" and n <= 2:
                    return self._error(500)
                self.send_response(200)
                self.send_header("Content-Type", "video/mp4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if kind == "truncated":  # announce the whole file, send half, hang up
                    self.wfile.write(body[: len(body) // 2])
                    self.close_connection = True
                    return
                if kind == "slow":  # a first chunk, then a stall longer than the client's socket timeout
                    self.wfile.write(body[:1000])
                    self.wfile.flush()
                    time.sleep(3)
                self.wfile.write(body[1000:] if kind == "slow" else body)

            def _error(self, code):
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):  # clients hanging up on a stall are expected
                pass

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def total(self) -> int:
        return sum(self.hits.values())


@pytest.fixture()
def server(mp4s):
    srv = MediaServer(mp4s)
    yield srv
    srv.httpd.shutdown()


# --- probe --------------------------------------------------------------------------------------------------------
def test_probe_reads_geometry_and_rejects_a_cut_file(tmp_path):
    good = make_mp4(tmp_path / "good.mp4", seconds=2, size="160x120")
    info = probe(good)
    assert (info.width, info.height, info.fps, info.n_frames) == (160, 120, 25.0, 50)
    assert info.duration_s == pytest.approx(2.0, abs=0.05)
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(ProbeError, match="cut.mp4"):
        probe(cut)
    (tmp_path / "empty.mp4").write_bytes(b"")
    with pytest.raises(ProbeError, match="empty"):
        probe(tmp_path / "empty.mp4")


# --- download -----------------------------------------------------------------------------------------------------
def test_error_classes_follow_real_ytdlp_messages():
    def status(message):
        return status_of(classify(message))

    assert status("[generic] v: Unable to download webpage: HTTP Error 404: Not Found") == "unavailable"
    assert status("[youtube] abc: Private video. Sign in if you've been granted access") == "unavailable"
    assert status("[youtube] abc: Video unavailable. This video has been removed by the uploader") == "unavailable"
    assert status("[generic] v: Unable to download webpage: HTTP Error 503: Service Unavailable") == "failed"
    assert classify("[download] Got error: 5233 bytes read, 5234 more expected") == "truncated"
    assert classify("[download] Got error: The read operation timed out") == "timeout"


def test_good_video_downloads_with_metadata(server, tmp_path):
    res = download(f"{server.url}/good/a.mp4", tmp_path / "a.mp4", FAST)
    assert (res.status, res.attempts, res.error) == ("ok", 1, None)
    assert res.info.width == 96 and res.info.n_frames == 25
    assert res.metadata["webpage_url"] == f"{server.url}/good/a.mp4" and res.metadata["title"] == "a"
    # a second call finds the decodable file and makes no request
    before = server.total()
    again = download(f"{server.url}/good/a.mp4", tmp_path / "a.mp4", FAST)
    assert (again.status, again.attempts, server.total()) == ("ok", 0, before)


def test_404_is_unavailable_without_retries(server, tmp_path):
    res = download(f"{server.url}/missing/a.mp4", tmp_path / "x.mp4", FAST)
    assert res.status == "unavailable" and res.attempts == 1 and "404" in res.error and res.reason == "http_4xx"
    assert server.hits["/missing/a.mp4"] == 1
    assert not (tmp_path / "x.mp4").exists()


def test_500_twice_then_ok_after_backoff(server, tmp_path):
    waits = []
    res = download(f"{server.url}/flaky/b.mp4", tmp_path / "b.mp4", FAST, sleep=waits.append)
    assert (res.status, res.attempts) == ("ok", 3)
    assert waits == [0.05, 0.1]  # exponential backoff
    assert probe(tmp_path / "b.mp4").width == 96


def test_truncated_body_is_retried_then_failed(server, tmp_path):
    res = download(f"{server.url}/truncated/c.mp4", tmp_path / "c.mp4", FAST, sleep=lambda s: None)
    assert res.status in {"failed", "corrupt"} and res.attempts == FAST.retries + 1
    assert "expected" in res.error and res.reason == "truncated"  # yt-dlp: "... bytes read, ... more expected"
    assert not (tmp_path / "c.mp4").exists()


def test_stalled_body_times_out_and_fails(server, tmp_path):
    opts = DownloadOptions(retries=1, backoff_s=0.0, socket_timeout_s=0.5)
    res = download(f"{server.url}/slow/a.mp4", tmp_path / "s.mp4", opts)
    assert res.status == "failed" and res.attempts == 2
    assert "timed out" in res.error.lower() and res.reason == "timeout"


# --- sources and manifest -----------------------------------------------------------------------------------------
def test_local_tree_is_probed_and_a_broken_file_is_corrupt(tmp_path):
    make_mp4(tmp_path / "lib" / "wedding" / "w1.mp4")
    make_mp4(tmp_path / "lib" / "parade" / "p 1.mp4", pattern="smptebars")
    (tmp_path / "lib" / "parade" / "broken.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42 not a video")
    (tmp_path / "lib" / "parade" / "notes.txt").write_text("ignored")
    listing = local_source(tmp_path / "lib")
    cands, notes = combine([listing])
    assert sorted(cands["video_id"]) == ["broken", safe_video_id("p 1"), "w1"]
    assert safe_video_id("p 1").startswith("p_1-")  # cleaned, with a hash of the original
    assert any("p 1.mp4" in n for n in notes)  # the renamed id is reported
    status = check_local(cands, FAST, journal_dir=tmp_path / "journal")
    manifest = build_manifest(cands, [status])
    by_id = {r["video_id"]: r for r in manifest.iter_rows(named=True)}
    assert by_id["w1"]["status"] == "ok" and by_id["w1"]["event"] == "wedding" and by_id["w1"]["n_frames"] == 25
    assert by_id["broken"]["status"] == "corrupt" and "broken.mp4" in by_id["broken"]["error"]
    assert by_id["broken"]["reason"] == "corrupt" and by_id["w1"]["reason"] is None
    report = download_report(manifest, notes)
    assert "| parade | 1 | 0 | 0 | 1 | 2 |" in report


def test_url_list_ids_are_stable_and_unique():
    a, b = url_video_id("http://h/x/clip.mp4"), url_video_id("http://h/y/clip.mp4")
    assert a != b and a.startswith("clip-") and a == url_video_id("http://h/x/clip.mp4")
    assert url_video_id("https://www.youtube.com/watch?v=-OMFa5uJuDk&t=3") == "-OMFa5uJuDk"
    assert url_video_id("https://youtu.be/HpLQCPkGLhs") == "HpLQCPkGLhs"
    table = pl.DataFrame({"url": ["http://h/a.mp4", "", "http://h/b.mp4"], "event": ["fire", "fire", "fire"],
                          "video_id": [None, None, "bad id!"]})  # fmt: skip
    listing = urls_source(table, "list.csv")
    assert listing.candidates["video_id"].to_list()[1] == safe_video_id("bad id!")
    assert safe_video_id("bad id!").startswith("bad_id-")
    assert any("row 2" in n for n in listing.notes)


def test_a_url_lists_frames_and_relative_urls_become_exact_frames_and_served_urls(tmp_path):
    """Issue 47: a URL list's `frames` are the frames extraction takes exactly (release_frames, as the SQUID-E
    release lists them), and with the source's base_url a URL without a scheme (a published dataset's path of a video
    in a local folder) is joined onto it, percent-encoded; a full URL stays as it is. A frame that is not a number
    stops the listing naming the file, the line and the fix."""
    from squidflow.errors import InputError
    from squidflow.videos.sources import read_url_list

    path = tmp_path / "videos.csv"
    path.write_text(
        "url,event,video_id,frames\nconcert/stage a.mp4,concert,stage_a,40 12 12\n"
        "https://h/b.mp4,market,b,3;5\nhttps://h/c.mp4,market,c,\n"
    )
    listing = urls_source(read_url_list(path), str(path), base_url="http://127.0.0.1:8000")
    rows = {r["video_id"]: r for r in listing.candidates.iter_rows(named=True)}
    assert rows["stage_a"]["url"] == "http://127.0.0.1:8000/concert/stage%20a.mp4"
    assert rows["stage_a"]["release_frames"] == [12, 40] and rows["b"]["release_frames"] == [3, 5]
    assert rows["b"]["url"] == "https://h/b.mp4" and rows["c"]["release_frames"] is None
    assert urls_source(read_url_list(path), str(path)).candidates["url"][0] == "concert/stage a.mp4"  # as written
    path.write_text("url,event,frames\nhttps://h/b.mp4,market,3 x5\n")
    with pytest.raises(InputError) as err:
        urls_source(read_url_list(path), str(path))
    assert f"{path} line 2" in str(err.value) and "'x5'" in str(err.value) and "'12 40 77'" in str(err.value)


def test_a_download_shard_writes_a_status_row_for_every_outcome(server, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cands = pl.DataFrame([
        {"video_id": vid, "event": "fire", "source": "urls", "url": f"{server.url}/{kind}/a.mp4",
         "path": f"results/videos/urls/{vid}.mp4", "download": True, "title": "from list"}
        for vid, kind in [("g", "good"), ("m", "missing")]
    ])  # fmt: skip
    status = acquire_shard(cands, shard=0, shards=1, generation=0, opts=FAST, journal_dir="journal", brake=None,
                           progress=False).sort("video_id")  # fmt: skip
    assert status["status"].to_list() == ["ok", "unavailable"]
    assert status["reason"].to_list() == [None, "http_4xx"]
    assert status["title"].to_list() == ["a", "from list"]  # yt-dlp's metadata wins where it has any
    assert status.schema == pl.Schema(schemas.VIDEO_STATUS.columns)


# --- acceptance: the workflow on a URL list ----------------------------------------------------------------------
def run_in(workdir: Path, configfile: Path, *extra: str) -> subprocess.CompletedProcess:
    return snakemake(*in_folder(workdir, configfile, cores_=2), *extra, timeout=600)


@pytest.mark.slow  # runs Snakemake jobs
def test_url_list_workflow_accounts_for_every_video(server, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    urls = pl.DataFrame({
        "video_id": ["good1", "good2", "good3", "gone", "flaky", "cut"],
        "url": [f"{server.url}/good/a.mp4", f"{server.url}/good/b.mp4", f"{server.url}/good/c.mp4",
                f"{server.url}/missing/a.mp4", f"{server.url}/flaky/b.mp4", f"{server.url}/truncated/c.mp4"],
        "event": ["fire", "fire", "parade", "parade", "fire", "parade"],
    })  # fmt: skip
    urls.write_csv(work / "urls.csv")
    cfg = {"stages": ["videos"], "sources": [{"type": "urls", "path": "urls.csv"}],
           "download": {"retries": 3, "backoff_s": 0.05, "socket_timeout_s": 2, "shards": 2, "workers": 2}}  # fmt: skip
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))

    run = run_in(work, work / "config.yaml")
    assert run.returncode == 0, run.stderr[-3000:]
    manifest = read_parquet(work / "results/videos/videos.parquet", schemas.VIDEOS)
    status = dict(zip(manifest["video_id"], manifest["status"], strict=True))
    assert Counter(status.values()) == Counter({"ok": 4, "unavailable": 1, status["cut"]: 1})
    assert status["flaky"] == "ok" and status["gone"] == "unavailable" and status["cut"] in {"corrupt", "failed"}
    attempts = dict(zip(manifest["video_id"], manifest["attempts"], strict=True))
    assert (attempts["flaky"], attempts["gone"], attempts["cut"]) == (3, 1, 4)
    reason = dict(zip(manifest["video_id"], manifest["reason"], strict=True))
    assert (reason["good1"], reason["flaky"], reason["gone"]) == (None, None, "http_4xx")
    assert reason["cut"] in {"truncated", "corrupt"}
    assert sorted(p.name for p in (work / "results/videos/status").iterdir()) == [
        "shard0of2.g0.journal.jsonl",
        "shard0of2.g0.parquet",
        "shard1of2.g0.journal.jsonl",
        "shard1of2.g0.parquet",
    ]  # two shard jobs, not one job per video; each declares its videos' journal records (object storage keeps them)
    journal = [json.loads(line) for p in sorted((work / "results/videos/status").glob("*.journal.jsonl"))
               for line in p.read_text(encoding="utf-8").splitlines()]  # fmt: skip
    assert sorted(r["video_id"] for r in journal) == sorted(manifest["video_id"])
    assert {r["video_id"]: r["reason"] for r in journal}["gone"] == "http_4xx"  # what failed, and why
    ok = manifest.filter(pl.col("status") == "ok")
    assert all((work / p).exists() for p in ok["path"]) and set(ok["width"]) == {96}
    report = (work / "results/videos/download_report.md").read_text()
    assert "6 videos: 4 ok, 1 unavailable" in report
    assert "| fire | 3 | 0 | 0 | 0 | 3 |" in report
    assert "| parade | 1 | 1 |" in report
    assert f"| event | ok | http_4xx | {reason['cut']} |" in report  # videos per event × reason
    assert "| fire | 3 | 0 | 0 |" in report and "| parade | 1 | 1 | 1 |" in report

    # a rerun downloads nothing
    hits = server.total()
    rerun = run_in(work, work / "config.yaml")
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert server.total() == hits
    assert "Nothing to be done" in rerun.stdout + rerun.stderr

    # frames (issue 61): each extraction job declares the one download folder its videos are in, not every folder
    (work / "frames.yaml").write_text(yaml.safe_dump({**cfg, "stages": ["videos", "frames"]}))
    plan = run_in(work, work / "frames.yaml", "-n", "results/frames/shard0.parquet", "results/frames/shard1.parquet")
    declared = sorted(p for p in planned_outputs(plan.stdout, "extract_frames", "input") if "/downloads/" in p)
    assert declared == [f"results/videos/downloads/shard{d}of2.g0" for d in (0, 1)], plan.stdout[-3000:]

    # retry_failed: only the two videos that are not ok are tried again, once per invocation
    before = Counter(server.hits)
    retry = run_in(work, work / "config.yaml", "--config", "retry_failed=true")
    assert retry.returncode == 0, retry.stderr[-3000:]
    more = {path: n - before[path] for path, n in server.hits.items() if n != before[path]}
    assert set(more) == {"/missing/a.mp4", "/truncated/c.mp4"} and more["/missing/a.mp4"] == 1
    after = read_parquet(work / "results/videos/videos.parquet", schemas.VIDEOS)
    tables = {p.name for p in (work / "results/videos/status").iterdir()}
    assert {"shard0of2.g0.parquet", "shard1of2.g0.parquet"} <= tables  # the history of attempts stays
    retried = [read_parquet(work / "results/videos/status" / t, schemas.VIDEO_STATUS) for t in sorted(tables)
               if t.endswith(".g1.parquet")]  # fmt: skip
    assert retried, f"no retry generation among {sorted(tables)}"
    gen = {r["video_id"]: r["retry_generation"] for t in retried for r in t.iter_rows(named=True)}
    assert gen["gone"] == 1 and all(gen[v] == 0 for v in gen if v not in {"gone", "cut"})
    assert dict(zip(after["video_id"], after["status"], strict=True))["gone"] == "unavailable"
    # and a plain run afterwards is again a no-op
    hits = server.total()
    calm = run_in(work, work / "config.yaml")
    assert calm.returncode == 0 and server.total() == hits


@pytest.mark.parametrize("frame_shards, download_shards", [(2, 1), (2, 2), (2, 4), (4, 2), (3, 4), (6, 4), (1, 3)])
def test_a_frame_shard_declares_only_the_download_folders_that_hold_its_videos(frame_shards, download_shards):
    """Issue 61: each frame-extraction job declares the download folders its videos can be in, not all of them (on
    object storage a declared folder is fetched whole): every video's download shard is among its frame shard's, and
    the frame shards split the download folders between them when the counts share a divisor."""
    from squidflow.contracts.image_ids import shard_of

    held = {f: shards_holding(f, frame_shards, download_shards) for f in range(frame_shards)}
    for i in range(2000):
        video_id = f"clip{i:05d}"
        assert shard_of(video_id, download_shards) in held[shard_of(video_id, frame_shards)]
    g = math.gcd(frame_shards, download_shards)
    assert all(len(folders) == download_shards // g for folders in held.values())
    if download_shards % frame_shards == 0:  # each folder has one frame shard's videos: no folder fetched twice
        assert sorted(d for folders in held.values() for d in folders) == list(range(download_shards))


def test_shard_status_paths_pick_the_newest_generation_and_retry_once(tmp_path):
    status_dir = tmp_path / "status"
    tables = {0: [(0, ["ok", "ok"])], 1: [(0, ["ok", "failed"]), (1, ["ok", "unavailable"])], 2: [(0, ["corrupt"])]}
    for shard, gens in tables.items():
        for gen, statuses in gens:
            rows = [{c: None for c in schemas.VIDEO_STATUS.columns} | {"video_id": f"v{shard}{i}", "status": st}
                    for i, st in enumerate(statuses)]  # fmt: skip
            write_parquet(pl.DataFrame(rows), status_dir / f"shard{shard}of4.g{gen}.parquet", schemas.VIDEO_STATUS)
    (status_dir / "shard0of2.g5.parquet").write_bytes(b"")  # another shard count: not this layout's
    later = time.time() + 60
    plain = shard_status_paths(str(status_dir), 4, retry_failed=False, started=later)
    assert [Path(p).name for p in plain] == ["shard0of4.g0.parquet", "shard1of4.g1.parquet", "shard2of4.g0.parquet",
                                             "shard3of4.g0.parquet"]  # fmt: skip
    retry = shard_status_paths(str(status_dir), 4, retry_failed=True, started=later)
    assert [Path(p).name for p in retry] == ["shard0of4.g0.parquet", "shard1of4.g2.parquet", "shard2of4.g1.parquet",
                                             "shard3of4.g0.parquet"]  # fmt: skip
    # tables written during this invocation (after `started`) are not retried again by it
    again = shard_status_paths(str(status_dir), 4, retry_failed=True, started=time.time() - 60)
    assert [Path(p).name for p in again] == [Path(p).name for p in plain]
