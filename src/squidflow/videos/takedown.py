"""Takedowns that propagate (issue 48): a video someone asked to remove leaves the dataset by the workflow's own reruns.

The top-level `takedown:` names a CSV (`video_id`, `requested`, `reason`) that checkpoint video_candidates reads as
an input: a listed video is left out of the candidates, so every job downstream of the listing (the manifest, frame
extraction, features, selection, annotation tasks, judgments, tables, the published configs) runs again without it,
and the published dataset's version is bumped (`published_version`). The video's downloaded file, its subtitles and
its journal lines are deleted (`delete_files`: the working copy and its hard links in every download shard folder,
results/videos/downloads/*/); `results/videos/takedown_log.csv` is the one file of the run that
names a removed video (what was removed, when asked, why, and when squidflow applied it). The card's "Changes"
section counts the removals by reason without naming them.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

import polars as pl

from squidflow.contracts.io import read_csv_strings
from squidflow.errors import InputError

TAKEDOWN_FIX = (
    "A takedown list is a CSV with the columns video_id,requested,reason: the video's id as videos.parquet "
    "names it, the date the removal was asked (YYYY-MM-DD), and why (e.g. privacy, copyright, consent "
    "withdrawn); config key `takedown`."
)
COLUMNS = ("video_id", "requested", "reason")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def read_takedowns(path: str | Path | None) -> pl.DataFrame:
    """The takedown list (one row per video, the first request kept), every problem an InputError naming the file
    and the line. None: no list, no row."""
    if not path:
        return pl.DataFrame(schema={c: pl.Utf8 for c in COLUMNS})
    path = Path(path)
    if not path.is_file():
        raise InputError(f"takedown: {path} not found. {TAKEDOWN_FIX}")
    df = read_csv_strings(path, what="takedown list", fix=TAKEDOWN_FIX, line_column="_line")
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise InputError(f"{path}: no column(s) {', '.join(missing)}. {TAKEDOWN_FIX}")
    rows = []
    for r in df.iter_rows(named=True):
        vid, when, why = ((r[c] or "").strip() for c in COLUMNS)
        where = f"{path} line {r['_line']}"
        if not vid:
            raise InputError(f"{where}: empty video_id. {TAKEDOWN_FIX}")
        if not DATE.fullmatch(when):
            raise InputError(f"{where}: requested {when!r} is not a date YYYY-MM-DD. {TAKEDOWN_FIX}")
        try:
            dt.date.fromisoformat(when)
        except ValueError:
            raise InputError(f"{where}: requested {when!r} is not a calendar date. {TAKEDOWN_FIX}") from None
        if not why:
            raise InputError(f"{where}: empty reason (say why, e.g. privacy). {TAKEDOWN_FIX}")
        rows.append({"video_id": vid, "requested": when, "reason": " ".join(why.lower().split())})
    out = pl.DataFrame(rows, schema={c: pl.Utf8 for c in COLUMNS})
    return out.unique("video_id", keep="first", maintain_order=True)


def remove(candidates: pl.DataFrame, takedowns: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(the candidates without the listed videos, the listed videos that were among them with their row)."""
    if takedowns.is_empty():
        return candidates, candidates.clear()
    listed = takedowns["video_id"].to_list()
    return candidates.filter(~pl.col("video_id").is_in(listed)), candidates.filter(pl.col("video_id").is_in(listed))


def video_files(row: dict) -> list[Path]:
    """The files acquisition made for a removed video: its download and the subtitles beside it (a file the user keeps
    on disk, a local or demo source's, is theirs: not deleted, only left out)."""
    if not row.get("download") or not row.get("path"):
        return []
    return files_of(Path(row["path"]).parent, Path(row["path"]).stem)


def files_of(folder: Path, video_stem: str) -> list[Path]:
    """The files of one video in a folder: `<stem>.mp4`, its subtitles and download leftovers."""
    if not folder.is_dir():
        return []
    stem = re.escape(video_stem)
    return sorted(
        p
        for p in folder.iterdir()
        if re.fullmatch(
            stem + r"(\.[A-Za-z0-9_-]+)*\.(mp4|part|vtt|srt|"
            r"webm|mkv|m4a|ytdl|json)",
            p.name,
        )
    )


def forget_journal(journal_dirs: Iterable[str | Path], video_ids: Iterable[str]) -> int:
    """Drop the removed videos' lines from the acquisition journals (results/videos/journal*/): rewritten in place,
    atomically. The number of lines dropped."""
    ids = set(video_ids)
    dropped = 0
    for folder in journal_dirs:
        folder = Path(folder)
        if not folder.is_dir() or not ids:
            continue
        for journal in sorted(folder.glob("*.jsonl")):
            keep = []
            for line in journal.read_text(encoding="utf-8").splitlines():
                try:
                    vid = json.loads(line).get("video_id")
                except ValueError:
                    vid = None
                if vid in ids:
                    dropped += 1
                else:
                    keep.append(line)
            tmp = journal.with_name(f".{journal.name}.takedown")
            tmp.write_text("".join(f"{line}\n" for line in keep), encoding="utf-8")
            os.replace(tmp, journal)
    return dropped


def delete_files(removed: pl.DataFrame, downloads_dir: str | Path | None = None) -> list[str]:
    """Delete every file acquisition made for the removed videos, the working copies and their links in the download
    shard folders (every generation's, `downloads_dir`/*/: results/videos/downloads/); the paths deleted."""
    gone = []
    folders = sorted(p for p in Path(downloads_dir).glob("*") if p.is_dir()) if downloads_dir else []
    for row in removed.iter_rows(named=True):
        files = video_files(row)
        if row.get("download") and row.get("path"):
            files += [f for d in folders for f in files_of(d, Path(row["path"]).stem)]
        for f in files:
            f.unlink(missing_ok=True)
            gone.append(str(f))
    return gone


def log_table(takedowns: pl.DataFrame, removed: pl.DataFrame, applied: str) -> pl.DataFrame:
    """results/videos/takedown_log.csv: every request, whether a listed video was found (and its event, which keeps
    its place in the split shuffle), and when it was applied."""
    events = (
        removed.select("video_id", "event")
        if "event" in removed.columns
        else pl.DataFrame(schema={"video_id": pl.Utf8, "event": pl.Utf8})
    )
    return (
        takedowns.join(events, on="video_id", how="left", maintain_order="left")
        .with_columns(
            pl.when(pl.col("video_id").is_in(events["video_id"].implode()))
            .then(pl.lit("removed"))
            .otherwise(pl.lit("not in the sources"))
            .alias("outcome"),
            pl.lit(applied).alias("applied"),
        )
        .select("video_id", "requested", "reason", "event", "outcome", "applied")
    )


def read_log(text: str) -> pl.DataFrame:
    """results/videos/takedown_log.csv's text back into its rows: every cell a string, the apostrophe `write_csv` put
    before an id starting with `-` (YouTube ids may) taken off again, so ids match the manifest's."""
    import io

    from squidflow.contracts.io import unneutralise

    df = pl.read_csv(io.StringIO(text), infer_schema=False)
    return df.with_columns(pl.col(c).map_elements(unneutralise, return_dtype=pl.Utf8) for c in df.columns)


def removals_by_reason(log: pl.DataFrame) -> dict[str, int]:
    """The removed videos per reason (no id): what the card's "Changes" section says."""
    done = log.filter(pl.col("outcome") == "removed") if "outcome" in log.columns else log
    counts = done.group_by("reason").len().sort(["len", "reason"], descending=[True, False])
    return {str(r): int(n) for r, n in counts.iter_rows()}


def published_version(version: str, removed: int, rounds: int = 0) -> str:
    """publish.version with its minor number raised by each next round of ratings the data holds and its patch
    number by the videos removed on request (1.0.0, two next rounds, one removal: 1.2.1); a version that is not
    MAJOR.MINOR.PATCH gets `+round.<n>` and `+takedown.<n>`."""
    if removed <= 0 and rounds <= 0:
        return version
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", version.strip())
    if not m:
        tags = [f"round.{rounds}"] * (rounds > 0) + [f"takedown.{removed}"] * (removed > 0)
        return f"{version}+{'.'.join(tags)}"
    return f"{m[1]}.{int(m[2]) + max(rounds, 0)}.{int(m[3]) + max(removed, 0)}"


def forget_status_rows(status_dir: str | Path, video_ids: Iterable[str]) -> int:
    """Drop the removed videos' rows from the acquisition status tables (results/videos/status/*.parquet, which the
    download shards keep from run to run); rewritten atomically. The number of rows dropped."""
    from squidflow.contracts import schemas
    from squidflow.contracts.io import read_parquet, write_parquet

    ids = list(video_ids)
    folder = Path(status_dir)
    if not ids or not folder.is_dir():
        return 0
    dropped = 0
    for table in sorted(folder.glob("*.parquet")):
        rows = read_parquet(table, schemas.VIDEO_STATUS)
        keep = rows.filter(~pl.col("video_id").is_in(ids))
        if keep.height != rows.height:
            dropped += rows.height - keep.height
            write_parquet(keep, table, schemas.VIDEO_STATUS)
    return dropped


def notes_without(notes: list[str], log: pl.DataFrame, candidates: pl.DataFrame | None = None) -> list[str]:
    """The listing's notes (candidates_notes.txt) less those about a removed video: a note that names its id or its
    file (the listing's note of a local file with an awkward name names both), replaced by one count."""
    removed = log.filter(pl.col("outcome") == "removed")["video_id"].to_list() if "outcome" in log.columns else []
    if not removed:
        return notes
    words = set(removed)
    if candidates is not None and "path" in candidates.columns:
        words |= {str(p) for p in candidates.filter(pl.col("video_id").is_in(removed))["path"].to_list() if p}
    words |= {Path(w).name for w in list(words) if "/" in w}
    kept = [n for n in notes if not any(w and w in n for w in words)]
    gone = len(notes) - len(kept)
    return kept + ([f"{gone} note(s) about videos taken down left out"] if gone else [])


def apply_takedowns(
    candidates: pl.DataFrame,
    path: str | Path | None,
    *,
    journal_dirs: Iterable[str | Path] = (),
    status_dir: str | Path | None = None,
    downloads_dir: str | Path | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The candidates without the takedown list's videos, and the takedown log. The removed videos' downloads, journal
    lines and status rows are deleted (and the videos' links in the shard folders under `downloads_dir`), so no file
    of the run but the log names them."""
    import logging

    log = logging.getLogger(__name__)
    takedowns = read_takedowns(path)
    kept, removed = remove(candidates, takedowns)
    ids = removed["video_id"].to_list()
    if ids:
        gone = delete_files(removed, downloads_dir)
        lines = forget_journal(journal_dirs, ids)
        rows = forget_status_rows(status_dir, ids) if status_dir else 0
        log.info(
            "takedown: %d videos left out (%s); %d files, %d journal lines and %d status rows deleted",
            len(ids),
            path,
            len(gone),
            lines,
            rows,
        )
    applied = dt.datetime.now(dt.timezone.utc).date().isoformat()
    return kept, log_table(takedowns, removed, applied)
