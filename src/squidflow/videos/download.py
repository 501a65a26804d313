"""Download one video through yt-dlp, retrying what may pass and giving up at once on what will not.

yt-dlp handles YouTube, the other sites it supports and direct media links alike. Its own retry loop treats every
error the same, so we switch it off and keep ours: a transient failure (HTTP 5xx or 429, a timeout, a connection
reset, a body shorter than announced) is retried with exponential backoff and the partial file is resumed; a
permanent one (404/410, removed, private, blocked, unsupported URL) ends the video at once as `unavailable`. What
did download must then pass `squidflow.videos.probe` (ffprobe + decoding the first frames), else it is `corrupt`.
Nothing here raises for a bad video: the outcome is a `DownloadResult` that becomes the video's status row.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from squidflow.config import from_section
from squidflow.videos.probe import ProbeError, VideoInfo, probe

log = logging.getLogger(__name__)

# At most 480p, MP4 preferred; `<=?` keeps formats whose height is unknown (direct links), the final `b` is the
# best single file of at most 480p in any container, remuxed to MP4 afterwards.
DEFAULT_FORMAT = "bv*[height<=?480][ext=mp4]+ba[ext=m4a]/b[height<=?480][ext=mp4]/bv*[height<=?480]+ba/b[height<=?480]"

PERMANENT_PATTERNS = [
    r"HTTP Error (400|401|404|410|451)\b",
    r"\b(404|410)\b.*not found",
    r"video unavailable",
    r"private video",
    r"has been removed",
    r"account .* (terminated|closed)",
    r"copyright",
    r"not available in your country",
    r"not available on this app",
    r"sign in to confirm your age",
    r"members[- ]only",
    r"unsupported url",
    r"is not a valid url",
    r"no video formats found",
    r"requested format is not available",
    r"this live event will begin",
    r"premieres in",
    r"does not exist",
]


@dataclass(frozen=True)
class DownloadOptions:
    """The `download:` config section (config/README.md explains each key)."""

    format: str = DEFAULT_FORMAT
    cookies: str | None = None
    proxy: str | None = None
    sleep_s: float = 0.0
    retries: int = 3
    backoff_s: float = 5.0
    max_backoff_s: float = 300.0
    socket_timeout_s: float = 30.0
    rate_limit: str | None = None
    decode_frames: int = 5

    @classmethod
    def from_config(cls, section: dict[str, Any] | None) -> DownloadOptions:
        return from_section(cls, section)


@dataclass
class DownloadResult:
    status: str  # ok | unavailable | failed | corrupt
    error: str | None = None
    attempts: int = 0
    path: Path | None = None
    info: VideoInfo | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


def classify_error(message: str) -> str:
    """`permanent` (404, removed, private...) or `transient` (5xx, timeout, truncated, and anything unknown)."""
    if re.search(r"HTTP Error (5\d\d|408|425|429)\b", message):
        return "transient"
    if any(re.search(p, message, re.IGNORECASE) for p in PERMANENT_PATTERNS):
        return "permanent"
    return "transient"


def ydl_params(opts: DownloadOptions, outtmpl: str) -> dict[str, Any]:
    """yt-dlp options for one download: its retries off (ours are smarter), resume on, quiet, our format cap."""
    params: dict[str, Any] = {
        "format": opts.format,
        "outtmpl": {"default": outtmpl},
        "merge_output_format": "mp4",
        "postprocessors": [{"key": "FFmpegVideoRemuxer", "preferedformat": "mp4"}],
        "continuedl": True,
        "retries": 0,
        "fragment_retries": 3,
        "extractor_retries": 0,
        "socket_timeout": opts.socket_timeout_s,
        "noplaylist": True,
        "quiet": True,
        "no_warnings": True,
        "noprogress": True,
        "ignoreerrors": False,
        "overwrites": False,
        "logger": _YdlLogger(),
    }
    if opts.cookies:
        params["cookiefile"] = opts.cookies
    if opts.proxy:
        params["proxy"] = opts.proxy
    if opts.sleep_s > 0:
        params["sleep_interval_requests"] = opts.sleep_s
        params["sleep_interval"] = opts.sleep_s
    if opts.rate_limit:
        from yt_dlp.utils import parse_bytes

        params["ratelimit"] = parse_bytes(opts.rate_limit)
    return params


class _YdlLogger:
    """Route yt-dlp's chatter into the job log (debug), keep its warnings and errors visible."""

    def debug(self, msg: str) -> None:
        log.debug("yt-dlp: %s", msg)

    def info(self, msg: str) -> None:
        log.debug("yt-dlp: %s", msg)

    def warning(self, msg: str) -> None:
        log.warning("yt-dlp: %s", msg)

    def error(self, msg: str) -> None:
        log.info("yt-dlp: %s", msg)


METADATA_KEYS = ("title", "description", "tags", "language", "uploader", "upload_date", "license", "webpage_url",
                 "duration", "channel", "view_count", "categories")  # fmt: skip


def _run_ytdlp(url: str, params: dict[str, Any]) -> dict[str, Any]:
    import yt_dlp

    with yt_dlp.YoutubeDL(params) as ydl:
        info = ydl.extract_info(url, download=True)
        return ydl.sanitize_info(info) or {}


def _final_file(dest: Path) -> Path | None:
    """The file yt-dlp left for `dest` (MP4 after remux; any container as a fallback, remuxed by us)."""
    if dest.exists():
        return dest
    others = [p for p in dest.parent.glob(dest.stem + ".*") if not p.name.endswith((".part", ".ytdl", ".json"))]
    others = [p for p in others if re.fullmatch(re.escape(dest.stem) + r"\.[A-Za-z0-9]+", p.name)]
    return others[0] if others else None


def _remux_to_mp4(src: Path, dest: Path) -> None:
    import subprocess

    tmp = dest.with_name(f".{dest.stem}.remux.mp4")
    res = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(src), "-c", "copy", str(tmp)],
                         capture_output=True, text=True)  # fmt: skip
    if res.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise ProbeError(f"{src}: cannot remux to MP4: {res.stderr.strip()[-300:]}")
    tmp.replace(dest)
    src.unlink(missing_ok=True)


def download(
    url: str,
    dest: str | Path,
    opts: DownloadOptions,
    *,
    runner: Callable[[str, dict[str, Any]], dict[str, Any]] = _run_ytdlp,
    sleep: Callable[[float], None] = time.sleep,
) -> DownloadResult:
    """Fetch `url` into `dest` (an .mp4 path) and check it decodes. Never raises for a bad video.

    An existing `dest` that probes fine is kept as is (no network): a rerun downloads nothing already `ok`.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        try:
            return DownloadResult("ok", attempts=0, path=dest, info=probe(dest, decode_frames=opts.decode_frames))
        except ProbeError as exc:
            log.warning("%s exists but does not decode (%s); downloading it again", dest, exc)
            dest.unlink()
    params = ydl_params(opts, str(dest.with_suffix("")) + ".%(ext)s")
    last_error, last_kind = "", "failed"
    metadata: dict[str, Any] = {}
    for attempt in range(1, opts.retries + 2):
        if attempt > 1:
            wait = min(opts.backoff_s * 2 ** (attempt - 2), opts.max_backoff_s)
            log.info("%s: attempt %d/%d in %.1f s after: %s", url, attempt, opts.retries + 1, wait, last_error)
            sleep(wait)
        try:
            info = runner(url, params)
            metadata = {k: info.get(k) for k in METADATA_KEYS if info.get(k) is not None}
        except Exception as exc:  # yt-dlp raises DownloadError and friends; anything else is as unknown
            last_error = _clean(str(exc)) or type(exc).__name__
            if classify_error(last_error) == "permanent":
                return DownloadResult("unavailable", error=last_error, attempts=attempt)
            last_kind = "failed"
            continue
        got = _final_file(dest)
        if got is None:
            last_error, last_kind = f"yt-dlp reported success but left no file for {dest}", "failed"
            continue
        try:
            if got != dest:
                _remux_to_mp4(got, dest)
            return DownloadResult("ok", attempts=attempt, path=dest, metadata=metadata,
                                  info=probe(dest, decode_frames=opts.decode_frames))  # fmt: skip
        except ProbeError as exc:
            last_error, last_kind = str(exc), "corrupt"
            log.warning("%s: downloaded file does not decode (%s); removing it", url, exc)
            dest.unlink(missing_ok=True)
    return DownloadResult(last_kind, error=last_error, attempts=opts.retries + 1, metadata=metadata)


def _clean(message: str) -> str:
    """yt-dlp's messages carry ANSI colours and an 'ERROR: ' prefix; keep the words."""
    message = re.sub(r"\x1b\[[0-9;]*m", "", message)
    return re.sub(r"^(ERROR:\s*)+", "", message.strip())


def network_params(opts: DownloadOptions) -> dict[str, Any]:
    """The yt-dlp options that concern the network only (cookies, proxy, pauses, timeout): used by the search."""
    keep = ("cookiefile", "proxy", "sleep_interval_requests", "socket_timeout", "logger")
    return {k: v for k, v in ydl_params(opts, "%(id)s.%(ext)s").items() if k in keep}
