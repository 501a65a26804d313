"""Pace per site, and a brake that stops asking a site that refuses us — shared by every download worker of a run.

A site that answers with a rate limit, a bot check or an IP block is telling *the client* to stop, not this one
video: retrying at once (or going on down the list) gets the session blocked for longer. So the refusal pauses the
whole site for `pause_s` (or the site's Retry-After, if longer) for every worker of every concurrent shard job, and
after `stop_after` refusals in a row the run stops asking that site at all; the videos not yet asked are recorded as
`not_attempted` and one line says what happened and how to resume. Other sites keep going.

Pacing is a reservation of start slots: at most `videos_per_hour` video starts and `requests_per_hour` HTTP requests
per site, across all jobs (YouTube documents about 300 videos, or 1,000 requests, per hour for a guest session).

The shared state is one small JSON file per site under the brake folder (results/videos/brake/<site>.json),
read-modify-written under an `flock` on its lock file, so concurrent shard jobs on the machine that runs Snakemake
see the same pauses and slots. A state carries the run id (one per Snakemake invocation): a new run starts with the
refusal count and the stop cleared, but a pause still running is honoured. Every refusal, pause and stop is also
appended to `events.jsonl` there (one JSON object a line), the history to read when a site was stopped.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

log = logging.getLogger(__name__)

# YouTube answers from several hosts (the watch page, its API, the media CDN); a pause must cover all of them.
YOUTUBE_HOSTS = ("youtube.com", "youtu.be", "youtube-nocookie.com", "googlevideo.com", "ytimg.com")


def site_of(url: str) -> str:
    """The site a URL belongs to, as pacing and the brake count it: `youtube.com` for every YouTube host, else the
    host name without `www.` (with `:port` when the URL names one, so two local servers are two sites)."""
    parsed = urlparse(url if "//" in url else f"//{url}")
    host = (parsed.hostname or "").lower().rstrip(".")
    if any(host == h or host.endswith("." + h) for h in YOUTUBE_HOSTS):
        return "youtube.com"
    host = host[4:] if host.startswith("www.") else host
    try:
        port = parsed.port
    except ValueError:
        port = None
    return f"{host}:{port}" if port else (host or "local")


def _slug(site: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", site)


@dataclass(frozen=True)
class Pace:
    """At most this many video starts and HTTP requests per hour for one site (None: no limit)."""

    videos_per_hour: float | None = None
    requests_per_hour: float | None = None


def pace_for(site: str, sites: dict[str, dict[str, Any]] | None) -> Pace:
    """The `download.sites` entry for `site`: an exact key, else a parent domain's key, else `*`, else no limit."""
    sites = sites or {}
    for key in (site, *[k for k in sites if k != "*" and site.endswith("." + k)], "*"):
        if key in sites:
            spec = sites[key] or {}
            return Pace(spec.get("videos_per_hour"), spec.get("requests_per_hour"))
    return Pace()


class SiteStopped(Exception):  # noqa: N818 - a state, not an error of ours
    """The brake has stopped downloads from this site for this run (raised inside yt-dlp's request hook)."""

    def __init__(self, site: str, note: str):
        super().__init__(note)
        self.site = site
        self.note = note


@dataclass(frozen=True)
class Gate:
    """What the brake says about starting a video on a site now: go, wait `wait_s`, or stopped (with the note)."""

    go: bool
    wait_s: float = 0.0
    stopped: str | None = None


class Brake:
    """The shared per-site state of one run: pauses, refusals in a row, stops, and pacing slots."""

    def __init__(
        self,
        folder: str | Path,
        *,
        run_id: str,
        pause_s: float = 600.0,
        stop_after: int = 3,
        sites: dict[str, dict[str, Any]] | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.run_id = str(run_id)
        self.pause_s = float(pause_s)
        self.stop_after = int(stop_after)
        self.sites = sites or {}
        self.clock = clock
        self.sleep = sleep

    # --- state on disk ---------------------------------------------------------------------------------------
    def _paths(self, site: str) -> tuple[Path, Path]:
        return self.folder / f"{_slug(site)}.json", self.folder / f".{_slug(site)}.lock"

    def _read(self, path: Path, site: str) -> dict[str, Any]:
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            state = {}
        state.setdefault("site", site)
        if state.get("run") != self.run_id:  # a new run: the count and the stop start again; a pause stays
            state.update(run=self.run_id, consecutive=0, stopped=False, note=None, episode_started=0.0)
        return state

    def read(self, site: str) -> dict[str, Any]:
        """The site's state as this run sees it (no lock: writers replace the file atomically)."""
        return self._read(self._paths(site)[0], site)

    @contextlib.contextmanager
    def _locked(self, site: str) -> Iterator[dict[str, Any]]:
        path, lock = self._paths(site)
        with open(lock, "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                state = self._read(path, site)
                before = json.dumps(state, sort_keys=True)
                yield state
                if json.dumps(state, sort_keys=True) != before:
                    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
                    tmp.write_text(json.dumps(state, sort_keys=True), encoding="utf-8")
                    os.replace(tmp, path)
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _event(self, **event: Any) -> None:
        line = json.dumps({"time": self.clock(), "run": self.run_id, **event}, sort_keys=True) + "\n"
        fd = os.open(self.folder / "events.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)

    # --- asking ----------------------------------------------------------------------------------------------
    def try_start_video(self, site: str) -> Gate:
        """May a worker start a video on `site` now? Books the site's next video slot when it may."""
        now = self.clock()
        state = self.read(site)
        if state.get("stopped"):
            return Gate(False, stopped=state.get("note") or f"{site}: stopped")
        pace = pace_for(site, self.sites)
        wait = max(float(state.get("paused_until") or 0.0) - now, 0.0)
        if pace.videos_per_hour:
            wait = max(wait, float(state.get("next_video_at") or 0.0) - now)
        if wait > 0:
            return Gate(False, wait_s=wait)
        if not pace.videos_per_hour:
            return Gate(True)
        with self._locked(site) as state:  # book the slot; another job may have taken it since the read
            now = self.clock()
            if state.get("stopped"):
                return Gate(False, stopped=state.get("note") or f"{site}: stopped")
            wait = max(float(state.get("paused_until") or 0.0), float(state.get("next_video_at") or 0.0)) - now
            if wait > 0:
                return Gate(False, wait_s=wait)
            state["next_video_at"] = now + 3600.0 / pace.videos_per_hour
        return Gate(True)

    def before_request(self, site: str) -> None:
        """Block until `site` may be asked (its pause is over, its request slot has come); raise SiteStopped when
        the brake has stopped it. Called by yt-dlp's request hook before every HTTP request."""
        pace = pace_for(site, self.sites)
        while True:
            now = self.clock()
            state = self.read(site)
            if state.get("stopped"):
                raise SiteStopped(site, state.get("note") or f"{site}: stopped")
            wait = float(state.get("paused_until") or 0.0) - now
            if pace.requests_per_hour:
                wait = max(wait, float(state.get("next_request_at") or 0.0) - now)
            if wait <= 0:
                if not pace.requests_per_hour:
                    return
                with self._locked(site) as state:
                    now = self.clock()
                    ready = max(float(state.get("paused_until") or 0.0), float(state.get("next_request_at") or 0.0))
                    if not state.get("stopped") and ready <= now:
                        state["next_request_at"] = now + 3600.0 / pace.requests_per_hour
                        return
                continue
            self.sleep(min(wait, 5.0))

    # --- answers ---------------------------------------------------------------------------------------------
    def refused(self, site: str, reason: str, message: str, *, asked_at: float, retry_after_s: float = 0.0):
        """A refusal (rate limit, bot check, captcha, IP block) from `site`: pause it, count it, maybe stop.

        `asked_at` is when the refused request was sent. Refusals to requests sent before the current pause began
        are one episode (several workers asked at once): they extend nothing and count once. Returns the stop note when this refusal stopped the site, else None.
        """
        with self._locked(site) as state:
            now = self.clock()
            if asked_at < float(state.get("episode_started") or 0.0) or state.get("stopped"):
                return None
            state["consecutive"] = int(state.get("consecutive") or 0) + 1
            pause = max(self.pause_s, retry_after_s)
            state.update(episode_started=now, paused_until=max(float(state.get("paused_until") or 0.0), now + pause),
                         last_reason=reason, last_message=message[:300])  # fmt: skip
            stop = state["consecutive"] >= self.stop_after
            if stop:
                state["stopped"] = True
                state["note"] = stop_note(site, state["consecutive"], reason, message)
            event = {"site": site, "event": "stop" if stop else "pause", "reason": reason, "message": message[:300],
                     "consecutive": state["consecutive"], "paused_at": now, "paused_until": state["paused_until"]}  # fmt: skip
        self._event(**event)
        if stop:
            log.warning("%s", state["note"])
        else:
            log.warning("%s: %s (%d in a row); no request to it for %.0f s: %s", site, reason, event["consecutive"],
                        pause, message[:200])  # fmt: skip
        return state["note"] if stop else None

    def answered(self, site: str) -> None:
        """The site answered something other than a refusal: the refusals are no longer in a row."""
        if int(self.read(site).get("consecutive") or 0) == 0:
            return
        with self._locked(site) as state:
            state["consecutive"] = 0


def stop_note(site: str, count: int, reason: str, message: str) -> str:
    """The one line a person reads when the brake stops a site: what happened and how to resume."""
    said = " ".join(message.split())[:120]
    return (
        f'{site}: downloads stopped after {count} refusals in a row (last: {reason}: "{said}"); the videos not yet '
        f"asked are `not_attempted`. Resume later with `snakemake --config retry_failed=true`, with cookies "
        f"(download.cookies) or a slower pace (download.sites: {{{site}: {{videos_per_hour: N}}}})."
    )


def run_notes(folder: str | Path, run_id: str) -> list[str]:
    """The stop notes of run `run_id` (for the end of the Snakemake run and the download report)."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    notes = []
    for path in sorted(folder.glob("*.json")):
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if state.get("run") == str(run_id) and state.get("stopped") and state.get("note"):
            notes.append(state["note"])
    return notes
