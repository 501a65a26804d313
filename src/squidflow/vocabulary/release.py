"""The SQUID-E release (github.com/katesanders9/squid-e): its dataset.csv and huj_annotations.csv.

The two files name events differently (`birthday` vs `birthday party`, `covid-test` vs `COVID test`); this module is
the one place that maps between them.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from squidflow.errors import InputError

# dataset.csv event id -> the prompt wording shown to annotators in huj_annotations.csv
PROMPTS: dict[str, str] = {
    "birthday": "birthday party",
    "wedding": "wedding",
    "parade": "parade",
    "protest": "protest",
    "covid-test": "COVID test",
    "patient-test": "medical procedure (other than COVID test)",
}
EVENTS_BY_PROMPT: dict[str, str] = {v: k for k, v in PROMPTS.items()}


# --- dataset.csv: the 2,000 videos and the 6 frames of each -----------------------------------------------------
UCF_ID = re.compile(r"^banner\d+$")
YOUTUBE_ID = re.compile(r"^[A-Za-z0-9_-]{11}$")
FRAME_COLUMNS = [f"frame{i}" for i in range(6)]


@dataclass(frozen=True)
class ReleaseRow:
    """One row of dataset.csv, cleaned: the id unquoted, the frames as ints (empty when the row has none)."""

    line: int  # 1-based line number in the file (the header is line 1)
    video_id: str
    event: str
    frames: tuple[int, ...]
    kind: str  # youtube | ucf


@dataclass
class ReleaseTable:
    rows: list[ReleaseRow]
    quirks: list[str]  # one readable line per irregularity found (and how it was handled)


def read_dataset_csv(path: str | Path) -> ReleaseTable:
    """Parse the release's dataset.csv, handling its quirks and saying what they were.

    Known quirks (see ../shared/data/README.md): CRLF line ends; ids starting with `-` written as `\"\"\"-id\"\"\"`
    (a spreadsheet's protection against formulas) — the quotes are stripped; a row with no frame numbers — kept,
    with no frames; an id listed twice (under two events, or twice under one) — every row is kept here, and
    `squidflow.videos.sources.release_candidates` folds them into one video. Anything else malformed (a bad frame
    number, an unknown id shape, a wrong column count) is reported and the row is skipped, never a crash.
    """
    path = Path(path)
    quirks: list[str] = []
    rows: list[ReleaseRow] = []
    quoted: list[str] = []
    no_frames: list[str] = []
    for line, rec in _records(path, quirks):
        row = _release_row(path.name, line, rec, quirks, quoted, no_frames)
        if row is not None:
            rows.append(row)
    if quoted:
        quirks.append(f"{len(quoted)} ids written in triple quotes (e.g. {quoted[0]!r}); quotes stripped")
    if no_frames:
        quirks.append(f"{len(no_frames)} row(s) without frame numbers: {', '.join(no_frames)}; kept with no frames")
    seen: dict[str, list[ReleaseRow]] = {}
    for r in rows:
        seen.setdefault(r.video_id, []).append(r)
    for vid, rs in seen.items():
        if len(rs) > 1:
            where = ", ".join(f"{r.event} (line {r.line})" for r in rs)
            same = len({r.event for r in rs}) == 1
            quirks.append(
                f"{vid} listed {len(rs)} times{' under the same event' if same else ''}: {where}; one video, "
                f"event '{rs[0].event}' (first listing), frames of every listing kept in release_rows"
            )
    return ReleaseTable(rows=rows, quirks=quirks)


def _records(path: Path, quirks: list[str]) -> list[tuple[int, list[str]]]:
    """(line, fields) of every row after the header, read as UTF-8 CSV; a file that is not raises InputError."""
    raw = path.read_bytes()
    if b"\r\n" in raw:
        quirks.append(f"{path.name}: CRLF line endings (read as plain lines)")
    try:
        text = raw.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(
            f"{path} line {line}: byte 0x{raw[exc.start : exc.start + 1].hex()} is not UTF-8; the release's "
            "dataset.csv is UTF-8: download it again (squid_e_release.dataset_csv)"
        ) from None
    reader = csv.reader(io.StringIO(text))
    try:
        header = [h.strip() for h in next(reader, [])]
    except csv.Error as exc:
        raise InputError(
            f"{path} line 1: not valid CSV ({exc}); point squid_e_release.dataset_csv at the release's dataset.csv"
        ) from None
    if header[:2] != ["video_ID", "event"] or header[2:8] != FRAME_COLUMNS:
        raise InputError(
            f"{path} line 1: header is {header}, expected video_ID,event,frame0..frame5 (the SQUID-E release's dataset.csv); "
            "point squid_e_release.dataset_csv at that file"
        )
    records = []
    try:
        for rec in reader:
            records.append((reader.line_num, rec))
    except csv.Error as exc:
        raise InputError(
            f"{path} line {reader.line_num}: not valid CSV ({exc}); fix the line or download the release's "
            "dataset.csv again"
        ) from None
    return records


def _release_row(
    name: str, line: int, rec: list[str], quirks: list[str], quoted: list[str], no_frames: list[str]
) -> ReleaseRow | None:
    """One row cleaned, or None where it is blank or skipped (the quirk says why); a quoted id and a row without
    frames are counted in `quoted` and `no_frames`."""
    if not rec or all(not c.strip() for c in rec):
        return None
    if len(rec) != 8:
        quirks.append(f"{name} line {line}: {len(rec)} fields instead of 8; row skipped: {rec!r}")
        return None
    vid, event = rec[0].strip(), rec[1].strip()
    if vid.startswith('"') or vid.endswith('"'):
        vid = vid.strip('"')
        quoted.append(vid)
    kind = "ucf" if UCF_ID.match(vid) else "youtube" if YOUTUBE_ID.match(vid) else ""
    if not kind:
        quirks.append(f"{name} line {line}: id {vid!r} is neither a YouTube id nor a UCF bannerNN; skipped")
        return None
    cells = [c.strip() for c in rec[2:]]
    if all(c == "" for c in cells):
        no_frames.append(f"{vid} (line {line})")
        frames: tuple[int, ...] = ()
    else:
        try:
            frames = tuple(int(c) for c in cells)
        except ValueError:
            quirks.append(f"{name} line {line}: frame numbers {cells} are not all integers; row skipped")
            return None
    return ReleaseRow(line=line, video_id=vid, event=event, frames=frames, kind=kind)
