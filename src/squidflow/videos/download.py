"""Download one video through yt-dlp, retrying what may pass, braking on what the site refuses, giving up on the rest.

yt-dlp handles YouTube and the other sites it supports; a direct media link is one GET on the worker process's
pooled connections (squidflow.videos.direct: yt-dlp's resume and error words, no extractor); an object in a bucket
(`s3://`) is retrieved through its Snakemake storage plugin (squidflow.videos.storage, the same error words). yt-dlp's retry loop treats every
error the same, so we switch it off and keep ours, driven by the failure reason (squidflow.videos.failures): a
transient failure (HTTP 5xx, a timeout, a connection reset, a body shorter than announced, a file that does not
decode) is retried with exponential backoff and the partial file is resumed; a refusal (rate limit, bot check,
captcha, IP block) pauses the whole site through the brake (squidflow.videos.brake) and is retried after the pause;
anything else (404, removed, private, geo or age blocks, no matching format, a missing PO token) ends the video at
once. What did download must then pass `squidflow.videos.probe` (its container read and its first frames decoded,
in process by the frames stage's decoder), else it is `corrupt`. Subtitles (manual, and automatic when asked) in the configured languages come in the
same pass, beside the video as `<stem>.<lang>.vtt`; a subtitle that fails is a note, not a failed video.

A worker keeps one yt-dlp session (`Session`) for all its videos: a new `YoutubeDL` costs ~0.1 s, and the site's
cookies stay warm. Every HTTP request goes through the session's hook, which waits out a pause of the site, keeps
its pace, and keeps the start of a 403/429 page (where a site says "captcha" or "not a bot"). Nothing here raises for
a bad video: the outcome is a `DownloadResult` that becomes the video's status row.
"""

from __future__ import annotations

import functools
import io
import logging
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

from squidflow.config.validation import defaults_from_schema, from_section
from squidflow.videos import direct as direct_fetch
from squidflow.videos import storage
from squidflow.videos.brake import Brake, SiteStopped, site_of
from squidflow.videos.failures import BRAKE_REASONS, NO_ANSWER_REASONS, RETRY_REASONS, classify, status_of
from squidflow.videos.probe import ProbeError, VideoInfo, probe
from squidflow.videos.storage import is_storage_url
from squidflow.vocabulary.licenses import licence_refusal

log = logging.getLogger(__name__)

# At most 480p, MP4 preferred; `<=?` keeps formats whose height is unknown (direct links), the final `b` is the
# best single file of at most 480p in any container, remuxed to MP4 afterwards.
SUBTITLE_EXTENSIONS = ("vtt", "srt")
# A URL whose path ends so is a media file, not a page (what video2dataset, too, downloads directly).
DIRECT_EXTENSIONS = ("mp4", "webm", "mkv", "mov", "m4v")


@dataclass(frozen=True)
@defaults_from_schema("download")
class DownloadOptions:
    """The `download:` config section (config/README.md explains each key)."""

    format: str
    cookies: str | None
    proxy: str | None
    sleep_s: float
    retries: int
    backoff_s: float
    max_backoff_s: float
    socket_timeout_s: float
    rate_limit: str | None
    decode_frames: int
    workers: int
    pool: str
    subtitles: tuple[str, ...]
    automatic_subtitles: bool
    sites: dict[str, Any]
    pause_s: float
    stop_after: int

    @classmethod
    def from_config(cls, section: dict[str, Any] | None) -> DownloadOptions:
        from squidflow.fetch import unredact_proxy

        section = dict(section or {})
        if section.get("proxy"):
            section["proxy"] = unredact_proxy(section["proxy"])
        return from_section(cls, section)


@dataclass
class DownloadResult:
    status: str  # ok | unavailable | failed | corrupt
    error: str | None = None
    attempts: int = 0
    path: Path | None = None
    info: VideoInfo | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None  # a key of squidflow.videos.failures.REASONS; None when ok
    subtitles: list[str] = field(default_factory=list)  # subtitle files beside the video
    notes: list[str] = field(default_factory=list)  # e.g. a subtitle that could not be fetched
    requeue: bool = False  # refused by a paused site with attempts left: ask again after the pause


def failure(reason: str, error: str, attempts: int, **kw: Any) -> DownloadResult:
    return DownloadResult(status_of(reason), error=error, attempts=attempts, reason=reason, **kw)


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
    if opts.subtitles:
        params.update(writesubtitles=True, writeautomaticsub=bool(opts.automatic_subtitles),
                      subtitleslangs=list(opts.subtitles), subtitlesformat="vtt/srt/best")  # fmt: skip
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


def info_metadata(info: dict[str, Any]) -> dict[str, Any]:
    """What a video's row keeps of yt-dlp's info dict: its text and provenance (`license` as the watch page states
    it, `uploader`, `upload_date`, `webpage_url`); the channel's name stands for a missing uploader."""
    out = {k: info.get(k) for k in METADATA_KEYS if info.get(k) is not None}
    if not out.get("uploader") and info.get("channel"):
        out["uploader"] = info["channel"]
    return out


class _Replay(io.RawIOBase):
    """An error page already read (to look for "captcha" in it), handed back to yt-dlp as if unread."""

    def __init__(self, data: bytes):
        super().__init__()
        self._buf = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def read(self, amt: int | None = None, **_: Any) -> bytes:  # urllib3's read takes decode_content=
        return self._buf.read(-1 if amt is None else amt)


def _peek(response: Any, limit: int = 1 << 20) -> str:
    """The start of an HTTP error body, leaving it readable for yt-dlp (YouTube's API reads its JSON errors)."""
    try:
        body = response.read(limit)
    except Exception:  # a body we cannot read says nothing; the status code still does
        return ""
    response.fp = _Replay(body)
    return body[:65536].decode("utf-8", "replace")


@functools.cache
def _session_class() -> type:
    """yt-dlp's YoutubeDL with a request hook (brake, pace, refusal pages) and soft subtitle failures."""
    import yt_dlp
    from yt_dlp.networking.exceptions import HTTPError
    from yt_dlp.utils import DownloadError

    class SessionYoutubeDL(yt_dlp.YoutubeDL):
        brake: Brake | None = None

        def start_attempt(self) -> None:
            self.seen_warnings: list[str] = []
            self.refusal_pages: list[str] = []
            self.refused_at: float | None = None
            self.retry_after_s = 0.0
            self.subtitle_errors: list[str] = []

        def urlopen(self, req):
            url = req if isinstance(req, str) else getattr(req, "url", None) or req.get_full_url()
            site = site_of(url)
            if self.brake is not None:
                self.brake.before_request(site)  # waits out a pause; raises SiteStopped
            sent = time.time()
            try:
                return super().urlopen(req)
            except HTTPError as exc:
                if exc.status in (403, 429):
                    self.refused_at = sent
                    self.refusal_pages.append(_peek(exc.response))
                    retry_after = exc.response.get_header("Retry-After")
                    if retry_after and retry_after.strip().isdigit():
                        self.retry_after_s = max(self.retry_after_s, float(retry_after))
                raise

        def report_warning(self, message, only_once=False):
            self.seen_warnings.append(str(message))  # before only_once hides a repeat on a reused session
            super().report_warning(message, only_once)

        def _write_subtitles(self, info_dict, filename):
            try:
                return super()._write_subtitles(info_dict, filename)
            except DownloadError as exc:  # the video is still worth having
                self.subtitle_errors.append(_clean(str(exc)))
                return []

    return SessionYoutubeDL


def direct_media_info(url: str) -> dict[str, Any] | None:
    """yt-dlp's info dict for a direct media link (as its generic extractor would make it), or None for a page."""
    parsed = urlparse(url)
    stem, _, ext = PurePosixPath(unquote(parsed.path)).name.rpartition(".")
    if parsed.scheme not in ("http", "https") or ext.lower() not in DIRECT_EXTENSIONS or not stem:
        return None
    return {
        "id": stem, "title": stem, "direct": True, "webpage_url": url, "original_url": url,
        "webpage_url_basename": f"{stem}.{ext}", "webpage_url_domain": parsed.hostname, "extractor": "generic",
        "extractor_key": "Generic", "formats": [{"format_id": ext.lower(), "url": url, "ext": ext.lower(), "vcodec": None}],
    }  # fmt: skip


class Session:
    """One worker's yt-dlp session, reused for all its videos (cheaper than a new YoutubeDL, and cookies stay)."""

    def __init__(self, opts: DownloadOptions, brake: Brake | None = None):
        self.opts = opts
        self.brake = brake
        self._ydl: Any = None
        self._attempt: Any = None
        self._storage: Any = None  # the storage plugin's provider, made at the first object URL

    def fetch(self, url: str, outtmpl: str, licenses: list[str] | None = None) -> dict[str, Any]:
        """Download `url` to `outtmpl`; yt-dlp's info dict, or the download's exception (or SiteStopped).

        A direct media link skips yt-dlp (its ~1,800 extractor patterns, a sniffing GET and a new connection per
        file: most of the time a small file takes) and is one GET on the worker process's pooled connections
        (squidflow.videos.direct: same `.part` resume, same error words, same brake), unless an option only yt-dlp
        implements (cookies, a rate limit) is set.
        """
        if is_storage_url(url):  # an object in a bucket: through its Snakemake storage plugin
            if self._storage is None:
                self._storage = storage.provider(url)
            self._attempt = direct_fetch.Attempt()
            if self.brake is not None:
                self.brake.before_request(site_of(url))  # waits out a pause; raises SiteStopped
            return storage.fetch(url, Path(outtmpl.replace("%(ext)s", _storage_ext(url))), self._storage)
        direct = direct_media_info(url)
        if direct and direct_fetch.handles(self.opts):
            self._attempt = direct_fetch.Attempt()
            filename = Path(outtmpl.replace("%(ext)s", direct["formats"][0]["ext"]))
            direct_fetch.fetch(url, filename, self.opts, self.brake, self._attempt)
            return {k: v for k, v in direct.items() if k != "formats"} | {"ext": filename.suffix[1:]}
        if self._ydl is None:
            self._ydl = _session_class()(ydl_params(self.opts, outtmpl))
            self._ydl.brake = self.brake
        ydl = self._attempt = self._ydl
        ydl.params["outtmpl"] = {"default": outtmpl}
        from squidflow.videos.youtube import ytdlp_licence_params

        ydl.params["match_filter"] = ytdlp_licence_params(licenses).get("match_filter")  # per video: its source's
        ydl.start_attempt()
        info = ydl.process_ie_result(direct, download=True) if direct else ydl.extract_info(url, download=True)
        return ydl.sanitize_info(info) or {}

    @property
    def attempt(self) -> Any:
        """What the last attempt saw: warnings, refusal pages, when the refused request was sent, subtitle errors."""
        return self._attempt

    def close(self) -> None:
        if self._ydl is not None:
            self._ydl.close()
            self._ydl = None


def _storage_ext(url: str) -> str:
    """An object's extension as a file's (its key's suffix, lower case; `mp4` when it has none)."""
    suffix = PurePosixPath(unquote(urlparse(url).path)).suffix.lower().lstrip(".")
    return suffix if re.fullmatch(r"[a-z0-9]{1,8}", suffix) else "mp4"


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


SUBTITLE_NAME = re.compile(r"(.+)\.[A-Za-z0-9_-]+\.(?:" + "|".join(SUBTITLE_EXTENSIONS) + ")")  # <stem>.<lang>.<ext>


def subtitles_by_stem(folder: str | Path) -> dict[str, list[str]]:
    """The subtitle files in `folder` (`<stem>.<lang>.vtt` or `.srt`, what yt-dlp writes, what the text stage reads)
    by the stem of the video they belong to, each list sorted, from one listing of the folder."""
    folder = Path(folder)
    if not folder.is_dir():
        return {}
    out: dict[str, list[str]] = {}
    for name in sorted(os.listdir(folder)):
        m = SUBTITLE_NAME.fullmatch(name)  # a language code has no dot: the stem is all before the last two
        if m:
            out.setdefault(m.group(1), []).append(str(folder / name))
    return out


def subtitle_files(video: str | Path) -> list[str]:
    """Subtitle files kept beside a video (`subtitles_by_stem`), sorted. It lists the video's folder: for the videos
    of a folder one after the other, a `SubtitleIndex` lists it once."""
    video = Path(video)
    return subtitles_by_stem(video.parent).get(video.stem, [])


class SubtitleIndex:
    """`subtitle_files` for many videos, each folder listed once, when its first video is asked about. Asked per
    video, a folder of n videos was listed n times: quadratic in the videos (the local check and a download shard's
    end spent more on it at 3,000 videos than on probing them; issue 61). For folders that do not change meanwhile."""

    def __init__(self) -> None:
        self._folders: dict[Path, dict[str, list[str]]] = {}
        self._lock = threading.Lock()

    def __call__(self, video: str | Path) -> list[str]:
        video = Path(video)
        with self._lock:  # the local check asks from several threads: one listing per folder, not one per thread
            found = self._folders.get(video.parent)
            if found is None:
                found = self._folders[video.parent] = subtitles_by_stem(video.parent)
        return found.get(video.stem, [])


def download(
    url: str,
    dest: str | Path,
    opts: DownloadOptions,
    *,
    session: Session | None = None,
    brake: Brake | None = None,
    sleep: Callable[[float], None] = time.sleep,
    first_attempt: int = 1,
    hand_back_refusals: bool = False,
    licenses: list[str] | None = None,
) -> DownloadResult:
    """Fetch `url` into `dest` (an .mp4 path) and check it decodes. Never raises for a bad video.

    An existing `dest` that probes fine is kept as is (no network): a rerun downloads nothing already `ok`.
    `session` is the worker's yt-dlp session (a new one per call when None); `brake` the run's shared site state.
    With `hand_back_refusals`, a refusal with attempts left returns at once with `requeue` set, so that the worker
    is free for other sites while this one is paused (the shard scheduler asks again from `first_attempt`).
    `licenses`: the source's licence wish (sources[].licenses): yt-dlp's --match-filter skips a video whose page
    states another licence before fetching a byte, and the video ends `unavailable` with reason `licence`.
    """
    dest = Path(dest)
    if not dest.parent.is_dir():  # one stat per video where the folder is there (a shard downloads thousands)
        dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        try:
            info = probe(dest, decode_frames=opts.decode_frames)
            return DownloadResult("ok", attempts=0, path=dest, info=info, subtitles=subtitle_files(dest))
        except ProbeError as exc:
            log.warning("%s exists but does not decode (%s); downloading it again", dest, exc)
            dest.unlink()
    own = session is None
    session = session or Session(opts, brake)
    try:
        return _download(url, dest, opts, session, brake, sleep, first_attempt, hand_back_refusals, licenses)
    finally:
        if own:
            session.close()


def _download(url: str, dest: Path, opts: DownloadOptions, session: Session, brake: Brake | None, sleep,
              first_attempt: int, hand_back: bool, licenses: list[str] | None = None) -> DownloadResult:  # fmt: skip
    site = site_of(url)
    outtmpl = str(dest.with_suffix("")) + ".%(ext)s"
    last_error, last_reason = "", "unknown"
    metadata: dict[str, Any] = {}
    notes: list[str] = []
    attempts = opts.retries + 1
    if licenses and direct_media_info(url):  # a bare media file states no licence: not fetched at all
        return failure("licence", licence_refusal(None, licenses) or "", 0)
    for attempt in range(first_attempt, attempts + 1):
        if attempt > first_attempt and (
            last_reason in RETRY_REASONS or (brake is None and last_reason in BRAKE_REASONS)
        ):
            wait = min(opts.backoff_s * 2 ** (attempt - 2), opts.max_backoff_s)
            log.info("%s: attempt %d/%d in %.1f s after: %s", url, attempt, attempts, wait, last_error)
            sleep(wait)
        started = time.time()
        try:
            info = session.fetch(url, outtmpl, licenses) if licenses else session.fetch(url, outtmpl)
            metadata = info_metadata(info)
            refused = licence_refusal(metadata.get("license"), licenses)
            if refused:  # yt-dlp's match filter skipped the download (a direct link states no licence at all)
                if brake is not None:
                    brake.answered(site)
                return failure("licence", refused, attempt, metadata=metadata)
        except SiteStopped as stop:
            if attempt == first_attempt and first_attempt == 1:
                return failure("not_attempted", stop.note, 0)
            return failure(last_reason if attempt > first_attempt else "not_attempted", last_error or stop.note,
                           attempt - 1, metadata=metadata)  # fmt: skip
        except Exception as exc:  # yt-dlp raises DownloadError and friends; anything else is as unknown
            last_error, last_reason = _failed_attempt(exc, session, brake, site, started)
            if hand_back and last_reason in BRAKE_REASONS and attempt < attempts:
                return failure(last_reason, last_error, attempt, metadata=metadata, requeue=True)
            if last_reason in RETRY_REASONS or last_reason in BRAKE_REASONS:
                continue
            return failure(last_reason, last_error, attempt, metadata=metadata)
        if brake is not None:
            brake.answered(site)
        notes = [f"subtitles: {e}" for e in getattr(session.attempt, "subtitle_errors", ())]
        got = _final_file(dest)
        if got is None:
            last_error, last_reason = f"yt-dlp reported success but left no file for {dest}", "unknown"
            continue
        try:
            if got != dest:
                _remux_to_mp4(got, dest)
            # a direct link or a bucket's object is one file, never subtitles: its folder is not listed (once per
            # video, that listing grew with the videos already downloaded; issue 61)
            subtitles = [] if isinstance(session.attempt, direct_fetch.Attempt) else subtitle_files(dest)
            return DownloadResult("ok", attempts=attempt, path=dest, metadata=metadata, notes=notes,
                                  info=probe(dest, decode_frames=opts.decode_frames), subtitles=subtitles)  # fmt: skip
        except ProbeError as exc:
            last_error, last_reason = str(exc), "corrupt"
            log.warning("%s: downloaded file does not decode (%s); removing it", url, exc)
            dest.unlink(missing_ok=True)
    return failure(last_reason, last_error, attempts, metadata=metadata, notes=notes)


def _failed_attempt(
    exc: Exception, session: Session, brake: Brake | None, site: str, started: float
) -> tuple[str, str]:
    """A failed attempt's error in words and its reason (squidflow.videos.failures.classify, from the message and
    what the attempt saw), told to the brake: a refusal slows the site down, any other answer counts as one."""
    seen = session.attempt
    error = _clean(str(exc)) or type(exc).__name__
    reason = classify(error, warnings=getattr(seen, "seen_warnings", ()), pages=getattr(seen, "refusal_pages", ()))
    if brake is not None and reason in BRAKE_REASONS:
        brake.refused(site, reason, error, asked_at=getattr(seen, "refused_at", None) or started,
                      retry_after_s=getattr(seen, "retry_after_s", 0.0))  # fmt: skip
    elif brake is not None and reason not in NO_ANSWER_REASONS:
        brake.answered(site)
    return error, reason


def _clean(message: str) -> str:
    """yt-dlp's messages carry ANSI colours and an 'ERROR: ' prefix; keep the words."""
    message = re.sub(r"\x1b\[[0-9;]*m", "", message)
    return re.sub(r"^(ERROR:\s*)+", "", message.strip())


def network_params(opts: DownloadOptions) -> dict[str, Any]:
    """The yt-dlp options that concern the network only (cookies, proxy, pauses, timeout): used by the search."""
    keep = ("cookiefile", "proxy", "sleep_interval_requests", "socket_timeout", "logger")
    return {k: v for k, v in ydl_params(opts, "%(id)s.%(ext)s").items() if k in keep}
