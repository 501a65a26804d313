"""From candidates to the video manifest: one status row per video, then one table and a report people read.

Every candidate ends with a status — `ok`, `unavailable` (gone for good or not for this session: 404, removed,
private, geo or age blocks, a UCF file not in the folder), `failed` (refused by the site, transient errors that
outlasted the retries, a local setup problem) or `corrupt` (the file does not decode) — with its `reason` from the
closed set of squidflow.videos.failures, the raw error and the number of attempts. Later stages take only `ok` rows.
"""

from __future__ import annotations

import logging
import math
import os
import re
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import polars as pl

from squidflow.contracts import schemas
from squidflow.contracts.image_ids import shard_of
from squidflow.contracts.io import conform
from squidflow.contracts.paths import DROPPED_REPORT, VIDEOS_CHECKED
from squidflow.presentation.table_format import RIGHT, md_row, md_rule
from squidflow.videos.download import DownloadOptions, DownloadResult, SubtitleIndex, failure, subtitle_files
from squidflow.videos.download_shards import outcome_record, status_row
from squidflow.videos.failures import REASONS, remedy
from squidflow.videos.probe import ProbeError, probe
from squidflow.videos.sources import SKIPPED, pending

log = logging.getLogger(__name__)

SHARD_TABLE = re.compile(r"shard(\d+)of(\d+)\.g(\d+)\.parquet")


def probe_existing(
    path: str | Path,
    source: str = "",
    decode_frames: int = 5,
    subtitles: Callable[[str | Path], list[str]] = subtitle_files,
) -> DownloadResult:
    """A video that should already be on disk: missing → `unavailable` (with what to do), empty → `empty_file`,
    without a video stream → `no_video_stream`, undecodable → `corrupt`. `subtitles` finds the files beside it (a
    job checking many videos passes one `SubtitleIndex`, which lists each folder once)."""
    from squidflow.contracts.paths import job_file, recorded_path

    path = Path(job_file(path))  # on object storage, the job's local copy of a file the workflow made (demo videos)
    if not path.exists():
        hint = (
            "UCF-Crime videos are not on YouTube: download UCF-Crime and set squid_e_release.ucf_dir to the folder "
            "holding <id>.mp4"
            if source == "squid-e-release"
            else "the file was listed but is gone; rerun to list the sources again"
        )
        return failure("missing_file", f"{path}: not found; {hint}", 0)
    try:
        info = probe(path, decode_frames=decode_frames)
        found = [recorded_path(sub) for sub in subtitles(path)]
        return DownloadResult("ok", attempts=0, path=path, info=info, subtitles=found)
    except ProbeError as exc:
        return failure(unusable_reason(path), str(exc), 0)


def unusable_reason(path: str | Path) -> str:
    """Why a file on disk that failed the probe is no video: `empty_file` (0 bytes), `no_video_stream` (a container
    ffprobe reads, with no video stream: audio only, subtitles, an image sequence it does not take), else `corrupt`.
    Asked only after a failed probe, so it costs nothing for the files that are fine."""
    import subprocess

    try:
        if os.path.getsize(path) == 0:
            return "empty_file"
        res = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_type", "-of", "json", str(path)],
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return "corrupt"
    if res.returncode == 0:
        import json

        try:
            types = {st.get("codec_type") for st in json.loads(res.stdout or "{}").get("streams") or []}
        except ValueError:
            return "corrupt"
        if "video" not in types:
            return "no_video_stream"
    return "corrupt"


# --- files already on disk (demo, local, UCF-Crime): checked by rule check_local_videos ----------------------------
LOCAL_TABLE = re.compile(r"local\.g(\d+)\.parquet")


def check_local(
    candidates: pl.DataFrame, opts: DownloadOptions, *, journal_dir: str | Path, generation: int = 0, workers: int = 2
) -> pl.DataFrame:
    """Status rows for the candidates that need no download (demo, local, UCF), each file known by its content.

    A file is probed unless the journal (`<journal_dir>/local.jsonl`, one line per probe, O_APPEND) holds a probe of
    the same path with the same size and modification time that settles it: an `ok` one always, another outcome
    when made in this generation or a later one (`retry_failed` asks for the next generation, which probes the
    failures again). So a replaced file is probed again and its facts come from the new file, an unchanged one is
    not, and a job killed mid-way loses no finished probe (its rerun gives what a clean run gives).
    """
    from squidflow.contracts.paths import job_file
    from squidflow.videos.download_shards import Journal, read_journals
    from squidflow.videos.sources import file_fingerprint

    todo = candidates.filter(~pl.col("download") & pending(candidates)).to_dicts()
    if not todo:
        return schemas.empty(schemas.VIDEO_STATUS)
    journal = Journal(journal_dir, "local")
    known = read_journals(journal_dir, [c["video_id"] for c in todo])
    subtitles = SubtitleIndex()  # each source folder listed once, not once per video in it

    def check(candidate: dict[str, Any]) -> dict[str, Any]:
        fingerprint = file_fingerprint(
            job_file(candidate["path"])
        )  # before the probe: a file changed meanwhile is redone
        rec = known.get(candidate["video_id"])
        if (rec and fingerprint and rec.get("fingerprint") == fingerprint and rec.get("path") == candidate["path"]
                and (rec.get("status") == "ok" or int(rec.get("generation") or 0) >= generation)):  # fmt: skip
            return status_row(candidate, rec)
        try:
            result = probe_existing(candidate["path"], candidate.get("source") or "", opts.decode_frames, subtitles)
        except Exception as exc:  # a bug or a full disk is this video's status, not the end of the workflow
            log.exception("%s: unexpected error", candidate["video_id"])
            result = failure("unknown", f"unexpected {type(exc).__name__}: {exc}", 0)
        rec = {**outcome_record(candidate["video_id"], generation, result), "path": candidate["path"],
               "fingerprint": fingerprint}  # fmt: skip
        journal.append(rec)
        log.info("%s: %s%s", candidate["video_id"], result.status, f" — {result.reason}: {result.error}"
                 if result.error else "")  # fmt: skip
        return status_row(candidate, rec)

    from tqdm import tqdm

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:  # ffprobe/ffmpeg are subprocesses: threads suffice
        rows = list(tqdm(pool.map(check, todo), total=len(todo), desc="check local videos"))
    return conform(pl.DataFrame(rows, schema=schemas.VIDEO_STATUS.columns), schemas.VIDEO_STATUS)


def local_status_path(status_dir: str | Path, *, retry_failed: bool, started: float) -> str:
    """The local check's table the manifest takes: the newest generation on disk (0 when none), or the next one when
    `retry_failed` asks and that table has videos that are not `ok` (once per invocation, as for download shards)."""
    gens = [int(m[1]) for name in (os.listdir(status_dir) if os.path.isdir(status_dir) else [])
            if (m := LOCAL_TABLE.fullmatch(name))]  # fmt: skip
    gen = max(gens, default=0)
    if retry_failed and gens and needs_retry(f"{status_dir}/local.g{gen}.parquet", started):
        gen += 1
    return f"{status_dir}/local.g{gen}.parquet"


def build_manifest(candidates: pl.DataFrame, statuses: Iterable[pl.DataFrame]) -> pl.DataFrame:
    """Gather status rows into the manifest, one row per candidate, in candidate order (VIDEOS schema)."""
    settled = candidates.filter(~pending(candidates))  # left out at listing (a licence): their row is as listed
    parts = [s for s in statuses if len(s)]
    if len(settled):
        parts.append(
            conform(
                settled.with_columns(pl.lit(0).alias("retry_generation"), pl.lit(0).alias("attempts")),
                schemas.VIDEO_STATUS,
            )
        )
    status = pl.concat(parts, how="vertical") if parts else schemas.empty(schemas.VIDEO_STATUS)
    order = candidates.select("video_id").with_row_index("_order")
    missing = order.join(status.select("video_id"), on="video_id", how="anti", maintain_order="left")
    if len(missing):
        unsettled = candidates.join(missing.select("video_id"), on="video_id", maintain_order="left").with_columns(
            pl.lit("failed").alias("status"),
            pl.lit("unknown").alias("reason"),
            pl.lit("no status record was written for this video").alias("error"),
            pl.lit(0).alias("retry_generation"),
        )
        status = pl.concat([status, conform(unsettled, schemas.VIDEO_STATUS)], how="vertical")
    out = order.join(status, on="video_id", how="left", maintain_order="left").sort("_order").drop("_order")
    return conform(out.unique("video_id", keep="first", maintain_order=True), schemas.VIDEOS)


def _md(text: Any, limit: int | None = None) -> str:
    """Data (ids, titles, errors, notes) as inert Markdown (squidflow.contracts.io.md_escape), cut to `limit` characters first."""
    from squidflow.contracts.io import md_escape

    return md_escape(str(text or "")[:limit])


def on_disk_column(manifest: pl.DataFrame) -> pl.Expr:
    """`_on_disk`: the video is a file the user keeps (local, demo, UCF-Crime: no URL), not a download."""
    urls = [c for c in ("url", "webpage_url") if c in manifest.columns]
    if urls:
        return pl.all_horizontal([pl.col(c).is_null() for c in urls]).alias("_on_disk")
    if "source" in manifest.columns:
        return pl.col("source").is_in(["local", "demo"]).fill_null(False).alias("_on_disk")
    return pl.lit(False).alias("_on_disk")


REPORT_STATUSES = ["ok", "unavailable", "failed", "corrupt"]  # the download report's columns
MAX_LISTED = 500  # failed videos and skipped files listed by name in the download report


def _status_tables(manifest: pl.DataFrame, brake_notes: list[str]) -> list[str]:
    """The report's head: totals per status, what the brake stopped, videos per event × status and per source."""
    statuses = REPORT_STATUSES
    counts = manifest.group_by("status", maintain_order=True).len()
    total = {r["status"]: r["len"] for r in counts.iter_rows(named=True)}
    lines = [f"{len(manifest)} videos: " + ", ".join(f"{total.get(s, 0)} {s}" for s in statuses) + "."]
    if brake_notes:
        lines += ["", "## Stopped by the brake", ""] + [f"- {_md(n)}" for n in brake_notes]
    lines += [
        "",
        "## Videos per event and status",
        "",
        md_row(["event", *statuses, "total"]),
        md_rule(["---", *[RIGHT] * (len(statuses) + 1)]),
    ]
    per = manifest.group_by("event", "status", maintain_order=True).len()
    table: dict[str, dict[str, int]] = {}
    for r in per.iter_rows(named=True):
        table.setdefault(r["event"] or "", {})[r["status"]] = r["len"]
    for event in sorted(table):
        c = table[event]
        lines.append(md_row([_md(event), *(c.get(s, 0) for s in statuses), sum(c.values())]))
    lines.append(md_row(["**all**", *(total.get(s, 0) for s in statuses), len(manifest)]))
    if "source" in manifest.columns:
        lines += ["", "## Per source", "", md_row(["source", *statuses]), md_rule(["---", *[RIGHT] * len(statuses)])]
        for src, grp in manifest.group_by("source", maintain_order=True):
            c = dict(grp.group_by("status", maintain_order=True).len().iter_rows())
            lines.append(md_row([_md(src[0]), *(c.get(s, 0) for s in statuses)]))
    return lines


def _reason_table(manifest: pl.DataFrame, bad: pl.DataFrame) -> list[str]:
    """Videos per event × reason (ok a column of its own), the reasons in REASONS' order, unknown ones after."""
    present = [r for r in REASONS if r in set(bad["reason"].to_list())]
    present += sorted(set(bad["reason"].to_list()) - set(present))
    by = manifest.with_columns(
        pl.when(pl.col("status") == "ok").then(pl.lit("ok")).otherwise(pl.col("reason").fill_null("unknown"))
        .alias("_reason")
    ).group_by("event", "_reason", maintain_order=True).len()  # fmt: skip
    cells: dict[str, dict[str, int]] = {}
    for r in by.iter_rows(named=True):
        cells.setdefault(r["event"] or "", {})[r["_reason"]] = r["len"]
    cols = ["ok", *present]
    lines = ["", "## Videos per event and reason", "", md_row(["event", *cols]), md_rule(["---", *[RIGHT] * len(cols)])]
    for event in sorted(cells):
        lines.append(md_row([_md(event), *(cells[event].get(c, 0) for c in cols)]))
    return lines


def _remedy_table(bad: pl.DataFrame) -> list[str]:
    """The videos not ok per reason and status, most first, each with what to do (squidflow.videos.failures)."""
    lines = [
        "",
        "## Not ok, by reason",
        "",
        md_row(["reason", "status", "videos", "what to do"]),
        md_rule(["---", "---", RIGHT, "---"]),
    ]
    for r in (
        bad.group_by("reason", "status", "_on_disk", maintain_order=True)
        .len()
        .sort("len", descending=True)
        .iter_rows(named=True)
    ):
        kind = " (files on disk)" if r["_on_disk"] else ""
        lines.append(
            md_row([f"`{r['reason']}`{kind}", r["status"], r["len"], remedy(r["reason"], on_disk=r["_on_disk"])])
        )
    return lines


def _not_ok_list(bad: pl.DataFrame) -> list[str]:
    """The first MAX_LISTED videos not ok, one a row with their error, then how to try them again."""
    lines = [
        "",
        "## Not ok",
        "",
        md_row(["video_id", "event", "status", "reason", "attempts", "error"]),
        md_rule(["---", "---", "---", "---", RIGHT, "---"]),
    ]
    for r in bad.head(MAX_LISTED).iter_rows(named=True):
        lines.append(
            md_row(
                [
                    _md(r["video_id"]),
                    _md(r["event"]),
                    r["status"],
                    _md(r["reason"]),
                    r["attempts"] or 0,
                    _md(r["error"], 200),
                ]
            )
        )
    if len(bad) > MAX_LISTED:
        lines.append(f"| … {len(bad) - MAX_LISTED} more (see videos.parquet) | | | | | |")
    if not bad["_on_disk"].all():
        lines += ["", "Rerun with `--config retry_failed=true` to download the videos that are not `ok` again."]
    if bad["_on_disk"].any():
        lines += ["", "A file on disk (local folder, UCF-Crime) that is replaced is checked again by the next run, "
                  "without a flag; `--config retry_failed=true` checks the unchanged ones again."]  # fmt: skip
    return lines


def _skipped_files(skipped: list[str]) -> list[str]:
    """The source folders' files that were not taken: a count per why, then the first MAX_LISTED by name."""
    if not skipped:
        return []
    lines = ["", "## Skipped files", "", f"{len(skipped)} files in the source folders were not taken:", ""]
    whys: dict[str, int] = {}
    for n in skipped:
        why = n.rsplit(": ", 1)[-1]
        whys[why] = whys.get(why, 0) + 1
    lines += [f"- {count} {_md(why)}" for why, count in whys.items()] + [""]
    lines += [f"- {_md(n.split(f'{SKIPPED} ', 1)[-1])}" for n in skipped[:MAX_LISTED]]
    if len(skipped) > MAX_LISTED:
        lines.append(f"- … {len(skipped) - MAX_LISTED} more (results/videos/candidates_notes.txt)")
    return lines


def download_report(manifest: pl.DataFrame, source_notes: list[str], brake_notes: Iterable[str] = ()) -> str:
    """Markdown: what the brake stopped, videos per event × status and × reason, the failures, the sources' notes."""
    lines = ["# Video acquisition report", "", *_status_tables(manifest, list(brake_notes))]
    bad = manifest.filter(pl.col("status") != "ok").with_columns(pl.col("reason").fill_null("unknown"))
    if len(bad):
        bad = bad.with_columns(on_disk_column(bad))
        lines += _reason_table(manifest, bad) + _remedy_table(bad) + _not_ok_list(bad)
    skipped = [n for n in source_notes if f"] {SKIPPED} " in n or n.startswith(f"{SKIPPED} ")]
    source_notes = [n for n in source_notes if n not in set(skipped)]
    lines += _skipped_files(skipped)
    noted = manifest.filter(pl.col("notes").list.len() > 0)
    if source_notes or len(noted):
        lines += ["", "## Source notes", ""] + [f"- {_md(n)}" for n in source_notes]
        lines += [f"- {_md(r['video_id'])}: {_md('; '.join(r['notes']))}" for r in noted.iter_rows(named=True)]
    return "\n".join(lines) + "\n"


# --- which status record each video's manifest row comes from (videos.smk) ---------------------------------------
RUN_STARTED_ENV = "SQUIDFLOW_RUN_STARTED"


def run_started() -> float:
    """When this Snakemake invocation started: set by the main process, inherited by the job processes it spawns."""
    return float(os.environ.setdefault(RUN_STARTED_ENV, str(time.time())))


def latest_shard_generations(status_dir: str | Path, shards: int) -> dict[int, int]:
    """{shard: newest generation} of the shard tables `<status_dir>/shard<k>of<shards>.g<N>.parquet` (one listing)."""
    latest: dict[int, int] = {}
    if os.path.isdir(status_dir):
        for name in os.listdir(status_dir):
            m = SHARD_TABLE.fullmatch(name)
            if m and int(m[2]) == shards:
                latest[int(m[1])] = max(latest.get(int(m[1]), -1), int(m[3]))
    return latest


def needs_retry(table: str | Path, started: float) -> bool:
    """A shard table with a video that is not `ok`, written before `started` (so one invocation retries once)."""
    try:
        if os.path.getmtime(table) >= started:
            return False
        return bool((pl.read_parquet(table, columns=["status"])["status"] != "ok").any())
    except Exception:  # an unreadable table is redone like a failed one
        return True


def shards_holding(shard: int, shards: int, other_shards: int) -> list[int]:
    """The shards of `other_shards` that can hold a video of shard `shard` of `shards`, both by the crc32 of the id
    (squidflow.contracts.image_ids.shard_of): a video's hash h is `shard` modulo `shards` and its
    other shard modulo `other_shards`, so both agree modulo g = gcd of the counts. Equal counts: the one shard of
    the same number; `other_shards` a multiple of `shards`: `other_shards / shards` of them, holding only this
    shard's videos; counts without a common divisor: all of them. A frame-extraction job declares only these
    download folders (on object storage each declared folder is fetched whole)."""
    g = math.gcd(max(1, shards), max(1, other_shards))
    return [other for other in range(max(1, other_shards)) if other % g == shard % g]


def shard_status_paths(status_dir: str, shards: int, *, retry_failed: bool, started: float) -> list[str]:
    """The status table the manifest takes for each download shard: the newest generation on disk (0 when none),
    or the next one for a table with videos that are not `ok` when `retry_failed` asks — the path a new
    acquire_videos job writes, which downloads only those videos again (the journal settles the rest).
    """
    latest = latest_shard_generations(status_dir, shards)
    paths = []
    for shard in range(shards):
        gen = latest.get(shard, 0)
        if (
            retry_failed
            and shard in latest
            and needs_retry(f"{status_dir}/shard{shard}of{shards}.g{gen}.parquet", started)
        ):
            gen += 1
        paths.append(f"{status_dir}/shard{shard}of{shards}.g{gen}.parquet")
    return paths


# --- at the end of a run: every video that was dropped, at which stage, why, and where to look ---------------------


def stage_of(reason: str | None) -> str:
    """The stage that dropped a video with this reason: `frames` (rule extract_frames) or `acquisition`."""
    return "frames" if reason in ("frames_undecodable", "too_large") else "acquisition"


def _where_to_look(row: dict[str, Any], frame_shards: int) -> str:
    if stage_of(row["reason"]) == "frames":  # the frames stage shards by the same shard_of
        return f"logs/extract_frames/shard{shard_of(row['video_id'], frame_shards)}.log"
    if row["_on_disk"]:
        return "logs/check_local_videos/"
    return "logs/acquire_videos/"


def dropped_table(manifest: pl.DataFrame, frame_shards: int = 2) -> pl.DataFrame:
    """The videos that are not `ok`, with `stage`, `reason` (never null), `_on_disk` and `look` (a log to read)."""
    bad = manifest.filter(pl.col("status") != "ok").with_columns(pl.col("reason").fill_null("unknown"))
    bad = bad.with_columns(on_disk_column(bad), pl.col("reason").map_elements(stage_of, pl.Utf8).alias("stage"))
    looks = [
        _where_to_look(r, frame_shards) for r in bad.select("video_id", "reason", "_on_disk").iter_rows(named=True)
    ]
    return bad.with_columns(pl.Series("look", looks, dtype=pl.Utf8))


def dropped_report(
    manifest: pl.DataFrame, source_notes: list[str], *, frame_shards: int = 2, manifest_path: str = VIDEOS_CHECKED
) -> str:
    """Markdown: every video dropped in this run's results, at which stage, why, what to do and where to look;
    and the files the sources skipped. Written after the last stage that drops videos (frames, when it runs)."""
    bad = dropped_table(manifest, frame_shards)
    skipped = [n.split(f"{SKIPPED} ", 1)[-1] for n in source_notes if f"{SKIPPED} " in n]
    lines = ["# Dropped videos", "", f"{len(bad)} of {len(manifest)} videos dropped; {len(skipped)} files skipped. "
             f"Per video: `{manifest_path}` (`status`, `reason`, `error`).", ""]  # fmt: skip
    if len(bad):
        lines += [
            "## By stage and reason",
            "",
            md_row(["stage", "reason", "status", "videos", "what to do"]),
            md_rule(["---", "---", "---", RIGHT, "---"]),
        ]
        for r in (
            bad.group_by("stage", "reason", "status", "_on_disk", maintain_order=True)
            .len()
            .sort("stage", "len")
            .iter_rows(named=True)
        ):
            on_disk = " (files on disk)" if r["_on_disk"] else ""
            lines.append(
                md_row(
                    [
                        r["stage"],
                        f"`{r['reason']}`{on_disk}",
                        r["status"],
                        r["len"],
                        remedy(r["reason"], on_disk=r["_on_disk"]),
                    ]
                )
            )
        lines += [
            "",
            "## Every dropped video",
            "",
            md_row(["video_id", "event", "stage", "reason", "file or URL", "where to look", "error"]),
            md_rule(7),
        ]
        for r in bad.head(1000).iter_rows(named=True):
            lines.append(
                md_row(
                    [
                        _md(r["video_id"]),
                        _md(r["event"]),
                        r["stage"],
                        _md(r["reason"]),
                        _md(r["url"] or r["path"]),
                        r["look"],
                        _md(r["error"], 200),
                    ]
                )
            )
        if len(bad) > 1000:
            lines.append(f"| … {len(bad) - 1000} more (see {manifest_path}) | | | | | | |")
    if skipped:
        lines += ["", "## Skipped files", ""] + [f"- {_md(n)}" for n in skipped[:1000]]
    return "\n".join(lines) + "\n"


def dropped_line(manifest: pl.DataFrame, source_notes: list[str], report: str = DROPPED_REPORT) -> str:
    """One console line: how many videos were dropped, per stage and reason, files skipped, and where to look."""
    bad = dropped_table(manifest)
    skipped = sum(f"{SKIPPED} " in n for n in source_notes)
    if bad.is_empty() and not skipped:
        return f"squidflow videos: all {len(manifest)} videos ok, no file skipped"
    parts = []
    for stage, grp in bad.group_by("stage", maintain_order=True):
        counts = ", ".join(
            f"{r} {n}"
            for r, n in grp.group_by("reason", maintain_order=True).len().sort("len", descending=True).iter_rows()
        )
        parts.append(f"{stage[0]}: {counts}")
    return (
        f"squidflow videos: {len(bad)} of {len(manifest)} dropped"
        + (f" ({'; '.join(parts)})" if parts else "")
        + f", {skipped} files skipped; which, why and what to do: {report}"
    )
