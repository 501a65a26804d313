"""Download jobs by shard: a bounded pool of workers per job, one journal line per finished video.

One job per video suits two thousand videos, not the corpora built next (millions): Snakemake then plans for
minutes before anything downloads. So the download candidates are split into `download.shards` shards by a stable
hash of their id (as the frames stage does), and each shard job downloads its videos with `download.workers`
workers (threads, or processes with `download.pool: process`).

Each finished video — `ok` or not — is appended at once to the shard's journal
(results/videos/journal/shard<k>of<n>.jsonl, one JSON line, written with O_APPEND), so a job killed mid-shard loses
no finished video: the rerun reads the journals, keeps every finished video as it is (no request to the site), and
downloads the rest. The videos download to their working copies (the candidates' `path`,
results/videos/<source>/<id>.mp4, beside the journal on the machine that runs the job), which outlive a killed job;
at its end the job puts the shard's `ok` videos and their subtitles into its declared folder
results/videos/downloads/shard<k>of<n>.g<generation>/ (`shard_folder`: hard links, no second copy on disk), and its
status table's `path` names them there, so a later job gets them as declared inputs, on object storage too. The
journal is read whole (every shard's file), so changing the shard count downloads nothing again either. A journal
line carries the retry generation it was made in: the job of generation N (`retry_failed`, see videos.smk) asks
again only for the videos whose newest line is not `ok` and older than N.

Workers take videos site by site, round-robin, through the brake (squidflow.videos.brake): a site that is paused or
paced waits while the other sites' videos go on, and the videos of a site the brake has stopped are recorded as
`not_attempted` without a request.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import polars as pl

from squidflow.contracts import schemas
from squidflow.contracts.image_ids import shard_of
from squidflow.contracts.io import conform
from squidflow.videos.brake import Brake, site_of
from squidflow.videos.download import DownloadOptions, DownloadResult, Session, download, failure
from squidflow.videos.failures import BRAKE_REASONS
from squidflow.videos.sources import pending

log = logging.getLogger(__name__)

# The text yt-dlp's info dict gives (it wins over the listing's where it has any).
TEXT_FROM_DOWNLOAD = ("title", "description", "tags", "language", "uploader", "upload_date", "license", "webpage_url")
PROBE_FIELDS = ("duration_s", "fps", "n_frames", "width", "height", "stored_width", "stored_height")


def shard_candidates(candidates: pl.DataFrame, shard: int, shards: int) -> pl.DataFrame:
    """The download candidates (`download` true) of one shard, in candidate order."""
    todo = candidates.filter(pl.col("download") & pending(candidates))
    keep = [shard_of(v, shards) == shard for v in todo["video_id"].to_list()]
    return todo.filter(pl.Series(keep, dtype=pl.Boolean))


# --- the journal ---------------------------------------------------------------------------------------------------
def outcome_record(video_id: str, generation: int, result: DownloadResult) -> dict[str, Any]:
    """What the journal keeps of one finished video: its outcome, ffprobe facts, subtitles and downloaded text."""
    record: dict[str, Any] = {
        "video_id": video_id,
        "generation": int(generation),
        "finished_at": time.time(),
        "status": result.status,
        "reason": result.reason,
        "error": result.error,
        "attempts": result.attempts,
        "subtitles": list(result.subtitles),
        "notes": list(result.notes),
    }
    if result.info is not None:
        record.update(result.info.as_row())
    record.update({k: result.metadata[k] for k in TEXT_FROM_DOWNLOAD if result.metadata.get(k) not in (None, "", [])})
    if record["subtitles"]:  # by their paths in the workflow, not the job's local copies on object storage
        from squidflow.contracts.paths import recorded_path

        record["subtitles"] = [recorded_path(sub) for sub in record["subtitles"]]
    return record


class Journal:
    """One shard job's append-only record of finished videos (JSON Lines; a half-written last line is ignored)."""

    def __init__(self, folder: str | Path, name: str):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / f"{name}.jsonl"
        self._lock = threading.Lock()

    def append(self, record: dict[str, Any]) -> None:
        """Write one line in one `write` on an O_APPEND descriptor: a kill leaves whole lines or a torn last one."""
        data = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)


def read_journals(folder: str | Path, ids: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
    """The newest record of each video over every journal file under `folder` (highest generation, then latest)."""
    wanted = set(ids) if ids is not None else None
    latest: dict[str, dict[str, Any]] = {}
    folder = Path(folder)
    if not folder.is_dir():
        return latest
    for path in sorted(folder.glob("*.jsonl")):
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    rec = json.loads(line)
                    vid = rec["video_id"]
                except (ValueError, KeyError, TypeError):  # a line torn by a kill
                    continue
                if wanted is not None and vid not in wanted:
                    continue
                old = latest.get(vid)
                key = (int(rec.get("generation") or 0), float(rec.get("finished_at") or 0.0))
                if old is None or key >= (int(old.get("generation") or 0), float(old.get("finished_at") or 0.0)):
                    latest[vid] = rec
    return latest


def is_finished(record: dict[str, Any] | None, generation: int) -> bool:
    """Does this journal record settle the video for a job of `generation`? `ok` (with its file still there) always
    does; another outcome does when it was made in this generation or a later one (else retry_failed asks again)."""
    if record is None:
        return False
    if record.get("status") == "ok":
        return bool(record.get("path_exists", True))
    return int(record.get("generation") or 0) >= generation


# --- status rows -----------------------------------------------------------------------------------------------------
def retrieved_at(finished_at: float) -> str:
    """When a download finished, as ISO 8601 UTC to the second (the provenance the published images carry)."""
    import datetime as dt

    return dt.datetime.fromtimestamp(float(finished_at), dt.timezone.utc).replace(microsecond=0).isoformat()


def status_row(candidate: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    """A VIDEO_STATUS row: the candidate's listing, overlaid with what its download found."""
    row: dict[str, Any] = {c: None for c in schemas.VIDEO_STATUS.columns}
    row.update({k: v for k, v in candidate.items() if k in schemas.VIDEO_STATUS.columns})
    for key in TEXT_FROM_DOWNLOAD:
        if key == "license" and row.get("license"):
            continue  # the licence the source declares in the config is the one it gives the videos
        if record.get(key) not in (None, "", []):
            row[key] = record[key]
    if candidate.get("download") and record.get("status") == "ok" and record.get("finished_at"):
        row["retrieved_at"] = retrieved_at(record["finished_at"])
    if record.get("status") == "ok" or record.get("width") is not None:
        row.update({k: record.get(k) for k in PROBE_FIELDS})
    notes = list(candidate.get("notes") or []) + list(record.get("notes") or [])
    row.update(
        status=record["status"],
        reason=record.get("reason"),
        error=record.get("error"),
        attempts=record.get("attempts"),
        subtitles=list(record.get("subtitles") or []),
        notes=notes or None,
        retry_generation=int(record.get("generation") or 0),
    )
    return row


def status_table(rows: list[dict[str, Any]]) -> pl.DataFrame:
    if not rows:
        return schemas.empty(schemas.VIDEO_STATUS)
    return conform(pl.DataFrame(rows, schema=schemas.VIDEO_STATUS.columns), schemas.VIDEO_STATUS)


# --- workers ---------------------------------------------------------------------------------------------------------
_local = threading.local()


def _worker_session(opts: DownloadOptions, brake: Brake | None) -> Session:
    session = getattr(_local, "session", None)
    if session is None:
        session = _local.session = Session(opts, brake)
    return session


def _acquire_one(candidate: dict[str, Any], opts: DownloadOptions, brake: Brake | None) -> DownloadResult:
    """One video by one worker; never raises (a bug or a full disk is this video's status, not the job's end)."""
    try:
        return download(candidate["url"], candidate.get("_work") or candidate["path"], opts, session=_worker_session(opts, brake), brake=brake,
                        first_attempt=candidate.get("_attempt", 1), hand_back_refusals=brake is not None,
                        licenses=candidate.get("licenses"))  # fmt: skip
    except Exception as exc:
        log.exception("%s: unexpected error", candidate.get("video_id"))
        return failure("unknown", f"unexpected {type(exc).__name__}: {exc}", 1)


def _acquire_in_process(candidate: dict[str, Any], opts: DownloadOptions, brake_args: dict[str, Any] | None):
    """The process-pool entry point: each worker process keeps its own brake handle and yt-dlp session."""
    brake = getattr(_local, "brake", None)
    if brake is None and brake_args is not None:
        brake = _local.brake = Brake(**brake_args)
    return _acquire_one(candidate, opts, brake)


def brake_for(opts: DownloadOptions, folder: str | Path, run_id: str) -> Brake:
    """The run's brake with the `download` section's pause, stop count and per-site pace."""
    return Brake(folder, run_id=run_id, pause_s=opts.pause_s, stop_after=opts.stop_after, sites=opts.sites)


def acquire_shard(
    candidates: pl.DataFrame,
    *,
    shard: int,
    shards: int,
    generation: int,
    opts: DownloadOptions,
    journal_dir: str | Path,
    brake: Brake | None,
    progress: bool = True,
    folder: str | Path | None = None,
) -> pl.DataFrame:
    """Download the shard's videos that no journal has settled yet; one VIDEO_STATUS row per video of the shard.

    Videos already settled (see `is_finished`) are taken from the journal without any request; the others are
    downloaded by `opts.workers` workers, each finished video journalled at once. A video refused by its site
    (rate limit, bot check) goes back to its site's queue, so its worker serves other sites during the pause.
    Each video downloads to its working copy (the candidate's `path`, where this job sees it: `job_file`); with
    `folder` (the job's declared output folder) the `ok` ones are then put there (`shard_folder`) and the rows name
    them there.
    """
    from squidflow.contracts.paths import job_file

    mine = shard_candidates(candidates, shard, shards).to_dicts()
    for c in mine:
        c["_work"] = job_file(c["path"])  # not a status column: status_row leaves it out
    records = read_journals(journal_dir, (c["video_id"] for c in mine))
    for c in mine:
        rec = records.get(c["video_id"])
        if rec is not None and rec.get("status") == "ok":
            rec["path_exists"] = os.path.exists(c["_work"])
    todo = [c for c in mine if not is_finished(records.get(c["video_id"]), generation)]
    log.info("shard %d of %d, generation %d: %d videos, %d settled by the journal, %d to download with %d %s "
             "worker(s)", shard, shards, generation, len(mine), len(mine) - len(todo), len(todo), opts.workers,
             opts.pool)  # fmt: skip
    if todo:
        journal = Journal(journal_dir, f"shard{shard}of{shards}")
        for vid, result in _run_pool(todo, opts, brake, progress=progress):
            rec = outcome_record(vid, generation, result)
            journal.append(rec)
            records[vid] = rec
    rows = [status_row(c, records[c["video_id"]]) for c in mine]
    if folder is not None:
        shard_folder(folder, mine, rows)
    return status_table(rows)


FOLDER_MARKER = ".squidflow-videos"  # the file every download shard folder holds, a shard without an ok video too


def shard_folder(folder: str | Path, candidates: list[dict[str, Any]], rows: list[dict[str, Any]]) -> Path:
    """Put every `ok` video of `rows` (the status rows of `candidates`, in their order) and its subtitles into
    `folder`, as the same files as their working copies (`link_or_copy`), and make the rows name them there (their
    path in the workflow: `recorded_path`). The folder holds its marker file, so it is never empty (an empty
    directory() output is missing on object storage)."""
    from squidflow.contracts.io import link_or_copy, marked_folder
    from squidflow.contracts.paths import recorded_path
    from squidflow.videos.download import SubtitleIndex

    subtitle_files = SubtitleIndex()  # the working copies' folder listed once, not once per video
    folder = marked_folder(
        folder,
        FOLDER_MARKER,
        "this download shard's videos (<video_id>.mp4) and their subtitles (<video_id>.<lang>.vtt)",
    )
    for c, row in zip(candidates, rows, strict=True):
        if row["status"] != "ok":
            continue
        work = Path(c.get("_work") or c["path"])
        dest = link_or_copy(work, folder / work.name)
        subs = [link_or_copy(sub, folder / Path(sub).name) for sub in subtitle_files(work)]
        row["path"] = recorded_path(dest)
        row["subtitles"] = [recorded_path(sub) for sub in subs]
    return folder


def _run_pool(todo: list[dict[str, Any]], opts: DownloadOptions, brake: Brake | None, *, progress: bool):
    """Yield (video_id, DownloadResult) as videos finish, dispatching site by site through the brake.

    Every free worker takes a video at once, except on a site that has not answered yet in this job (or refused the
    last time): it is asked one video at a time until an answer comes, so a site that refuses us sees one request,
    not one per worker, before the brake pauses it.
    """
    from tqdm import tqdm

    pool = _SitePool(todo, opts, brake)
    bar = tqdm(total=len(todo), desc="download videos", disable=not progress, mininterval=5)
    try:
        while pool.queues or pool.inflight:
            stopped, soonest = pool.fill()
            for item in stopped:
                bar.update()
                yield item
            if not pool.inflight:
                if pool.queues:
                    time.sleep(min(soonest or 0.5, 5.0))
                continue
            # wake when a video finishes, or when a waiting site's slot comes
            more = bool(pool.queues) and len(pool.inflight) < pool.workers
            done, _ = wait(list(pool.inflight), timeout=min(soonest or 0.5, 5.0) if more else None,
                           return_when=FIRST_COMPLETED)  # fmt: skip
            for item in pool.finished(done):
                bar.update()
                yield item
    finally:
        bar.close()
        pool.executor.shutdown(wait=True, cancel_futures=True)


class _SitePool:
    """The videos still to download, queued per site, and the workers' futures (see _run_pool)."""

    def __init__(self, todo: list[dict[str, Any]], opts: DownloadOptions, brake: Brake | None):
        self.answered: set[str] = set()  # sites whose last finished video got an answer other than a refusal
        self.asking: dict[str, int] = {}  # videos in flight per site
        self.queues: dict[str, deque] = {}
        for c in todo:
            self.queues.setdefault(site_of(c["url"] or ""), deque()).append(c)
        self.workers = max(1, int(opts.workers))
        self.brake = brake
        self.inflight: dict[Future, dict[str, Any]] = {}
        self.executor: Executor
        if opts.pool == "process":
            brake_args = None if brake is None else {
                "folder": brake.folder, "run_id": brake.run_id, "pause_s": brake.pause_s,
                "stop_after": brake.stop_after, "sites": brake.sites}  # fmt: skip
            self.executor = ProcessPoolExecutor(max_workers=self.workers)
            self._submit = lambda c: self.executor.submit(_acquire_in_process, c, opts, brake_args)
        else:
            self.executor = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="download")
            self._submit = lambda c: self.executor.submit(_acquire_one, c, opts, brake)

    def fill(self) -> tuple[list[tuple[str, Any]], float | None]:
        """Give every free worker a video, round-robin over the sites, one video each per pass (not one per
        wake-up): (the videos of sites the brake stopped, with their outcome; the soonest wait of a paused site)."""
        soonest, stopped = None, []
        started = True
        while started and self.queues and len(self.inflight) < self.workers:
            started = False
            for site in list(self.queues):
                if len(self.inflight) >= self.workers:
                    break
                if site not in self.answered and self.asking.get(site, 0) > 0:  # one at a time until it answers
                    continue
                gate = self.brake.try_start_video(site) if self.brake is not None else None
                if gate is not None and gate.stopped:  # a video refused before keeps that answer
                    stopped += [
                        (c["video_id"], c.get("_last") or failure("not_attempted", gate.stopped, 0))
                        for c in self.queues.pop(site)
                    ]
                    continue
                if gate is not None and not gate.go:
                    soonest = gate.wait_s if soonest is None else min(soonest, gate.wait_s)
                    continue
                c = self.queues[site].popleft()
                if not self.queues[site]:
                    del self.queues[site]
                self.inflight[self._submit(c)] = c
                self.asking[site] = self.asking.get(site, 0) + 1
                started = True
        return stopped, soonest

    def finished(self, done) -> list[tuple[str, Any]]:
        """The outcomes of the finished futures; a refused video goes back to the front of its site's queue."""
        out = []
        for fut in done:
            c = self.inflight.pop(fut)
            site = site_of(c["url"] or "")
            self.asking[site] -= 1
            try:
                result = fut.result()
            except Exception as exc:  # a worker process that died
                result = failure("unknown", f"worker failed: {type(exc).__name__}: {exc}", 1)
            if result.requeue or result.reason in BRAKE_REASONS:
                self.answered.discard(site)
            else:
                self.answered.add(site)
            if result.requeue:  # refused: back to the front of its site's queue, asked after the pause
                result.requeue = False
                c = {**c, "_attempt": result.attempts + 1, "_last": result}
                self.queues.setdefault(site_of(c["url"] or ""), deque()).appendleft(c)
                continue
            if result.reason == "not_attempted" and c.get("_last") is not None:
                result = c["_last"]
            out.append((c["video_id"], result))
        return out
