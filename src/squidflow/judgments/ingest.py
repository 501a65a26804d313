"""Reading human judgments back: MTurk batch results and the SQUID-E release, into one row per judgment.

A judgment is one annotator's 0–100 rating of one image (video_id, frame_index) under one event prompt in one task
variant. Two readers produce the same frame (schemas.JUDGMENTS):

- `read_mturk_batch`: the "Batch results" CSV that MTurk lets requesters download (HITId, WorkerId,
  AssignmentStatus, Input.* = the columns of our batch input CSV, Answer.* = the task page's form fields). Rejected
  assignments are dropped and counted.
- `read_release`: the release's huj_annotations.csv (vid_ID, frame_num, task_var, event, huj_0..huj_2). It has no
  annotator ids, only three rating positions per row, so annotators are the positions huj_0..huj_2 and each row is
  its own HIT.

Bad input stops the run with an error that names the file, the row (the CSV line, header = line 1) and the
problem, unless `on_error="skip"`, which drops the bad rows and returns them as problems to report. Whole-file
problems (missing columns, a file that is not UTF-8 CSV) always stop: there is nothing to skip to. A judgment given
twice — the same image twice in one assignment, or the same assignment in two batch files of one round — is a bad
row like any other, named with both places. No judgment at all is an error (`on_empty: skip` writes empty tables).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from squidflow.contracts import schemas
from squidflow.contracts.image_ids import HINTS, clean_id, image_id, split_image_id, unknown_id_hint
from squidflow.contracts.io import read_csv_strings, unneutralise
from squidflow.contracts.paths import DOWNLOADS_DIR, job_file
from squidflow.errors import EmptyError, InputError, UserError
from squidflow.judgments.annotation import mturk_text
from squidflow.judgments.mturk_batch import parse_rating, read_batch_frame
from squidflow.presentation.table_format import md_table

log = logging.getLogger(__name__)

RELEASE_COLUMNS = ["vid_ID", "frame_num", "task_var", "event", "huj_0", "huj_1", "huj_2"]
MTURK_REQUIRED = ["HITId", "WorkerId", "AssignmentStatus", "Input.event_prompt", "Input.variant"]
IMAGE_COL = re.compile(r"^Input\.image_(\d+)_id$")
VARIANTS = {"a": "A", "b": "B", "A": "A", "B": "B"}


class JudgmentError(UserError, ValueError):
    """Judgments that cannot be read as they are; the message names the file, the row and the problem."""


class KnownImages(set):
    """The dataset's image ids (results/dataset/frames.parquet), where an image of a video taken down (the `takedown:`
    list) counts as known too: its answers match their task by id and are left out after reading, counted in the
    ingestion report (`leave_out_taken_down`), never reported as an unknown image with a "closest known id"."""

    def __init__(self, ids=(), removed_videos=()):
        super().__init__(ids)
        self.removed_videos = frozenset(removed_videos)

    def __contains__(self, img) -> bool:
        if super().__contains__(img):
            return True
        try:
            return split_image_id(str(img))[0] in self.removed_videos
        except ValueError:
            return False


def taken_down_videos(takedown: str | Path | None) -> frozenset[str]:
    """The videos of the `takedown:` list (squidflow.videos.takedown: its path, as the config names it, is read as
    the rule's input; None: none)."""
    from squidflow.videos.takedown import read_takedowns

    return frozenset(read_takedowns(takedown)["video_id"].to_list()) if takedown else frozenset()


def leave_out_taken_down(
    judgments: pl.DataFrame, removed: frozenset[str], counts: dict | None = None
) -> tuple[pl.DataFrame, int]:
    """The judgments without those about a taken-down video's images, and how many were left out; `counts`, when
    given, gets {"ratings": left out, "images": the images they were about} (results/judgments/ingest_counts.json:
    the published card's "Changes")."""
    n, images = 0, 0
    if removed and not judgments.is_empty():
        gone = judgments.filter(pl.col("video_id").is_in(sorted(removed)))
        n, images = gone.height, gone.select("video_id", "frame_index").n_unique()
        judgments = judgments.filter(~pl.col("video_id").is_in(sorted(removed)))
    if counts is not None:
        counts.update({"ratings": n, "images": images})
    return judgments, n


def taken_down_line(n: int) -> str:
    """The ingestion report's count of the answers a takedown left out (never naming the video)."""
    return f"{n} ratings of videos taken down (left out: the `takedown:` list)."


@dataclass(frozen=True)
class Problem:
    file: str
    row: int  # CSV line number (header = 1); 0 for the whole file
    problem: str

    @property
    def place(self) -> str:
        return f"{self.file}:{self.row}"


def image_in_slot(rec: dict, i: int, known_images: set[str] | None, bad: list[str]) -> tuple[str, str, int] | None:
    """The image of slot `i` of an MTurk batch row (`Input.image_<i>_id`, read back from its neutralised cell) as
    (image id, video id, frame index); None for an empty slot (a HIT with fewer images than slots) or an id that is
    not `<video>_<frame>`. What is wrong is appended to `bad`: a malformed id, or an image not in `known_images`."""
    written = unneutralise((rec[f"Input.image_{i}_id"] or "").strip())
    img = clean_id(written)[0]  # the release's `"""-id_3"""`: quotes and whitespace stripped
    if not img:
        return None
    try:
        vid, frame = split_image_id(img)
    except ValueError as exc:
        bad.append(f"Input.image_{i}_id: {exc}")
        return None
    if known_images is not None and img not in known_images:
        hint = unknown_id_hint(written, known_images) if len(bad) < HINTS else ""
        bad.append(f"unknown image {img!r} in Input.image_{i}_id (not in results/dataset/frames.parquet){hint}")
    return img, vid, frame


def fail_on_problems(
    problems: list, on_error: str, fix: str, *, what: str = "judgment row(s)", skipped: str = "bad rows"
) -> None:
    """Stop on the problems found while reading judgments (each with its `place`: file and line, or export and
    task), showing the first ten and the fix, unless `judgments.on_error` is skip; one message for every reader
    (MTurk, release, keyword and Label Studio), so each names the way to skip the same way."""
    if problems and on_error != "skip":
        shown = "\n  ".join(f"{p.place}: {p.problem}" for p in problems[:10])
        more = f"\n  ... and {len(problems) - 10} more" if len(problems) > 10 else ""
        raise JudgmentError(
            f"{len(problems)} bad {what}:\n  {shown}{more}\n{fix} Or run with "
            f'--config judgments=\'{{"on_error": "skip"}}\' to skip {skipped} (they are listed in '
            "results/judgments/ingest_report.md)."
        )


def _read_lines(path: Path) -> pl.DataFrame:
    """A judgments CSV, every column a string, plus `_line`: each row's line in the file (header = 1), for messages;
    unreadable files name the file and line (squidflow.contracts.io)."""
    try:
        # a batch the config names, opened where this job sees it (object storage: its local copy)
        return read_csv_strings(job_file(path), what="judgments CSV", line_column="_line")
    except InputError as exc:
        raise JudgmentError(str(exc)) from None


def _require(df: pl.DataFrame, columns: list[str], path: Path, what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise JudgmentError(
            f"{path}: missing column(s) {missing} for {what} (has {[c for c in df.columns if not c.startswith('_')]}). "
            "Is this the right file?"
        )


def open_mturk_batch(path: Path, required: list[str], hits: str) -> tuple[pl.DataFrame, list[int]]:
    """An MTurk batch-results CSV (rating or keyword task): every column a string plus `_line`, the columns every
    batch of the task has checked, and its image slots (the i of `Input.image_<i>_id`); `hits` names the HITs file
    the batch should have been made from."""
    raw = _read_lines(path)
    _require(raw, required, path, "an MTurk batch-results CSV")
    slots = sorted(int(m.group(1)) for c in raw.columns if (m := IMAGE_COL.match(c)))
    if not slots:
        raise JudgmentError(f"{path}: no Input.image_<i>_id columns; was the batch made from {hits}?")
    return raw, slots


def read_release(
    path: str | Path, *, on_error: str = "stop", known_images: set[str] | None = None
) -> tuple[pl.DataFrame, list[Problem]]:
    """The release's huj_annotations.csv -> judgments (source `squid-e-release`) and the skipped rows."""
    path = Path(path)
    raw = _read_lines(path)
    _require(raw, RELEASE_COLUMNS, path, "the SQUID-E release judgments (huj_annotations.csv)")
    rows, problems = [], []
    for rec in raw.iter_rows(named=True):
        line = rec["_line"]
        vid = (rec["vid_ID"] or "").strip().strip('"')
        frame = (rec["frame_num"] or "").strip()
        variant = VARIANTS.get((rec["task_var"] or "").strip())
        prompt = (rec["event"] or "").strip()
        bad = []
        if not vid:
            bad.append("empty vid_ID")
        if not frame.isdigit():
            bad.append(f"frame_num {rec['frame_num']!r} is not a non-negative integer")
        if variant is None:
            bad.append(f"task_var {rec['task_var']!r} is not a or b")
        if not prompt:
            bad.append("empty event prompt")
        ratings = {}
        for k in range(3):
            col = f"huj_{k}"
            r = parse_rating(rec[col])
            if r is None:
                bad.append(
                    f"{col} is empty"
                    if not (rec[col] or "").strip()
                    else f"{col} = {rec[col]!r} is not an integer in [0, 100]"
                )
            ratings[k] = r
        if not bad and known_images is not None and image_id(vid, int(frame)) not in known_images:
            bad.append(f"unknown image {vid} frame {frame} (not in the dataset's frames)")
        if bad:
            problems.append(Problem(str(path), line, "; ".join(bad)))
            continue
        for k in range(3):
            rows.append(
                {
                    "video_id": vid,
                    "frame_index": int(frame),
                    "event_prompt": prompt,
                    "variant": variant,
                    "annotator": f"huj_{k}",
                    "position": k,
                    "hit": f"release-{variant}-{line}",
                    "rating": ratings[k],
                    "round": 1,
                    "source": "squid-e-release",
                }
            )
    fail_on_problems(
        problems, on_error, "Fix the rows in the CSV (or point squid_e_release.judgments_csv at the release)."
    )
    return judgments_frame(rows), problems


def read_mturk_batch(
    path: str | Path,
    *,
    on_error: str = "stop",
    known_images: set[str] | None = None,
    source: str = "mturk",
    round_: int = 1,
    seen: dict[tuple, str] | None = None,
) -> tuple[pl.DataFrame, list[Problem], int]:
    """An MTurk batch-results CSV -> judgments, the skipped rows, and how many rejected assignments were dropped.

    Input.image_{i}_id names the i-th image (`{video_id}_{frame_index}`), Answer.rating_{i} is its slider value.
    The annotator position of an assignment is its order among its HIT's approved/submitted assignments.
    `seen` (judgment key -> "file:line") is shared between the batch files of one ingestion, so a judgment given in
    two files is caught with both places named. The batch is read with polars (squidflow.judgments.mturk_batch: a
    million assignments in seconds), row by row (`read_batch_row`) only where a row has a problem or shares a
    judgment with another.
    """
    path = Path(path)
    raw, slots = open_mturk_batch(path, MTURK_REQUIRED, "results/annotation/hits_*.csv")
    _require(raw, [f"Answer.rating_{i}" for i in slots], path, "the answers of every image slot")
    seen = {} if seen is None else seen
    df, problems, rejected = read_batch_frame(
        raw, slots, path, known_images=known_images, source=source, round_=round_, seen=seen, read_row=read_batch_row
    )
    fail_on_problems(problems, on_error, "Fix or remove these rows in the batch-results CSV.")
    return df, problems, rejected


def images_in_slots(
    rec: dict, slots: list[int], known_images: set[str] | None, bad: list[str]
) -> Iterator[tuple[int, str, str, int]]:
    """(slot, image id, video id, frame index) of each filled, well-formed slot of an MTurk batch row, in slot
    order (image_in_slot: what is wrong with a slot goes to `bad`, and the slot is passed over)."""
    for i in slots:
        slot = image_in_slot(rec, i, known_images, bad)
        if slot is not None:
            yield (i, *slot)


def missing_ids(worker: str, hit: str) -> list[str]:
    """What an MTurk batch row lacks of the two ids every batch reader needs first (ratings and keywords alike)."""
    return [f"empty {name}" for name, value in (("WorkerId", worker), ("HITId", hit)) if not value]


def read_batch_row(
    rec: dict, slots: list[int], path: Path, known_images: set[str] | None, round_: int, seen
) -> tuple[Problem | None, list[tuple]]:
    """One assignment (not rejected) of an MTurk batch: its problem (None when it has none) and its judgments as
    (key, video id, frame index, rating), key = (worker, video id, frame index, prompt, variant, round). A judgment
    already in `seen` (key -> "file:line") is a duplicate named with both places."""
    line = rec["_line"]
    worker, hit = (rec["WorkerId"] or "").strip(), (rec["HITId"] or "").strip()
    prompt = mturk_text(unneutralise((rec["Input.event_prompt"] or "").strip()))
    variant = VARIANTS.get((rec["Input.variant"] or "").strip())
    bad, row_judgments = missing_ids(worker, hit), []
    in_row: dict[tuple, int] = {}
    again: dict[str, list[str]] = {}  # earlier place -> images of this row already judged there
    if not prompt:
        bad.append("empty Input.event_prompt")
    if variant is None:
        bad.append(f"Input.variant {rec['Input.variant']!r} is not A or B")
    for i, img, vid, frame in images_in_slots(rec, slots, known_images, bad):
        answer = rec[f"Answer.rating_{i}"]
        rating = parse_rating(answer)
        if rating is None:
            what = (
                "is empty (not rated)" if not (answer or "").strip() else f"= {answer!r} is not an integer in [0, 100]"
            )
            bad.append(f"Answer.rating_{i} {what}")
            continue
        key = (worker, vid, frame, prompt, variant, round_)
        if key in in_row:
            bad.append(f"Input.image_{i}_id repeats image {img} of Input.image_{in_row[key]}_id in this assignment")
            continue
        if key in seen:
            again.setdefault(seen[key], []).append(img)
            continue
        in_row[key] = i
        row_judgments.append((key, vid, frame, rating))
    for where, imgs in again.items():
        repeat = (
            ""
            if where.startswith(f"{path}:")
            else ("; ingest each batch file once, or give a repeat task `round: 2` in judgments.batches")
        )
        bad.append(
            f"duplicate judgment: worker {worker} already rated {', '.join(imgs)} for {prompt!r} at {where}{repeat}"
        )
    return (Problem(str(path), line, "; ".join(bad)) if bad else None), row_judgments


def judgments_frame(rows: list[dict]) -> pl.DataFrame:
    cols = {c: schemas.JUDGMENTS.columns[c] for c in schemas.JUDGMENTS.required}
    if not rows:  # the same columns as a frame with rows: the provenance columns come with `with_provenance`
        return schemas.empty(schemas.JUDGMENTS).select(list(cols))
    return pl.DataFrame(rows).select(list(cols)).cast(pl.Schema(cols))


def ingest_report(problems: list[Problem], rejected: dict[str, int], n_judgments: int, taken_down: int = 0) -> str:
    """Markdown listing what ingestion dropped, so that nothing is dropped silently."""
    lines = ["# Judgment ingestion report", "", f"Judgments read: {n_judgments}.", ""]
    if taken_down:
        lines += [taken_down_line(taken_down), ""]
    return "\n".join(lines + dropped_markdown(problems, rejected)) + "\n"


def dropped_markdown(problems: list[Problem], rejected: dict[str, int]) -> list[str]:
    """The report lines of rejected assignments and skipped rows (data escaped: it is typed by strangers)."""
    lines: list[str] = []
    if rejected:
        lines += [
            "## Rejected assignments (dropped)",
            "",
            *md_table(["file", "rejected"], rejected.items(), data=(0,)),
            "",
        ]
    lines += [f"## Skipped rows: {len(problems)}", ""]
    if problems:
        lines += md_table(["file", "line", "problem"], [(p.file, p.row, p.problem) for p in problems], data=(0, 2))
    return lines


def with_provenance(df: pl.DataFrame, path, wave: str = "") -> pl.DataFrame:
    """Each rating with the file it was read from and its wave (default: `first`, or the round-2 wave a file's
    name says: squidflow.judgments.waves)."""
    from squidflow.judgments.waves import wave_of

    return df.with_columns(pl.lit(str(path)).alias("source_file"), pl.lit(wave or wave_of(path)).alias("wave"))


def ingest(
    *,
    source: str,
    release_csv: str | Path | None = None,
    batches: Sequence[tuple[str | Path, int]] = (),
    known_images: set[str] | None = None,
    on_error: str = "stop",
    on_empty: str = "error",
    waves: dict[str, str] | None = None,
    removed_videos: frozenset[str] = frozenset(),
    counts: dict | None = None,
) -> tuple[pl.DataFrame, str]:
    """Every judgment of a run (source release | mturk | simulated) and the ingestion report.

    No judgment at all is an EmptyError naming the files and what was dropped (unless `on_empty="skip"`).
    """
    from squidflow.judgments.waves import wave_of

    frames, problems, rejected = [], [], {}
    # a judgment given twice is one given twice in a wave: the next round asks a worker again on purpose
    seen_in: dict[str, dict[tuple, str]] = {}
    if source == "release":
        if release_csv is None:
            raise ValueError("ingest_all: source 'release' needs release_csv")
        df, probs = read_release(release_csv, on_error=on_error, known_images=known_images)
        frames.append(with_provenance(df, release_csv))
        problems += probs
    else:
        for path, round_ in batches:
            wave = (waves or {}).get(str(path), "") or wave_of(path)
            df, probs, n_rej = read_mturk_batch(
                path,
                on_error=on_error,
                known_images=known_images,
                source=source,
                round_=round_,
                seen=seen_in.setdefault(wave, {}),
            )
            frames.append(with_provenance(df, path, wave))
            problems += probs
            if n_rej:
                rejected[str(path)] = n_rej
    out = pl.concat(frames) if frames else schemas.empty(schemas.JUDGMENTS)
    out, taken_down = leave_out_taken_down(out, removed_videos, counts)
    report = ingest_report(problems, rejected, len(out), taken_down)
    if out.is_empty() and on_empty != "skip":
        log.error("no judgments; the ingestion report:\n%s", report)
        files = [str(release_csv)] if source == "release" else [str(p) for p, _ in batches]
        first = f"; first: {problems[0].file}:{problems[0].row}: {problems[0].problem}" if problems else ""
        raise EmptyError(
            f"no judgment was read from {', '.join(files) or 'no batch file'}: {len(problems)} row(s) skipped"
            f"{first}; {sum(rejected.values())} rejected assignment(s) dropped. The full ingestion report is in this "
            "job's log. Fix the files (or set `on_empty: skip` to write empty tables)."
        )
    return out, report


def ingest_to(
    judgments_path: str | Path,
    report_path: str | Path,
    *,
    source,
    release_csv=None,
    batches=(),
    frames: str | Path | None = None,
    on_error="stop",
    cache_dir=DOWNLOADS_DIR,
    on_empty="error",
    takedown: str | Path | None = None,
    counts_path: str | Path | None = None,
) -> pl.DataFrame:
    """The rule's edge: fetch the release if needed, read the known images, ingest, write the parquet and report
    (`frames`, `takedown`: paths, the rule's inputs; the takedown list's videos' answers are left out, counted in
    the report and in `counts_path`'s JSON)."""
    from squidflow.contracts.io import read_parquet, write_parquet, write_text
    from squidflow.fetch import fetch

    removed = taken_down_videos(takedown)
    counts: dict = {}  # what the takedown left out, filled by the ingestion
    known = KnownImages(read_parquet(frames, schemas.FRAMES)["image_id"].to_list(), removed) if frames else None
    release = fetch(release_csv, cache_dir) if source == "release" else None
    df, report = ingest(
        source=source,
        release_csv=release,
        batches=[(b["path"], b.get("round", 1)) for b in batches],
        waves={str(b["path"]): b.get("wave") or "" for b in batches},
        known_images=known,
        on_error=on_error,
        on_empty=on_empty,
        removed_videos=removed,
        counts=counts,
    )
    write_parquet(df, judgments_path, schemas.JUDGMENTS)
    write_text(report_path, report)
    if counts_path:
        write_counts(counts_path, counts)
    return df


def write_counts(path: str | Path, taken_down: dict) -> None:
    """results/judgments/ingest_counts.json: what ingestion left out for a takedown (counts, never a video id)."""
    import json

    from squidflow.contracts.io import write_text

    write_text(path, json.dumps({"taken_down": taken_down}, indent=1, sort_keys=True) + "\n")
