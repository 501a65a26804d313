"""Direct media links (a URL whose path ends in .mp4, .webm, ...) fetched over pooled connections, without yt-dlp.

yt-dlp's HTTP downloader opens a new connection per file and runs its extractor machinery around it; for a corpus of
direct links (what video2dataset downloads) that is most of the time a small file takes. Here one urllib3 pool per
worker process keeps connections to each host alive between videos, and a download is one GET streamed to
`<file>.part`, renamed when complete — yt-dlp's own layout, so a partial file from either is resumed by either with
a `Range` request (a server that ignores it sends the whole file again, which is then written from the start).

Everything around the request means what it means for yt-dlp's path: the brake is asked before the request
(a paused site waits, a stopped one raises `SiteStopped`); an HTTP 403/429 keeps the start of its page and its
Retry-After for `classify`; the errors carry yt-dlp's words ("HTTP Error 404: Not Found", "Got error: 5233 bytes
read, 5234 more expected", "The read operation timed out"), so their reasons (squidflow.videos.failures) are the
same. Options this path does not implement (cookies, a rate limit) send the link through yt-dlp instead
(`handles`).
"""

from __future__ import annotations

import functools
import http.client
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from squidflow.videos.brake import Brake, site_of

# What yt-dlp sends (yt_dlp.utils.networking.std_headers), so that a CDN answers this client as it answers yt-dlp.
HEADERS = {
    "User-Agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
                  "Chrome/131.0.0.0 Safari/537.36",
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "Accept-Language": "en-us,en;q=0.5",
    "Sec-Fetch-Mode": "navigate",
}  # fmt: skip
CHUNK = 1 << 16
PAGE_LIMIT = 1 << 20  # how much of a refusal page is kept to look for "captcha" in it


class DirectError(RuntimeError):
    """A failed direct download; the message has yt-dlp's words for the same failure."""


@dataclass
class Attempt:
    """What one attempt saw, under the names `download` reads from a yt-dlp session's attempt."""

    seen_warnings: list[str] = field(default_factory=list)
    refusal_pages: list[str] = field(default_factory=list)
    refused_at: float | None = None
    retry_after_s: float = 0.0
    subtitle_errors: list[str] = field(default_factory=list)


def handles(opts: Any) -> bool:
    """Does this path implement every option set in `opts` (a DownloadOptions)? Cookies, a rate limit and a proxy
    other than HTTP(S) (SOCKS) go to yt-dlp."""
    proxy_ok = not opts.proxy or str(opts.proxy).lower().startswith(("http://", "https://"))
    return not opts.cookies and not opts.rate_limit and proxy_ok


_pools_lock = threading.Lock()


@functools.cache
def _pool(proxy: str | None, timeout_s: float, pid: int) -> Any:
    """One connection pool per process (and proxy, timeout), shared by its worker threads (urllib3 pools are
    thread-safe); `pid` keeps a forked worker from sharing its parent's sockets."""
    import urllib3

    timeout = urllib3.Timeout(connect=timeout_s, read=timeout_s)
    kw: dict[str, Any] = {"num_pools": 64, "maxsize": 32, "block": False, "timeout": timeout, "headers": HEADERS}
    try:  # the CA bundle yt-dlp uses too, where the system's store is not set up
        import certifi

        kw["ca_certs"] = certifi.where()
    except ImportError:
        pass
    return urllib3.ProxyManager(proxy, **kw) if proxy else urllib3.PoolManager(**kw)


def pool_for(opts: Any) -> Any:
    with _pools_lock:
        return _pool(opts.proxy, float(opts.socket_timeout_s), os.getpid())


def _part_size(part: Path) -> int:
    """The bytes of a part left by an earlier attempt (resumed), 0 where there is none: one stat per video."""
    try:
        return part.stat().st_size
    except FileNotFoundError:
        return 0


def fetch(url: str, filename: Path, opts: Any, brake: Brake | None, attempt: Attempt) -> None:
    """Download `url` to `filename` (via `<filename>.part`), resuming a part left by an earlier attempt.

    Raises DirectError with yt-dlp's message for the failure, or SiteStopped from the brake.
    """
    import urllib3
    from urllib3.exceptions import HTTPError, IncompleteRead, ProtocolError, ReadTimeoutError, TimeoutError

    site = site_of(url)
    part = filename.with_name(filename.name + ".part")
    have = _part_size(part)
    headers = dict(HEADERS)
    if have:
        headers["Range"] = f"bytes={have}-"
    if opts.sleep_s > 0:
        time.sleep(opts.sleep_s)
    if brake is not None:
        brake.before_request(site)  # waits out a pause; raises SiteStopped
    sent = time.time()
    retries = urllib3.Retry(total=None, connect=0, read=0, status=0, other=0, redirect=10, raise_on_status=False)
    written = 0
    expected: int | None = None
    try:
        resp = pool_for(opts).request("GET", url, headers=headers, preload_content=False, retries=retries)
        try:
            if resp.status == 416 and have:  # the part is already whole (yt-dlp: "has already been downloaded")
                part.replace(filename)
                return
            if resp.status >= 400:
                _refusal(resp, attempt, sent)
                reason = resp.reason or http.client.responses.get(resp.status, "")
                raise DirectError(f"unable to download video data: HTTP Error {resp.status}: {reason}")
            resume = have and resp.status == 206
            length = resp.headers.get("Content-Length")
            expected = int(length) if length and length.isdigit() else None
            with open(part, "ab" if resume else "wb") as fh:
                for chunk in resp.stream(CHUNK):
                    fh.write(chunk)
                    written += len(chunk)
            if expected is not None and written < expected:
                raise IncompleteRead(written, expected - written)
        finally:
            resp.release_conn()
    except DirectError:
        raise
    except (ReadTimeoutError, TimeoutError) as exc:
        raise DirectError(f"Got error: The read operation timed out ({type(exc).__name__})") from exc
    except (IncompleteRead, ProtocolError) as exc:
        inner = exc.args[1] if isinstance(exc, ProtocolError) and len(exc.args) > 1 else exc
        if isinstance(inner, IncompleteRead):
            raise DirectError(f"Got error: {inner.partial} bytes read, {inner.expected} more expected") from exc
        if isinstance(inner, http.client.IncompleteRead) or expected is not None:
            missing = (expected or 0) - written
            raise DirectError(f"Got error: {written} bytes read, {max(missing, 1)} more expected") from exc
        raise DirectError(f"Got error: {_words(exc)}") from exc
    except (HTTPError, OSError) as exc:  # no connection: refused, reset, DNS, TLS
        raise DirectError(f"Unable to download video data: {_words(exc)}") from exc
    part.replace(filename)


def _refusal(resp: Any, attempt: Attempt, sent: float) -> None:
    """Keep what a 403/429 says: the start of its page (bot check? captcha?), its Retry-After, when it was asked."""
    if resp.status not in (403, 429):
        resp.drain_conn()
        return
    attempt.refused_at = sent
    try:
        body = resp.read(PAGE_LIMIT)
    except Exception:  # a body we cannot read says nothing; the status code still does
        body = b""
    attempt.refusal_pages.append(body[:65536].decode("utf-8", "replace"))
    retry_after = (resp.headers.get("Retry-After") or "").strip()
    if retry_after.isdigit():
        attempt.retry_after_s = max(attempt.retry_after_s, float(retry_after))


def _words(exc: BaseException) -> str:
    """The innermost reason of a urllib3 error ("[Errno 111] Connection refused"), as yt-dlp would print it."""
    reason: Any = getattr(exc, "reason", None)
    while getattr(reason, "reason", None) is not None:
        reason = reason.reason
    return str(reason or exc)
