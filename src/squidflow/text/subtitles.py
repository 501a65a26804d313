"""Subtitles as time-stamped text: WebVTT and SubRip files read into cues, and the cues around a frame.

What is said while a frame is on screen is the text that co-occurs with it most closely. yt-dlp keeps subtitles
beside the video, same stem, `<stem>.<lang>.vtt` or `<stem>.<lang>.srt` (`--write-subs`/`--write-auto-subs
--sub-langs ...`), for manual and automatic captions alike; `subtitle_file` finds them by that convention.

Files from the wild differ in every way a reader can trip on, so parsing is line based and lenient where the
formats are loose, strict where a mistake would move text in time:
- WebVTT: a `WEBVTT` header (with YouTube's `Kind:`/`Language:` lines), NOTE, STYLE and REGION blocks, optional
  cue identifiers, cue settings after the timing (`align:start position:0%`), timestamps with or without hours,
  cues not separated by a blank line, whitespace-only lines, styling and voice tags (`<i>`, `<c.colorE5E5E5>`,
  `<v Alba>`, `<ruby>…<rt>…</rt></ruby>`), character references (`&amp;`), and YouTube's automatic captions, whose
  word-timed cues (`<00:00:04.199><c> word</c>`) repeat each line in the next cue (`drop_rolling_repeats`).
- SubRip: numbered cues, `,` or `.` before the milliseconds, a byte-order mark, CRLF, `<font color=…>` and ASS
  override tags (`{\\an8}`), missing or extra blank lines, and legacy Windows-1252 text.
A timing line that cannot be read, or a cue that ends before it starts, is an error naming the file and line.

A cue occupies [start, end). The window of a frame at time t is the closed interval [t − w, t + w]; a cue overlaps
it when start ≤ t + w and end > t − w (so w = 0 picks the cue on screen at t).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import polars as pl

from squidflow.errors import UserError

SUBTITLE_EXTENSIONS = (".vtt", ".srt")  # preference order when a language has both
CUE_SCHEMA = {"cue": pl.Int64, "start_s": pl.Float64, "end_s": pl.Float64, "text": pl.Utf8}
_TIME = r"(?:(\d+):)?(\d{1,2}):(\d{1,2})[.,](\d{1,3})"
TIMING = re.compile(rf"^\s*{_TIME}\s*-->\s*{_TIME}(?:\s.*)?$")
INLINE_TIMESTAMP = re.compile(r"<\d+:\d{2}(?::\d{2})?[.,]\d{1,3}>")
RUBY_TEXT = re.compile(r"<rt>.*?</rt>", re.S)
TAG = re.compile(r"</?[A-Za-z][^<>]*>")
ASS_OVERRIDE = re.compile(r"\{\\[^{}]*\}")
VTT_NON_CUE_BLOCK = re.compile(r"^(NOTE|STYLE|REGION)(\s|$)")
LANGUAGE_CODE = re.compile(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]+)*$")


class SubtitleError(UserError, ValueError):
    """A subtitle file that cannot be read as it is; the message names the file, the line and the fix."""


# --- reading -----------------------------------------------------------------------------------------------------
def decode(raw: bytes) -> str:
    """Subtitle bytes as text: UTF-8 (with or without BOM), UTF-16 with BOM, else Windows-1252 (old SRT files)."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


def _seconds(h: str | None, m: str, s: str, frac: str) -> float:
    return int(h or 0) * 3600 + int(m) * 60 + int(s) + int(frac) / 10 ** len(frac)


def clean_cue_text(raw: str) -> str:
    """The words a viewer reads: tags, inline timestamps, ruby annotations and ASS overrides removed, character
    references resolved, each line stripped, empty lines dropped (lines joined by a newline)."""
    text = INLINE_TIMESTAMP.sub("", raw)
    text = RUBY_TEXT.sub("", text)
    text = TAG.sub("", text)
    text = ASS_OVERRIDE.sub("", text)
    text = html.unescape(text).replace("\u00a0", " ").replace("\u200e", "").replace("\u200f", "")
    lines = [" ".join(line.split()) for line in text.split("\n")]
    return "\n".join(line for line in lines if line)


def _timing(line: str, where: str) -> tuple[float, float]:
    """A cue's timing line (`where`: file:line) -> (start, end) in seconds; SubtitleError where it cannot be read or
    ends before it starts."""
    m = TIMING.match(line)
    if m is None:
        raise SubtitleError(
            f"{where}: timing line {line.strip()!r} is not 'HH:MM:SS.mmm --> HH:MM:SS.mmm'; "
            "fix the line or delete the file (subtitles are optional)"
        )
    start, end = _seconds(*m.group(1, 2, 3, 4)), _seconds(*m.group(5, 6, 7, 8))
    if end < start:
        raise SubtitleError(
            f"{where}: cue ends ({end:.3f} s) before it starts ({start:.3f} s); "
            "fix the timing or delete the file (subtitles are optional)"
        )
    return start, end


def parse_subtitles(text: str, *, fmt: str, source: str = "<text>") -> pl.DataFrame:
    """Cues (cue, start_s, end_s, text) of a WebVTT (`fmt="vtt"`) or SubRip (`fmt="srt"`) document, in file order.

    Empty cues (only tags or blanks) are dropped; YouTube's rolling automatic captions are de-duplicated.
    """
    if fmt not in ("vtt", "srt"):
        raise ValueError(f"{source}: unknown subtitle format {fmt!r} (vtt or srt)")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff").split("\n")
    if fmt == "vtt" and not lines[0].startswith("WEBVTT"):
        raise SubtitleError(
            f"{source}:1: not a WebVTT file (its first line must start with 'WEBVTT', found {lines[0][:40]!r}); "
            "if it is SubRip, name it .srt"
        )
    cues: list[list] = []  # [start, end, payload lines, line number]
    block_start, skip_block = True, False
    prev_was_block_start_text = False
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            block_start, skip_block, prev_was_block_start_text = True, False, False
            if cues:
                cues[-1][2].append("")
            continue
        if fmt == "vtt" and block_start and VTT_NON_CUE_BLOCK.match(line):
            skip_block, block_start = True, False
            continue
        if skip_block:
            continue
        if "-->" in line:
            start, end = _timing(line, f"{source}:{number}")
            if prev_was_block_start_text and cues:
                cues[-1][2].pop()  # the line just before the timing is the cue's identifier (index)
            cues.append([start, end, [], number])
            block_start, prev_was_block_start_text = False, False
            continue
        # a cue identifier opens its block (WebVTT); a SubRip index is a number just before the timing, blank or not
        prev_was_block_start_text = block_start if fmt == "vtt" else line.strip().isdigit()
        block_start = False
        if cues:
            cues[-1][2].append(line)
    rolling = any(INLINE_TIMESTAMP.search(line) for _, _, payload, _ in cues for line in payload)
    rows = [(start, end, clean_cue_text("\n".join(payload))) for start, end, payload, _ in cues]
    df = pl.DataFrame(
        {
            "cue": list(range(len(rows))),
            "start_s": [r[0] for r in rows],
            "end_s": [r[1] for r in rows],
            "text": [r[2] for r in rows],
        },
        schema=CUE_SCHEMA,
    )
    if rolling:
        df = drop_rolling_repeats(df)
    return df.filter(pl.col("text") != "").with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("cue"))


def drop_rolling_repeats(cues: pl.DataFrame) -> pl.DataFrame:
    """YouTube's automatic captions scroll: each cue repeats the previous cue's last line before its new words, and
    a 10 ms cue repeats the whole line again. Counting those repeats would double every spoken word's frequency, so
    a cue's leading line is dropped when it equals the previous cue's last line."""
    texts, previous_last = [], None
    for text in cues["text"].to_list():
        lines = text.split("\n") if text else []
        last = lines[-1] if lines else previous_last
        while lines and previous_last is not None and lines[0] == previous_last:
            lines = lines[1:]
        texts.append("\n".join(lines))
        previous_last = last
    return cues.with_columns(pl.Series("text", texts, dtype=pl.Utf8))


def read_subtitles(path: str | Path) -> pl.DataFrame:
    """A .vtt or .srt file's cues (a file without a WEBVTT header but with a .vtt name is an error)."""
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in ("vtt", "srt"):
        raise SubtitleError(f"{path}: not a subtitle file this reader knows (.vtt or .srt)")
    return parse_subtitles(decode(path.read_bytes()), fmt=fmt, source=str(path))


# --- finding the file beside a video -----------------------------------------------------------------------------
def subtitle_files(video_path: str | Path) -> list[tuple[str, Path]]:
    """(language code, path) of every `<stem>.<lang>.vtt|srt` beside the video, sorted by path."""
    video = Path(video_path)
    if not video.parent.is_dir():
        return []
    prefix = video.stem + "."
    found = []
    for path in sorted(video.parent.iterdir()):
        suffix = path.suffix.lower()
        if suffix not in SUBTITLE_EXTENSIONS or not path.name.startswith(prefix) or not path.is_file():
            continue
        code = path.name[len(prefix) : -len(suffix)]
        if LANGUAGE_CODE.match(code):
            found.append((code, path))
    return found


def _matches(code: str, wanted: str) -> bool:
    code, wanted = code.lower().replace("_", "-"), wanted.lower().replace("_", "-")
    return wanted == "*" or code == wanted or code.startswith(wanted + "-")


def subtitle_file(video_path: str | Path, languages: list[str] | tuple[str, ...]) -> tuple[str, Path] | None:
    """The subtitle file to read for a video: the first configured language that has one (`*` = any), an exact
    code before a regional one (`en` before `en-GB`), WebVTT before SubRip; None when there is none."""
    files = subtitle_files(video_path)
    for wanted in languages:
        hits = [(code, path) for code, path in files if _matches(code, wanted)]
        if hits:
            hits.sort(
                key=lambda cp: (
                    cp[0].lower() != wanted.lower(),
                    SUBTITLE_EXTENSIONS.index(cp[1].suffix.lower()),
                    str(cp[1]),
                )
            )
            return hits[0]
    return None


# --- the window around a frame -----------------------------------------------------------------------------------
def in_window(cues: pl.DataFrame, t: float, half_width_s: float) -> pl.DataFrame:
    """The cues that overlap [t − w, t + w] (start ≤ t + w and end > t − w), in time order."""
    return cues.filter((pl.col("start_s") <= t + half_width_s) & (pl.col("end_s") > t - half_width_s)).sort(
        "start_s", "end_s", "cue"
    )
