"""From candidates to the video manifest: one status row per video, then one table and a report people read.

Every candidate ends with a status — `ok`, `unavailable` (gone for good: 404, removed, private, a UCF file not in
the folder), `failed` (transient errors outlasted the retries) or `corrupt` (the file does not decode) — with the
error and the number of attempts. Later stages take only `ok` rows (`ok_videos`).
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import polars as pl

from squidflow import schemas
from squidflow.io import conform
from squidflow.videos.download import DownloadOptions, DownloadResult, download
from squidflow.videos.probe import ProbeError, probe

log = logging.getLogger(__name__)

STATUS_RECORD = re.compile(r"(.+)\.g(\d+)\.parquet")
TEXT_FROM_DOWNLOAD = ("title", "description", "tags", "language", "uploader", "upload_date", "license", "webpage_url")


def _status_row(candidate: dict[str, Any], result: DownloadResult) -> dict[str, Any]:
    row = {c: None for c in schemas.VIDEO_STATUS.columns}
    row.update({k: v for k, v in candidate.items() if k in schemas.VIDEO_STATUS.columns})
    for key in TEXT_FROM_DOWNLOAD:
        value = result.metadata.get(key)
        if value not in (None, "", []):
            row[key] = value
    if result.info is not None:
        row.update(result.info.as_row())
    elif result.status != "ok":
        row["duration_s"] = candidate.get("duration_s")  # the search's duration, if any, stays as information
    row.update(status=result.status, error=result.error, attempts=result.attempts)
    return row


def acquire(candidate: dict[str, Any], opts: DownloadOptions, *, retry_generation: int = 0) -> pl.DataFrame:
    """Download (or just probe) one candidate; a one-row VIDEO_STATUS frame. Never raises for a bad video."""
    try:
        if candidate.get("download"):
            result = download(candidate["url"], candidate["path"], opts)
        else:
            result = probe_existing(candidate["path"], candidate.get("source") or "", opts.decode_frames)
    except Exception as exc:  # a bug or a full disk must not fail the workflow either: it is this video's status
        log.exception("%s: unexpected error", candidate.get("video_id"))
        result = DownloadResult("failed", error=f"unexpected {type(exc).__name__}: {exc}", attempts=1)
    row = _status_row(candidate, result)
    row["retry_generation"] = retry_generation
    log.info("%s: %s%s (attempts %d)", candidate["video_id"], result.status,
             f" — {result.error}" if result.error else "", result.attempts)  # fmt: skip
    return conform(pl.DataFrame([row], schema=schemas.VIDEO_STATUS.columns), schemas.VIDEO_STATUS)


def probe_existing(path: str | Path, source: str = "", decode_frames: int = 5) -> DownloadResult:
    """A video that should already be on disk: missing → `unavailable` (with what to do), undecodable → `corrupt`."""
    path = Path(path)
    if not path.exists():
        hint = (
            "UCF-Crime videos are not on YouTube: download UCF-Crime and set squid_e_release.ucf_dir to the folder "
            "holding <id>.mp4"
            if source == "squid-e-release"
            else "the file was listed but is gone; rerun to list the sources again"
        )
        return DownloadResult("unavailable", error=f"{path}: not found; {hint}", attempts=0)
    try:
        return DownloadResult("ok", attempts=0, path=path, info=probe(path, decode_frames=decode_frames))
    except ProbeError as exc:
        return DownloadResult("corrupt", error=str(exc), attempts=0)


def probe_local_candidates(candidates: pl.DataFrame, opts: DownloadOptions, *, workers: int = 2) -> pl.DataFrame:
    """Status rows for the candidates that need no download (demo, local, UCF), probed in parallel."""
    todo = candidates.filter(~pl.col("download")).to_dicts()
    if not todo:
        return schemas.empty(schemas.VIDEO_STATUS)
    from tqdm import tqdm

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:  # ffprobe/ffmpeg are subprocesses: threads suffice
        frames = list(tqdm(pool.map(lambda c: acquire(c, opts), todo), total=len(todo), desc="probe videos"))
    return pl.concat(frames, how="vertical")


def build_manifest(candidates: pl.DataFrame, statuses: Iterable[pl.DataFrame]) -> pl.DataFrame:
    """Gather status rows into the manifest, one row per candidate, in candidate order (VIDEOS schema)."""
    parts = [s for s in statuses if len(s)]
    status = pl.concat(parts, how="vertical") if parts else schemas.empty(schemas.VIDEO_STATUS)
    order = candidates.select("video_id").with_row_index("_order")
    missing = order.join(status.select("video_id"), on="video_id", how="anti")
    if len(missing):
        pending = candidates.join(missing.select("video_id"), on="video_id").with_columns(
            pl.lit("failed").alias("status"),
            pl.lit("no status record was written for this video").alias("error"),
            pl.lit(0).alias("retry_generation"),
        )
        status = pl.concat([status, conform(pending, schemas.VIDEO_STATUS)], how="vertical")
    out = order.join(status, on="video_id", how="left").sort("_order").drop("_order")
    return conform(out.unique("video_id", keep="first", maintain_order=True), schemas.VIDEOS)


def ok_videos(manifest: pl.DataFrame) -> pl.DataFrame:
    """The rows later stages use."""
    return manifest.filter(pl.col("status") == "ok")


ERROR_KINDS = [
    (r"HTTP Error (\d+)", "HTTP {0}"),
    (r"UCF-Crime", "UCF-Crime file not in ucf_dir"),
    (r"[Ff]ailed to resolve|Name or service not known|Temporary failure in name resolution", "no network (DNS)"),
    (r"timed out", "timeout"),
    (r"more expected|content too short", "truncated download"),
    (r"cannot decode|ffprobe|does not decode|no video stream", "file does not decode"),
    (r"[Pp]rivate video", "private video"),
    (r"removed|[Vv]ideo unavailable|terminated", "removed or unavailable"),
    (r"[Ss]ign in to confirm", "needs sign-in (cookies)"),
    (r"[Uu]nsupported URL", "unsupported URL"),
]


def error_kind(error: str | None) -> str:
    """A short reason for the report's summary (the full error stays in the manifest)."""
    for pattern, label in ERROR_KINDS:
        m = re.search(pattern, error or "")
        if m:
            return label.format(*m.groups())
    return (error or "no error recorded")[:60]


def download_report(manifest: pl.DataFrame, source_notes: list[str]) -> str:
    """Markdown: videos per event and status, the errors that were not `ok`, and what the sources' listing noticed."""
    statuses = ["ok", "unavailable", "failed", "corrupt"]
    lines = ["# Video acquisition report", ""]
    counts = manifest.group_by("status").len()
    total = {r["status"]: r["len"] for r in counts.iter_rows(named=True)}
    lines.append(f"{len(manifest)} videos: " + ", ".join(f"{total.get(s, 0)} {s}" for s in statuses) + ".")
    lines += ["", "## Videos per event and status", "", "| event | " + " | ".join(statuses) + " | total |",
              "|---|" + "---:|" * (len(statuses) + 1)]  # fmt: skip
    per = manifest.group_by("event", "status").len()
    table: dict[str, dict[str, int]] = {}
    for r in per.iter_rows(named=True):
        table.setdefault(r["event"] or "", {})[r["status"]] = r["len"]
    for event in sorted(table):
        c = table[event]
        lines.append(f"| {event} | " + " | ".join(str(c.get(s, 0)) for s in statuses) + f" | {sum(c.values())} |")
    lines.append("| **all** | " + " | ".join(str(total.get(s, 0)) for s in statuses) + f" | {len(manifest)} |")
    if "source" in manifest.columns:
        lines += [
            "",
            "## Per source",
            "",
            "| source | " + " | ".join(statuses) + " |",
            "|---|" + "---:|" * len(statuses),
        ]
        for src, grp in manifest.group_by("source", maintain_order=True):
            c = dict(grp.group_by("status").len().iter_rows())
            lines.append(f"| {src[0]} | " + " | ".join(str(c.get(s, 0)) for s in statuses) + " |")
    bad = manifest.filter(pl.col("status") != "ok")
    if len(bad):
        kinds = bad.with_columns(pl.col("error").map_elements(error_kind, return_dtype=pl.Utf8).alias("reason"))
        lines += ["", "## Not ok, by reason", "", "| status | reason | videos |", "|---|---|---:|"]
        for r in kinds.group_by("status", "reason").len().sort("len", descending=True).iter_rows(named=True):
            lines.append(f"| {r['status']} | {r['reason']} | {r['len']} |")
        lines += ["", "## Not ok", "", "| video_id | event | status | attempts | error |", "|---|---|---|---:|---|"]
        for r in bad.head(500).iter_rows(named=True):
            err = (r["error"] or "").replace("|", "\\|").replace("\n", " ")[:200]
            lines.append(f"| {r['video_id']} | {r['event']} | {r['status']} | {r['attempts'] or 0} | {err} |")
        if len(bad) > 500:
            lines.append(f"| … {len(bad) - 500} more (see videos.parquet) | | | | |")
        lines += ["", "Rerun with `--config retry_failed=true` to try the videos that are not `ok` again."]
    noted = manifest.filter(pl.col("notes").list.len() > 0)
    if source_notes or len(noted):
        lines += ["", "## Source notes", ""] + [f"- {n}" for n in source_notes]
        lines += [f"- {r['video_id']}: {'; '.join(r['notes'])}" for r in noted.iter_rows(named=True)]
    return "\n".join(lines) + "\n"


# --- which status record each video's manifest row comes from (videos.smk) ---------------------------------------
RUN_STARTED_ENV = "SQUIDFLOW_RUN_STARTED"


def run_started() -> float:
    """When this Snakemake invocation started: set by the main process, inherited by the job processes it spawns."""
    return float(os.environ.setdefault(RUN_STARTED_ENV, str(time.time())))


def latest_status_generations(status_dir: str | Path) -> dict[str, int]:
    """{video_id: newest generation} of the records `<status_dir>/<video_id>.g<N>.parquet` (one listing)."""
    latest: dict[str, int] = {}
    if os.path.isdir(status_dir):
        for name in os.listdir(status_dir):
            m = STATUS_RECORD.fullmatch(name)
            if m:
                latest[m[1]] = max(latest.get(m[1], -1), int(m[2]))
    return latest


def needs_retry(record: str | Path, started: float) -> bool:
    """A record that is not `ok` and was written before `started` (so one invocation retries a video once)."""
    try:
        if os.path.getmtime(record) >= started:
            return False
        return pl.read_parquet(record, columns=["status"])["status"][0] != "ok"
    except Exception:  # an unreadable record is redone like a failed one
        return True


def status_record_paths(video_ids: Iterable[str], status_dir: str, *, retry_failed: bool, started: float) -> list[str]:
    """The status record the manifest takes for each video: the newest generation on disk (0 when none), or the
    next one for a record that is not `ok` when `retry_failed` asks — the path a new acquire_video job writes.
    """
    latest = latest_status_generations(status_dir)
    paths = []
    for vid in video_ids:
        gen = latest.get(vid, 0)
        if retry_failed and vid in latest and needs_retry(f"{status_dir}/{vid}.g{gen}.parquet", started):
            gen += 1
        paths.append(f"{status_dir}/{vid}.g{gen}.parquet")
    return paths
