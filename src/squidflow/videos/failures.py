"""Why a video is not `ok`: a closed set of reasons, decided from yt-dlp's own words.

At scale, acquisition is mostly failures, and they call for different answers: a 404 is gone for good, a 5xx is
worth another try in a few seconds, a rate limit or a bot check means the *site* wants us to stop for a while (and
retrying at once makes it worse), a missing PO token or JavaScript runtime is a local setup problem that no retry
fixes. So every video that is not `ok` gets one `reason` from `REASONS` (documented in config/README.md), its
`status` follows from the reason, and the raw message is kept beside it in `error`.

`classify` reads the final error message, the warnings yt-dlp printed on the way (PO-token and JS-runtime warnings
come as warnings before a "Requested format is not available" or an HTTP 403), and, for HTTP 403/429 answers, the
start of the page the site sent (a bot check or a captcha page says so in its text).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Reason:
    """One failure reason: the video's status, what the downloader does next, and what a person can do."""

    status: str  # unavailable | failed | corrupt
    action: str  # retry: try again after a backoff | brake: pause the whole site | stop: do not retry in this run
    description: str
    remedy: str


REASONS: dict[str, Reason] = {
    # the site refuses this client: pause the whole site (the brake), count the refusals in a row
    "bot_check": Reason(
        "failed",
        "brake",
        'the site asks to prove the client is not a bot (YouTube: "Sign in to confirm you\'re not a bot")',
        "pass cookies (download.cookies), slow down (download.sites), then retry_failed",
    ),
    "rate_limited": Reason(
        "failed",
        "brake",
        'HTTP 429 or YouTube\'s "current session has been rate-limited"',
        "slow down (download.sites videos_per_hour), wait, then retry_failed",
    ),
    "ip_blocked": Reason(
        "failed",
        "brake",
        'the site blocks this IP address (YouTube: "Your IP is likely being blocked")',
        "wait hours, or use another network (download.proxy), then retry_failed",
    ),
    "captcha": Reason(
        "failed",
        "brake",
        'the site answers with a captcha page ("unusual traffic")',
        "wait, pass cookies, slow down, then retry_failed",
    ),
    # not for this session: cookies, another country or a logged-in account may help
    "login_required": Reason(
        "unavailable",
        "stop",
        "the video needs a logged-in account (members-only, registered users)",
        "pass cookies of an account that may watch it",
    ),
    "age_restricted": Reason("unavailable", "stop", "the video is age-restricted", "pass cookies of an adult account"),
    "geo_blocked": Reason(
        "unavailable",
        "stop",
        "the video is not available from this country",
        "use a proxy in an allowed country (download.proxy)",
    ),
    # gone for good
    "private": Reason("unavailable", "stop", "the video is private", "none (ask the uploader)"),
    "removed": Reason(
        "unavailable",
        "stop",
        "removed by the uploader, for a policy or copyright claim, or its account was terminated",
        "none",
    ),
    "unavailable": Reason(
        "unavailable",
        "stop",
        "the site says the video is unavailable (not yet live, a premiere, gone)",
        "none, or retry_failed later for premieres and live events",
    ),
    "format_unavailable": Reason(
        "unavailable",
        "stop",
        "no format matches download.format (or the video is DRM protected)",
        "widen download.format",
    ),
    "unsupported_url": Reason(
        "unavailable", "stop", "yt-dlp does not know how to download this URL", "fix the URL in the source list"
    ),
    "missing_file": Reason(
        "unavailable",
        "stop",
        "a video that should be on disk (local folder, UCF-Crime) is not",
        "put the file where the source says, then list the sources again",
    ),
    "http_4xx": Reason(
        "unavailable",
        "stop",
        "HTTP 4xx other than 408/429 (404 not found, 410 gone, 403 forbidden)",
        "none, or check the URL",
    ),
    # a local setup problem: retrying does not help until it is fixed
    "po_token_or_js_runtime": Reason(
        "failed",
        "stop",
        "YouTube formats need a PO token or a JavaScript runtime "
        "that yt-dlp could not use, so the formats were skipped or answered 403",
        "install a JS runtime (deno) and a PO-token provider for yt-dlp, then retry_failed",
    ),
    # transient: retried with backoff inside the job
    "http_5xx": Reason("failed", "retry", "the server failed (HTTP 5xx)", "retry_failed later"),
    "network": Reason("failed", "retry", "no connection (DNS, refused, reset)", "check the network, retry_failed"),
    "timeout": Reason(
        "failed",
        "retry",
        "the connection stalled longer than download.socket_timeout_s",
        "retry_failed; raise socket_timeout_s on a slow network",
    ),
    "truncated": Reason("failed", "retry", "the body ended before its announced length", "retry_failed"),
    "corrupt": Reason(
        "corrupt",
        "retry",
        "the file does not decode (ffprobe or the first frames fail)",
        "retry_failed downloads it again",
    ),
    # a file on disk that is no usable video (a local file, a UCF-Crime file, or a download that probed bad)
    "empty_file": Reason(
        "corrupt",
        "stop",
        "the file is empty (0 bytes)",
        "replace the file (a download: retry_failed downloads it again)",
    ),
    "no_video_stream": Reason(
        "corrupt",
        "stop",
        "the file holds no video stream (audio only, subtitles, a picture)",
        "replace it with the video, or take it out of the source",
    ),
    # frame extraction (rule extract_frames), after the file passed the acquisition check
    "frames_undecodable": Reason(
        "corrupt",
        "stop",
        "frame extraction could not decode the frames it needs (the "
        "first frames decoded; later ones do not, or the stream's packets cannot be read)",
        "read `error` and the extract_frames log; replace or re-encode the file",
    ),
    "too_large": Reason(
        "corrupt",
        "stop",
        "the video's resolution is above the decoding cap "
        "(squidflow.frames.decode.MAX_PIXELS: decoding it would take gigabytes of memory)",
        "re-encode it at a lower resolution (ffmpeg -vf scale=-2:1080), or drop it from the source",
    ),
    "unknown": Reason(
        "failed",
        "retry",
        "an error none of the patterns knows (the raw message is in `error`)",
        "read `error`; update yt-dlp if an extractor broke",
    ),
    # the source asks for other licences (sources[].licenses): decided from the declared licence at listing, or from
    # the licence the watch page states (yt-dlp's --match-filter, before any byte of the video is fetched)
    "licence": Reason(
        "unavailable",
        "stop",
        "left out for its licence: the source asks for Creative Commons "
        "licences (sources[].licenses) and the video states another, or none",
        "none (the source's wish); widen sources[].licenses if you may use it",
    ),
    # the brake ended this site's downloads for the run before this video's turn
    "not_attempted": Reason(
        "failed",
        "stop",
        "not asked: the brake stopped downloads from this site in this run",
        "retry_failed later, with cookies or a slower pace",
    ),
}

# What a person does about a file already on disk (local folder, UCF-Crime, demo), where the remedy above speaks of
# downloads: the file is known by its size and modification time, so replacing it is enough.
LOCAL_REMEDIES: dict[str, str] = {
    "corrupt": "replace the file: the next run checks it again (no flag needed)",
    "empty_file": "replace the file: the next run checks it again (no flag needed)",
    "no_video_stream": "replace it with the video, or move it out of the folder",
    "missing_file": "put the file back where the source says; the next run lists it again",
    "frames_undecodable": "replace or re-encode the file: the next run checks it again",
    "too_large": "re-encode it at a lower resolution (ffmpeg -vf scale=-2:1080): the next run checks it again",
    "unknown": "read `error`; retry_failed checks the file again",
    "licence": "declare the folder's licence (sources[].license), or widen sources[].licenses",
}
LOCAL_SOURCES = frozenset({"local", "demo"})  # and squid-e-release's UCF-Crime files (no url)


def remedy(reason: str | None, *, on_disk: bool = False) -> str:
    """What to do about a video with this reason; for a file the user keeps on disk (`on_disk`), advice about the
    file rather than about downloading it again."""
    if reason is None:
        return ""
    if on_disk and reason in LOCAL_REMEDIES:
        return LOCAL_REMEDIES[reason]
    return REASONS[reason].remedy if reason in REASONS else ""


BRAKE_REASONS = frozenset(r for r, spec in REASONS.items() if spec.action == "brake")
RETRY_REASONS = frozenset(r for r, spec in REASONS.items() if spec.action == "retry")
# outcomes in which the site did not answer at all: they neither count as a refusal nor reset the count
NO_ANSWER_REASONS = frozenset({"network", "timeout", "not_attempted", "missing_file", "po_token_or_js_runtime"})

# Ordered: the first match wins. Each pattern is taken from yt-dlp's messages (extractor/youtube/_video.py,
# extractor/common.py, networking/exceptions.py, YoutubeDL.py) or a site's own page text. Specific before general:
# "Sign in to confirm you're not a bot" before "sign in", a rate-limit text that starts with "This content isn't
# available" before "unavailable".
PATTERNS: list[tuple[str, str]] = [
    ("bot_check", r"confirm (that )?you[’'`]?re not a bot|not a robot|confirm you are human"),
    ("rate_limited", r"rate[- ]limit|HTTP Error 429\b|Too Many Requests|try again later"),
    ("ip_blocked", r"IP is (likely )?being blocked|blocked your IP|your IP address has been"),
    ("captcha", r"captcha|unusual traffic"),
    (
        "po_token_or_js_runtime",
        r"PO Token|JavaScript runtime|JS runtime|n challenge solving failed|"
        r"Signature solving failed|nsig extraction failed",
    ),
    ("age_restricted", r"confirm your age|age[- ]restricted|inappropriate for some users"),
    (
        "geo_blocked",
        r"geo[- ]?restrict|not available (from|in) your (location|country)|"
        r"not made this video available in your country",
    ),
    ("private", r"private video|this video is private"),
    (
        "login_required",
        r"members[- ]only|join this channel|only available for registered users|"
        r"login required|sign in (to|if)|requires? (authentication|login)|use --cookies",
    ),
    (
        "removed",
        r"has been removed|been terminated|account .*(terminated|closed)|no longer available|"
        r"copyright (claim|grounds)|violating .* (policy|terms)",
    ),
    ("format_unavailable", r"requested format is not available|no video formats found|DRM protected"),
    ("unsupported_url", r"unsupported url|is not a valid url"),
    ("http_5xx", r"HTTP Error 5\d\d\b"),
    ("timeout", r"HTTP Error (408|425)\b|timed out|timeout"),
    ("http_4xx", r"HTTP Error 4\d\d\b"),
    (
        "truncated",
        r"bytes read, \d+ more expected|content too short|did not get any data blocks|"
        r"incomplete ?read|connection broken",
    ),
    (
        "network",
        r"name or service not known|failed to resolve|temporary failure in name resolution|"
        r"connection (refused|reset|aborted)|network is unreachable|remote end closed|"
        r"no route to host|errno 11[01]|\bssl\b|certificate verify failed",
    ),
    ("too_large", r"above the decoding cap"),
    (
        "corrupt",
        r"ffprobe|ffmpeg cannot decode|does not decode|moov atom not found|invalid data found|"
        r"no video stream|cannot remux",
    ),
    ("missing_file", r": not found; |file not found"),
    (
        "unavailable",
        r"video unavailable|this video is unavailable|not available|does not exist|"
        r"this live event will begin|premieres in|content isn[’']t available",
    ),
]
_COMPILED = [(reason, re.compile(p, re.IGNORECASE)) for reason, p in PATTERNS]

# What a site's error page says when it is a bot check, a captcha or an IP block rather than a plain refusal.
PAGE_PATTERNS: list[tuple[str, str]] = [
    ("bot_check", PATTERNS[0][1]),
    ("ip_blocked", PATTERNS[2][1]),
    ("captcha", PATTERNS[3][1]),
]
_PAGE = [(reason, re.compile(p, re.IGNORECASE)) for reason, p in PAGE_PATTERNS]


def reason_of_text(text: str) -> str | None:
    """The first reason whose pattern matches `text`, or None."""
    for reason, pattern in _COMPILED:
        if pattern.search(text or ""):
            return reason
    return None


def reason_of_page(page: str) -> str | None:
    """A refusal page (HTTP 403/429 body) that says *why*: bot check, IP block or captcha; None when it does not."""
    for reason, pattern in _PAGE:
        if pattern.search(page or ""):
            return reason
    return None


def classify(message: str, *, warnings: Iterable[str] = (), pages: Iterable[str] = ()) -> str:
    """The reason (a key of REASONS) for a failed attempt.

    `message` is yt-dlp's error (or the probe's), `warnings` what yt-dlp warned about during the attempt, `pages`
    the starts of the HTTP 403/429 bodies the site sent. A refusal page that names a bot check, captcha or IP block
    wins over the bare status code; PO-token / JS-runtime warnings explain a "Requested format is not available" or
    an HTTP 403 that follows them.
    """
    reason = reason_of_text(message)
    if reason in (None, "rate_limited", "http_4xx", "unknown"):
        for page in pages:
            refused = reason_of_page(page)
            if refused:
                return refused
    if reason in (None, "format_unavailable", "http_4xx") and any(
        reason_of_text(w) == "po_token_or_js_runtime" for w in warnings
    ):
        return "po_token_or_js_runtime"
    return reason or "unknown"


def status_of(reason: str | None) -> str:
    """The manifest status of a reason (`ok` when there is none)."""
    if reason is None:
        return "ok"
    if reason not in REASONS:
        raise ValueError(f"unknown failure reason {reason!r}; the reasons are {sorted(REASONS)}")
    return REASONS[reason].status
