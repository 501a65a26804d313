"""Acquisition at scale on real tools: shard jobs, the failure taxonomy, the brake, subtitles, kill -9 and rerun.

A loopback site (ffmpeg-made MP4s behind http.server) answers 429s, a bot-check page, stalls held by the test, and an
HTML5 page with subtitle tracks; it records when each request arrives, so the tests check what a site would see:
no request during a pause, none for a video finished before a kill.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlparse

import polars as pl
import pytest
import yaml
from helpers import runs
from helpers.runs import in_folder
from helpers.videotools import make_mp4

from squidflow.contracts import schemas
from squidflow.contracts.image_ids import shard_of
from squidflow.contracts.io import read_parquet
from squidflow.videos.brake import Brake, pace_for, site_of
from squidflow.videos.download import DownloadOptions, download
from squidflow.videos.download_shards import acquire_shard, read_journals
from squidflow.videos.failures import BRAKE_REASONS, REASONS, classify, status_of
from squidflow.videos.sources import urls_source

ROOT = Path(__file__).resolve().parents[3]
FAST = DownloadOptions(retries=3, backoff_s=0.05, socket_timeout_s=2.0)
BOT_PAGE = (
    "<html><body><h1>Sign in to confirm you\u2019re not a bot</h1><p>This helps protect our community.</p>"
    "</body></html>"
)
VTT = "WEBVTT\n\n00:00:00.000 --> 00:00:00.900\nA {lang} line.\n"


def brake_events(folder: Path) -> list[dict]:
    """The pauses and stops the brake appended to its history, `<folder>/events.jsonl`, oldest first."""
    path = folder / "events.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


@pytest.fixture(scope="session")
def mp4(tmp_path_factory) -> bytes:
    return make_mp4(tmp_path_factory.mktemp("scale") / "a.mp4").read_bytes()


REFUSAL_BURST_S = 1.0  # /refuse/ requests this soon after the first are one burst: each gets the rate limit


class Site:
    """A loopback site. `requests` lists (arrival time, path) of every GET; `hold` keeps /hold/ answers waiting."""

    def __init__(self, body: bytes):
        self.body = body
        self.requests: list[tuple[float, str]] = []
        self.hold = threading.Event()
        self.lock = threading.Lock()
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                now = time.time()
                with site.lock:
                    site.requests.append((now, self.path))
                    refusals = [t for t, p in site.requests if p.startswith("/refuse/")]
                kind, _, rest = urlparse(self.path).path.strip("/").partition("/")
                try:
                    if kind == "refuse":
                        # A rate limit to the first burst of requests (every request sent within a second of the
                        # first, so that whichever shard job reads its answer first, the site's first refusal is a
                        # rate limit), then a bot-check page (both HTTP 429).
                        first_burst = now - refusals[0] < REFUSAL_BURST_S
                        return self._send(429, b"" if first_burst else BOT_PAGE.encode(), "text/html")
                    if kind == "hold":
                        site.hold.wait(60)
                    if kind == "page":  # an HTML5 page whose <video> has subtitle tracks
                        stem = Path(rest).stem
                        html = (f'<html><head><title>Page {stem}</title></head><body><video controls>'
                                f'<source src="/good/{stem}.mp4" type="video/mp4">'
                                f'<track kind="subtitles" src="/subs/{stem}.en.vtt" srclang="en" label="English">'
                                f'<track kind="subtitles" src="/subs/{stem}.de.vtt" srclang="de" label="Deutsch">'
                                "</video></body></html>")  # fmt: skip
                        return self._send(200, html.encode(), "text/html")
                    if kind == "subs":
                        return self._send(200, VTT.format(lang=rest.split(".")[-2]).encode(), "text/vtt")
                    if kind == "missing":
                        return self._send(404, b"", "text/plain")
                    return self._send(200, site.body, "video/mp4")
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _send(self, code, body, ctype):
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                pass

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def hits(self, prefix: str = "") -> Counter:
        return Counter(p for _, p in self.requests if p.startswith(prefix))

    def close(self):
        self.hold.set()
        self.httpd.shutdown()


@pytest.fixture()
def site(mp4):
    s = Site(mp4)
    yield s
    s.close()


@pytest.fixture()
def other_site(mp4):
    s = Site(mp4)
    yield s
    s.close()


# --- the failure taxonomy on yt-dlp's own words ---------------------------------------------------------------------
REAL_MESSAGES = [
    ("[youtube] dQw4w9WgXcQ: Sign in to confirm you\u2019re not a bot. Use --cookies-from-browser or --cookies for the "
     "authentication. See  https://github.com/yt-dlp/yt-dlp/wiki/FAQ#how-do-i-pass-cookies-to-yt-dlp  for how to "
     "manually pass cookies. Also see  https://github.com/yt-dlp/yt-dlp/wiki/Extractors#exporting-youtube-cookies  "
     "for tips on effectively exporting YouTube cookies", "bot_check"),
    ("[youtube] abc: This content isn't available, try again later. The current session has been rate-limited by "
     "YouTube for up to an hour. It is recommended to use `-t sleep` to add a delay between video requests to avoid "
     "exceeding the rate limit.", "rate_limited"),
    ("[youtube] abc: All player responses are invalid. Your IP is likely being blocked by Youtube", "ip_blocked"),
    ("[youtube] abc: Requested format is not available. Use --list-formats for a list of available formats",
     "format_unavailable"),
    ("[generic] v: Unable to download webpage: HTTP Error 429: Too Many Requests (caused by <HTTPError 429: Too Many "
     "Requests>)", "rate_limited"),
    ("[youtube] abc: Private video. Sign in if you've been granted access to this video. Use --cookies-from-browser "
     "or --cookies for the authentication.", "private"),
    ("[youtube] abc: This video is not available from your location due to geo restriction", "geo_blocked"),
    ("[youtube] abc: The uploader has not made this video available in your country", "geo_blocked"),
    ("[youtube] abc: Sign in to confirm your age. This video may be inappropriate for some users. Use "
     "--cookies-from-browser or --cookies for the authentication.", "age_restricted"),
    ("[youtube] abc: Join this channel to get access to members-only content like this video, and other exclusive "
     "perks.", "login_required"),
    ("[vimeo] 1: This video is only available for registered users. Use --cookies, --cookies-from-browser, "
     "--username and --password", "login_required"),
    ("[youtube] abc: Video unavailable. This video has been removed by the uploader", "removed"),
    ("[youtube] abc: Video unavailable. This video is no longer available because the YouTube account associated "
     "with this video has been terminated.", "removed"),
    ("[youtube] abc: Video unavailable. This video is no longer available due to a copyright claim by Someone",
     "removed"),
    ("[youtube] abc: Video unavailable", "unavailable"),
    ("[youtube] abc: This live event will begin in a few moments.", "unavailable"),
    ("[youtube] abc: YouTube is requiring a captcha challenge before playback", "captcha"),
    ("[youtube] abc: This video is DRM protected", "format_unavailable"),
    ("Unsupported URL: https://example.com/page", "unsupported_url"),
    ("[generic] v: Unable to download webpage: HTTP Error 404: Not Found", "http_4xx"),
    ("[generic] v: Unable to download webpage: HTTP Error 403: Forbidden", "http_4xx"),
    ("[generic] v: Unable to download webpage: HTTP Error 503: Service Unavailable", "http_5xx"),
    ("[generic] v: Unable to download webpage: HTTP Error 408: Request Timeout", "timeout"),
    ("[download] Got error: The read operation timed out", "timeout"),
    ("[generic] v: Unable to download webpage: <urlopen error [Errno 111] Connection refused>", "network"),
    ("[generic] v: Unable to download webpage: [Errno -2] Name or service not known", "network"),
    ("[download] Got error: 5233 bytes read, 5234 more expected", "truncated"),
    ("results/videos/urls/x.mp4: ffmpeg cannot decode its first 5 frames (0 decoded): Invalid NAL unit size",
     "corrupt"),
    ("results/videos/urls/x.mp4: ffprobe cannot read it: moov atom not found", "corrupt"),
    ("data/ucf-crime/banner01.mp4: not found; UCF-Crime videos are not on YouTube", "missing_file"),
    ("[youtube] abc: Unable to extract yt initial data; please report this issue", "unknown"),
]  # fmt: skip


@pytest.mark.parametrize(("message", "reason"), REAL_MESSAGES, ids=[r for _, r in REAL_MESSAGES])
def test_real_ytdlp_messages_get_their_reason(message, reason):
    assert classify(message) == reason
    assert status_of(reason) in {"unavailable", "failed", "corrupt"}


def test_the_page_and_the_warnings_refine_the_reason():
    too_many = "[generic] v: Unable to download webpage: HTTP Error 429: Too Many Requests"
    assert classify(too_many, pages=[""]) == "rate_limited"
    assert classify(too_many, pages=[BOT_PAGE]) == "bot_check"
    sorry = "<html>Our systems have detected unusual traffic from your computer network.</html>"
    assert classify("HTTP Error 403: Forbidden", pages=[sorry]) == "captcha"
    gvs = ("[youtube] abc: web client https formats require a GVS PO Token which was not provided. They will be "
           "skipped as they may yield HTTP Error 403.")  # fmt: skip
    js = ("No supported JavaScript runtime could be found. Only deno is enabled by default; to use another runtime "
          "add  --js-runtimes RUNTIME[:PATH]  to your command/config.")  # fmt: skip
    no_format = "[youtube] abc: Requested format is not available. Use --list-formats for a list of available formats"
    assert classify(no_format) == "format_unavailable"
    assert classify(no_format, warnings=[gvs]) == "po_token_or_js_runtime"
    assert classify("HTTP Error 403: Forbidden", warnings=[js]) == "po_token_or_js_runtime"
    assert classify("[youtube] abc: Private video", warnings=[gvs]) == "private"  # a plain answer stays itself


def test_every_reason_is_documented_with_its_status():
    doc = (ROOT / "config" / "README.md").read_text()
    missing = [r for r, spec in REASONS.items() if f"| `{r}` | {spec.status} |" not in doc]
    assert not missing, f"config/README.md does not document the failure reasons {missing}"
    assert BRAKE_REASONS == {"bot_check", "rate_limited", "ip_blocked", "captcha"}


def test_sites_group_youtube_hosts_and_find_their_pace():
    assert {site_of(u) for u in ("https://www.youtube.com/watch?v=x", "https://youtu.be/x", "https://m.youtube.com/x",
                                 "https://rr3---sn-a.googlevideo.com/videoplayback")} == {"youtube.com"}  # fmt: skip
    assert site_of("https://www.vimeo.com/1") == "vimeo.com" and site_of("http://127.0.0.1:8000/a") == "127.0.0.1:8000"
    sites = {
        "youtube.com": {"videos_per_hour": 300},
        "example.org": {"requests_per_hour": 60},
        "*": {"videos_per_hour": 9},
    }
    assert pace_for("youtube.com", sites).videos_per_hour == 300
    assert pace_for("cdn.example.org", sites).requests_per_hour == 60
    assert pace_for("vimeo.com", sites).videos_per_hour == 9 and pace_for("vimeo.com", {}).videos_per_hour is None


# --- the brake's shared state -----------------------------------------------------------------------------------------
class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now

    def sleep(self, s):
        self.now += s


def test_brake_state_is_shared_between_jobs_counts_in_a_row_and_resets_per_run(tmp_path):
    clock = Clock()
    job_a = Brake(tmp_path, run_id="r1", pause_s=60, stop_after=3, clock=clock, sleep=clock.sleep)
    job_b = Brake(tmp_path, run_id="r1", pause_s=60, stop_after=3, clock=clock, sleep=clock.sleep)
    assert job_a.try_start_video("yt").go
    assert job_a.refused("yt", "rate_limited", "HTTP Error 429", asked_at=clock.now) is None
    gate = job_b.try_start_video("yt")  # the other job sees the pause
    assert not gate.go and gate.wait_s == pytest.approx(60)
    assert job_b.try_start_video("other").go  # other sites keep going
    # job B's request sent before the pause began was refused too: the same episode, counted once
    assert job_b.refused("yt", "rate_limited", "HTTP Error 429", asked_at=clock.now - 1) is None
    assert job_a.read("yt")["consecutive"] == 1
    job_b.before_request("yt")  # blocks (on the fake clock) until the pause is over
    assert clock.now == pytest.approx(1060)
    job_a.answered("yt")  # an answer that is not a refusal breaks the row
    for _ in range(3):
        note = job_b.refused("yt", "bot_check", "Sign in to confirm you’re not a bot", asked_at=clock.now)
        clock.now += 61
    assert note and note.startswith("yt: downloads stopped after 3 refusals in a row (last: bot_check")
    assert "retry_failed=true" in note and "cookies" in note and "videos_per_hour" in note
    assert job_a.try_start_video("yt").stopped == note
    with pytest.raises(Exception, match="downloads stopped"):
        job_a.before_request("yt")
    assert [e["event"] for e in brake_events(tmp_path)] == ["pause", "pause", "pause", "stop"]
    # the next Snakemake invocation starts again (a pause still running would be kept)
    next_run = Brake(tmp_path, run_id="r2", pause_s=60, stop_after=3, clock=clock, sleep=clock.sleep)
    assert next_run.try_start_video("yt").go and next_run.read("yt")["consecutive"] == 0


def test_pace_books_video_and_request_slots_across_jobs(tmp_path):
    clock = Clock()
    sites = {"slow.org": {"videos_per_hour": 60, "requests_per_hour": 720}}
    a = Brake(tmp_path, run_id="r", sites=sites, clock=clock, sleep=clock.sleep)
    b = Brake(tmp_path, run_id="r", sites=sites, clock=clock, sleep=clock.sleep)
    assert a.try_start_video("slow.org").go
    gate = b.try_start_video("slow.org")
    assert not gate.go and gate.wait_s == pytest.approx(60)  # 60 videos per hour: one a minute, whichever job asks
    clock.now += 60
    assert b.try_start_video("slow.org").go
    start = clock.now
    for _ in range(3):
        a.before_request("slow.org")
    assert clock.now - start == pytest.approx(10)  # 720 requests per hour: 5 s apart
    assert a.try_start_video("fast.org").go and b.try_start_video("fast.org").go  # no pace configured


# --- downloads on the loopback site ---------------------------------------------------------------------------------
def test_subtitles_come_in_the_same_pass_beside_the_video(site, tmp_path):
    opts = DownloadOptions(retries=0, socket_timeout_s=2.0, subtitles=("en",))
    res = download(f"{site.url}/page/clip.html", tmp_path / "clip.mp4", opts)
    assert res.status == "ok", res.error
    assert res.subtitles == [str(tmp_path / "clip.en.vtt")]  # German was not asked for
    assert (tmp_path / "clip.en.vtt").read_text().startswith("WEBVTT") and not (tmp_path / "clip.de.vtt").exists()
    assert site.hits("/subs/") == Counter({"/subs/clip.en.vtt": 1})
    assert res.metadata["title"].startswith("Page clip")  # the text comes in the same pass too


def test_a_failed_subtitle_is_a_note_not_a_failed_video(site, tmp_path, monkeypatch):
    opts = DownloadOptions(retries=0, socket_timeout_s=2.0, subtitles=("en",))
    real_send = None

    def break_subs(self, req):  # the subtitle request fails as a 404 would
        if "/subs/" in req.url:
            from yt_dlp.networking.exceptions import TransportError

            raise TransportError("HTTP Error 404: Not Found")
        return real_send(self, req)

    from yt_dlp.networking.common import RequestDirector

    real_send = RequestDirector.send
    monkeypatch.setattr(RequestDirector, "send", break_subs)
    res = download(f"{site.url}/page/clip.html", tmp_path / "clip.mp4", opts)
    assert res.status == "ok" and res.subtitles == []
    assert any("subtitles" in n and "404" in n for n in res.notes), res.notes


def _candidates(urls: dict[str, str]) -> pl.DataFrame:
    table = pl.DataFrame({"video_id": list(urls), "url": list(urls.values()), "event": ["fire"] * len(urls)})
    return urls_source(table, "list.csv").candidates


def test_journal_settles_finished_videos_whatever_the_shard_count(site, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cands = _candidates(
        {f"v{i}": f"{site.url}/good/a.mp4?v={i}" for i in range(6)} | {"gone": f"{site.url}/missing/a.mp4"}
    )
    opts = DownloadOptions(retries=0, socket_timeout_s=2.0, workers=3)
    tables = [acquire_shard(cands, shard=k, shards=2, generation=0, opts=opts, journal_dir="journal", brake=None,
                            progress=False) for k in range(2)]  # fmt: skip
    status = pl.concat(tables)
    assert sorted(status["video_id"]) == sorted(cands["video_id"]) and status["status"].value_counts().height == 2
    assert {r["video_id"]: shard_of(r["video_id"], 2) for r in status.iter_rows(named=True)}  # every video once
    asked = len(site.requests)
    # three shards now: every video, the 404 too, is settled by the journal, so nothing is asked again
    again = pl.concat([acquire_shard(cands, shard=k, shards=3, generation=0, opts=opts, journal_dir="journal",
                                     brake=None, progress=False) for k in range(3)])  # fmt: skip
    assert len(site.requests) == asked
    assert again.sort("video_id")["status"].to_list() == status.sort("video_id")["status"].to_list()
    # retry generation 1 asks again only for the video that is not ok
    retried = pl.concat([acquire_shard(cands, shard=k, shards=3, generation=1, opts=opts, journal_dir="journal",
                                       brake=None, progress=False) for k in range(3)])  # fmt: skip
    assert [p for _, p in site.requests[asked:]] == ["/missing/a.mp4"]
    gen = dict(zip(retried["video_id"], retried["retry_generation"], strict=True))
    assert gen["gone"] == 1 and gen["v0"] == 0
    # a line torn by a kill is skipped
    with open(tmp_path / "journal" / "shard0of2.jsonl", "a") as fh:
        fh.write('{"video_id": "v1", "status": "fai')
    assert read_journals(tmp_path / "journal")["v1"]["status"] == "ok"


def test_a_shard_puts_its_ok_videos_into_its_declared_folder_which_a_rerun_refills_without_a_request(
    site, tmp_path, monkeypatch
):
    """The download job's declared folder (issue 49): the ok videos as hard links to the working copies, the rows'
    `path` naming them there, a marker file so it is never empty; Snakemake deletes the folder before it runs a
    killed job again, and the rerun fills it from the working copies the journal settles, asking the site nothing."""
    monkeypatch.chdir(tmp_path)
    cands = _candidates({"a": f"{site.url}/good/a.mp4?v=a", "gone": f"{site.url}/missing/a.mp4"})
    opts = DownloadOptions(retries=0, socket_timeout_s=2.0, workers=2)
    folder = "results/videos/downloads/shard0of1.g0"

    def shard():
        return acquire_shard(cands, shard=0, shards=1, generation=0, opts=opts, journal_dir="journal", brake=None,
                             progress=False, folder=folder)  # fmt: skip

    rows = {r["video_id"]: r for r in shard().iter_rows(named=True)}
    assert rows["a"]["status"] == "ok" and rows["a"]["path"] == f"{folder}/a.mp4"
    assert rows["gone"]["status"] == "unavailable"
    working = cands.filter(pl.col("video_id") == "a")["path"].item()
    assert os.path.samefile(rows["a"]["path"], working)  # a link, not a second copy
    assert sorted(os.listdir(folder)) == [".squidflow-videos", "a.mp4"]
    asked = len(site.requests)
    shutil.rmtree(folder)  # as Snakemake does with a declared folder before it runs the job again
    again = {r["video_id"]: r for r in shard().iter_rows(named=True)}
    assert len(site.requests) == asked and again["a"]["path"] == rows["a"]["path"]
    assert sorted(os.listdir(folder)) == [".squidflow-videos", "a.mp4"]


def test_a_process_pool_downloads_and_classifies_the_same(site, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cands = _candidates({"a": f"{site.url}/good/a.mp4?v=a", "b": f"{site.url}/good/a.mp4?v=b",
                         "gone": f"{site.url}/missing/a.mp4"})  # fmt: skip
    opts = DownloadOptions(retries=0, socket_timeout_s=2.0, workers=2, pool="process")
    status = acquire_shard(cands, shard=0, shards=1, generation=0, opts=opts, journal_dir="journal",
                           brake=Brake(tmp_path / "brake", run_id="p"), progress=False)  # fmt: skip
    got = dict(zip(status["video_id"], zip(status["status"], status["reason"], strict=True), strict=True))
    assert got == {"a": ("ok", None), "b": ("ok", None), "gone": ("unavailable", "http_4xx")}


def test_pace_spaces_video_starts_on_the_site(site, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cands = _candidates({f"v{i}": f"{site.url}/good/a.mp4?v={i}" for i in range(4)})
    host = site_of(site.url)
    opts = DownloadOptions(retries=0, socket_timeout_s=2.0, workers=4, sites={host: {"videos_per_hour": 7200}})
    brake = Brake(tmp_path / "brake", run_id="pace", sites=opts.sites)
    status = acquire_shard(cands, shard=0, shards=1, generation=0, opts=opts, journal_dir="journal", brake=brake,
                           progress=False)  # fmt: skip
    assert status["status"].to_list() == ["ok"] * 4
    firsts = sorted(min(t for t, p in site.requests if p.endswith(f"v={i}")) for i in range(4))
    # 7,200 videos per hour: one start every 0.5 s although 4 workers are idle (slots are booked at dispatch; the
    # first request of a worker's new yt-dlp session may come a little late, so the span is what is checked)
    gaps = [b - a for a, b in zip(firsts, firsts[1:], strict=False)]
    assert firsts[-1] - firsts[0] >= 1.2 and min(gaps[1:]) >= 0.4, gaps  # unpaced, all four start within ~0.2 s


# --- the workflow: shard jobs, the brake across them, kill -9 and rerun ---------------------------------------------
def run_videos(workdir: Path, *extra: str, wait: bool = True):
    env: dict[str, str | None] = {"SQUIDFLOW_RUN_STARTED": None}  # each invocation is a run of its own
    args = in_folder(workdir, workdir / "config.yaml", cores_=2) + list(extra)
    if wait:
        return runs.snakemake(*args, env=env, timeout=600)
    return runs.start(*args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _workdir(tmp_path: Path, urls: dict[str, str], download: dict) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    pl.DataFrame({"video_id": list(urls), "url": list(urls.values()), "event": ["fire"] * len(urls)}).write_csv(
        work / "urls.csv"
    )
    cfg = {"stages": ["videos"], "sources": [{"type": "urls", "path": "urls.csv"}],
           "download": {"retries": 3, "backoff_s": 0.05, "socket_timeout_s": 5, **download}}  # fmt: skip
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    return work


@pytest.mark.slow
def test_brake_pauses_the_site_for_every_shard_job_then_stops_it(site, other_site, tmp_path):
    urls = {f"r{i}": f"{site.url}/refuse/a.mp4?v={i}" for i in range(6)}
    urls |= {f"g{i}": f"{other_site.url}/good/a.mp4?v={i}" for i in range(4)}
    pause = 3.0
    work = _workdir(tmp_path, urls, {"shards": 2, "workers": 2, "pause_s": pause, "stop_after": 2})
    run = run_videos(work)
    assert run.returncode == 0, run.stderr[-3000:]

    events = brake_events(work / "results/videos/brake")
    refused_site = site_of(site.url)
    assert [e["event"] for e in events] == ["pause", "stop"] and {e["site"] for e in events} == {refused_site}
    assert [e["reason"] for e in events] == ["rate_limited", "bot_check"]  # 429, then 429 with a bot-check page
    first = events[0]
    assert first["paused_until"] - first["paused_at"] == pytest.approx(pause)
    during = [t for t, _ in site.requests if first["paused_at"] + 0.25 < t < first["paused_until"] - 0.01]
    assert not during, f"the site was asked {len(during)} times during its pause"
    assert any(t >= first["paused_until"] - 0.01 for t, _ in site.requests)  # asked again after the pause
    stopped_at = events[1]["paused_at"]
    late = [p for t, p in site.requests if t > stopped_at + 0.25]
    assert not late, f"the site was asked {len(late)} times after the brake stopped it"

    manifest = read_parquet(work / "results/videos/videos.parquet", schemas.VIDEOS)
    reason = dict(zip(manifest["video_id"], manifest["reason"], strict=True))
    status = dict(zip(manifest["video_id"], manifest["status"], strict=True))
    assert all(status[f"g{i}"] == "ok" for i in range(4))  # the other site kept going
    refused = [reason[f"r{i}"] for i in range(6)]
    assert set(refused) <= {"rate_limited", "bot_check", "not_attempted"} and "not_attempted" in refused
    assert all(status[f"r{i}"] == "failed" for i in range(6))
    note = f"squidflow brake: {refused_site}: downloads stopped after 2 refusals in a row (last: bot_check"
    last_lines = run.stderr.strip().splitlines()[-3:]
    assert any(line.startswith(note) for line in last_lines), last_lines  # the run ends with the one line
    assert "retry_failed=true" in last_lines[-1] or any("retry_failed=true" in line for line in last_lines)
    report = (work / "results/videos/download_report.md").read_text()
    assert "## Stopped by the brake" in report and f"- {refused_site}: downloads stopped" in report
    assert "| fire | 4 |" in report and "not_attempted" in report


def _shard_job_pids(work: Path) -> list[int]:
    """The acquire_videos job processes Snakemake started for `work` (Snakemake runs each script as a python child)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        if "acquire_videos" in cmd and "snakemake" not in cmd.split(" ")[0] and cwd == str(work):
            pids.append(int(entry))
    return pids


@pytest.mark.slow
def test_kill_9_mid_shard_then_rerun_keeps_every_finished_video(site, tmp_path):
    urls = {f"v{i}": f"{site.url}/good/a.mp4?v={i}" for i in range(4)}
    urls |= {"held": f"{site.url}/hold/a.mp4?v=h"}
    urls |= {f"w{i}": f"{site.url}/good/a.mp4?v=w{i}" for i in range(3)}
    work = _workdir(tmp_path, urls, {"shards": 1, "workers": 1})
    proc = run_videos(work, wait=False)
    deadline = time.time() + 120
    while not site.hits("/hold/") and time.time() < deadline:
        time.sleep(0.1)
    assert site.hits("/hold/"), "the shard job never reached the held video"
    pids = _shard_job_pids(work)
    assert pids, "no acquire_videos job process found"
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    proc.communicate(timeout=120)
    assert proc.returncode != 0  # the job died: Snakemake reports it
    assert not (work / "results/videos/status/shard0of1.g0.parquet").exists()
    finished = read_journals(work / "results/videos/journal")
    assert sorted(finished) == ["v0", "v1", "v2", "v3"] and {r["status"] for r in finished.values()} == {"ok"}

    site.hold.set()  # the held request may finish now; the rerun asks for it again
    before = site.hits()
    rerun = run_videos(work)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    after = site.hits()
    again = {p: n - before[p] for p, n in after.items() if n != before[p]}
    assert not [p for p in again if any(p.endswith(f"v={i}") for i in range(4))], again  # finished: not asked again
    assert any(p.startswith("/hold/") for p in again) and all(
        any(p.endswith(f"v=w{i}") for p in again) for i in range(3)
    )
    manifest = read_parquet(work / "results/videos/videos.parquet", schemas.VIDEOS)
    assert manifest["status"].to_list() == ["ok"] * 8
    lines = (work / "results/videos/journal/shard0of1.jsonl").read_text().splitlines()
    assert len(lines) == 8 and len({json.loads(x)["video_id"] for x in lines}) == 8  # one line per video, ever
