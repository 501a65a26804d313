"""Direct media links without yt-dlp and the in-process decode check: pooled connections, resume, yt-dlp's words,
and the same facts and verdicts as ffprobe's check on the same files. (Statuses and reasons of whole downloads:
tests/unit/videos/test_videos.py; brake, journal and kill -9: tests/unit/videos/test_videos_scale.py.)"""

from __future__ import annotations

import http.server
import threading

import pytest
from helpers.videotools import make_mp4

from squidflow.videos import direct
from squidflow.videos.download import DownloadOptions, Session, download
from squidflow.videos.failures import classify
from squidflow.videos.probe import ProbeError, _probe_ffprobe, _probe_torchcodec, in_process

FAST = DownloadOptions(retries=0, socket_timeout_s=2.0)


class RangeSite:
    """A loopback site that honours `Range`, and records each request's client port and Range header."""

    def __init__(self, body: bytes):
        self.body, self.seen, site = body, [], self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                rng = self.headers.get("Range")
                site.seen.append((self.client_address[1], self.path, rng))
                if "/missing/" in self.path:
                    return self._send(404, b"", {})
                if "/refuse/" in self.path:
                    return self._send(429, b"<html>please confirm you're not a bot</html>", {"Retry-After": "7"})
                start = int(rng.split("=")[1].rstrip("-")) if rng else 0
                if start:
                    extra = {"Content-Range": f"bytes {start}-{len(site.body) - 1}/{len(site.body)}"}
                    return self._send(206, site.body[start:], extra)
                return self._send(200, site.body, {})

            def _send(self, code, body, headers):
                self.send_response(code)
                for k, v in {"Content-Length": str(len(body)), **headers}.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture()
def site(tmp_path):
    s = RangeSite(make_mp4(tmp_path / "src.mp4").read_bytes())
    yield s
    s.httpd.shutdown()


def test_one_worker_reuses_its_connection_and_never_starts_ytdlp(site, tmp_path):
    session = Session(FAST)
    results = [download(f"{site.url}/v/{i}.mp4", tmp_path / f"{i}.mp4", FAST, session=session) for i in range(5)]
    assert [r.status for r in results] == ["ok"] * 5 and all(r.info.n_frames == 25 for r in results)
    assert results[0].metadata == {"title": "0", "webpage_url": f"{site.url}/v/0.mp4"}
    assert len({port for port, _, _ in site.seen}) == 1  # five GETs on one kept-alive connection
    assert session._ydl is None  # no YoutubeDL was made for direct links


def test_a_part_file_is_resumed_with_a_range_request(site, tmp_path):
    half = len(site.body) // 2
    (tmp_path / "r.mp4.part").write_bytes(site.body[:half])  # what an interrupted attempt (ours or yt-dlp's) leaves
    res = download(f"{site.url}/v/r.mp4", tmp_path / "r.mp4", FAST)
    assert res.status == "ok" and (tmp_path / "r.mp4").read_bytes() == site.body
    assert site.seen[-1][2] == f"bytes={half}-" and not (tmp_path / "r.mp4.part").exists()


def test_errors_carry_ytdlp_words_and_refusal_pages(site, tmp_path):
    gone = download(f"{site.url}/missing/x.mp4", tmp_path / "x.mp4", FAST)
    assert (gone.status, gone.reason) == ("unavailable", "http_4xx") and "HTTP Error 404: Not Found" in gone.error
    attempt = direct.Attempt()
    with pytest.raises(direct.DirectError, match="HTTP Error 429") as err:
        direct.fetch(f"{site.url}/refuse/y.mp4", tmp_path / "y.mp4", FAST, None, attempt)
    assert attempt.retry_after_s == 7.0 and attempt.refused_at is not None
    assert classify(str(err.value), pages=attempt.refusal_pages) == "bot_check"
    refused = download(f"{site.url}/refuse/y.mp4", tmp_path / "y.mp4", FAST)
    assert (refused.status, refused.reason) == ("failed", "bot_check")


def test_cookies_or_a_rate_limit_send_direct_links_through_ytdlp(site, tmp_path):
    opts = DownloadOptions(retries=0, socket_timeout_s=2.0, rate_limit="50M")
    assert not direct.handles(opts) and direct.handles(FAST)
    assert not direct.handles(DownloadOptions(proxy="socks5://127.0.0.1:1080"))
    assert direct.handles(DownloadOptions(proxy="http://127.0.0.1:3128"))
    session = Session(opts)
    res = download(f"{site.url}/v/z.mp4", tmp_path / "z.mp4", opts, session=session)
    assert res.status == "ok" and session._ydl is not None
    session.close()


@pytest.mark.skipif(not in_process(), reason="torchcodec cannot load here: the check runs through ffprobe")
def test_in_process_check_reads_what_ffprobe_reads_and_rejects_what_it_rejects(tmp_path):
    good = make_mp4(tmp_path / "good.mp4", seconds=2, size="160x120")
    assert _probe_torchcodec(good, 5) == _probe_ffprobe(good, 5, 60)
    data = good.read_bytes()
    (tmp_path / "cut.mp4").write_bytes(data[: len(data) // 2])  # moov at the end: unreadable when cut
    garbled = bytearray(data)
    start = garbled.find(b"mdat") + 200
    garbled[start : start + 1000] = bytes(
        (b * 7 + 13) & 0xFF for b in garbled[start : start + 1000]
    )  # first frames hit
    (tmp_path / "garbled.mp4").write_bytes(bytes(garbled))
    for name in ("cut", "garbled"):
        for check in (lambda p: _probe_torchcodec(p, 5), lambda p: _probe_ffprobe(p, 5, 60)):
            with pytest.raises(ProbeError, match=f"{name}.mp4") as err:
                check(tmp_path / f"{name}.mp4")
            assert classify(str(err.value)) == "corrupt", str(err.value)
