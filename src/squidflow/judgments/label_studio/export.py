"""Judgments read back from a Label Studio JSON export of the annotation tasks (SQUID-E §3.2; Sherlock §4.3).

`read_export` reads a Label Studio JSON export of an A or B project (a file, or the same list pulled from the server)
into the judgments schema of the MTurk reader (`schemas.JUDGMENTS`), with the same `on_error` rule: a bad task stops
the run with the file (or server and project), the task id and the fix, or is skipped and listed with
`on_error: skip`. What Label Studio has besides submitted annotations is counted and reported, never silently used:
cancelled (skipped) annotations, drafts, annotations updated after they were submitted (the stored last version
counts), an annotator's several annotations of one task (the last one counts), tasks with several annotators'
annotations (one judgment each, `position` in order of submission). `read_keyword_export` reads task K's export into
keyword judgments, `read_comparison_export` the comparison sets' into plausibility ratings.

The tasks these exports answer are written by `squidflow.judgments.label_studio.tasks`; a run's exports are ingested
(annotators in both variants, the ingestion report) by `squidflow.judgments.label_studio.run_exports`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from squidflow.contracts import schemas
from squidflow.contracts.image_ids import HINTS, clean_id, split_image_id, unknown_id_hint
from squidflow.contracts.paths import job_file
from squidflow.judgments.ingest import JudgmentError, fail_on_problems
from squidflow.judgments.label_studio.tasks import IMAGE_KEY, RATING_TASKS

RATING_FROM = re.compile(r"^rating_([0-9]+)\Z")
KEYWORDS_FROM = re.compile(r"^keywords_([0-9]+)\Z")
PLAUSIBILITY_FROM = re.compile(r"^plausibility_([0-9]+)\Z")
CANDIDATE_KEY = re.compile(r"^candidate_id_([0-9]+)\Z")


@dataclass
class ExportStats:
    """What an export held besides usable judgments: counted, reported, never silently used."""

    tasks: int = 0
    annotations: int = 0
    cancelled: int = 0  # skipped by the annotator ("was_cancelled")
    drafts: int = 0  # saved, never submitted
    updated: int = 0  # submitted, then changed: the stored last version counts
    superseded: int = 0  # an annotator's earlier annotation of a task they annotated again: the last one counts
    several: int = 0  # tasks with annotations of more than one annotator (one judgment each)
    unannotated: int = 0  # tasks nobody submitted
    by_source: dict = field(default_factory=dict)

    def add(self, other: ExportStats, where: str) -> None:
        for k in ("tasks", "annotations", "cancelled", "drafts", "updated", "superseded", "several", "unannotated"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.by_source[where] = other


@dataclass(frozen=True)
class TaskProblem:
    where: str  # the export file, or "<server> project <id>"
    task: int | str  # Label Studio task id
    problem: str

    @property
    def place(self) -> str:
        return f"{self.where}: task {self.task}"

    @classmethod
    def of(cls, where: str, task: int | str, problems: list[str]) -> TaskProblem:
        """One problem line for a task: its distinct problems, in the order found."""
        return cls(where, task, "; ".join(dict.fromkeys(problems)))


def _stop(problems: list[TaskProblem], on_error: str) -> None:
    fail_on_problems(
        problems,
        on_error,
        "Fix the tasks in Label Studio (or the export file) and export again.",
        what="Label Studio task(s)",
        skipped="them",
    )


def annotator_of(annotation: dict) -> str:
    """The annotator: the user's email when the export carries the user, else `user-<id>` (ids are per server)."""
    who = annotation.get("completed_by")
    if isinstance(who, dict):
        return str(who.get("email") or f"user-{who.get('id')}")
    return f"user-{who}"


def _time(annotation: dict, key: str) -> str:
    return str(annotation.get(key) or "")


def _was_updated(annotation: dict) -> bool:
    """Changed after it was first submitted: Label Studio stamps `updated_at` (and `last_action: updated`)."""
    if annotation.get("last_action") in ("updated", "fixed_and_accepted", "accepted"):
        return True
    created, updated = _time(annotation, "created_at")[:19], _time(annotation, "updated_at")[:19]
    return bool(created and updated and updated > created)


def _json_of(path: str | Path) -> tuple[object, str | None]:
    """(the JSON in `path`, None), or (None, why it cannot be read): a file that is not there, not text, not JSON,
    or nested deeper than Python's parser goes (a hostile export: named, not a RecursionError)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8")), None
    except RecursionError:
        return None, "nested too deeply"
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return None, str(exc)


def expected_images(tasks_json: str | Path) -> dict[str, list[str]]:
    """hit -> its image ids, from the tasks.json squidflow wrote (what was imported)."""
    tasks, why = _json_of(tasks_json)
    if why:
        raise JudgmentError(
            f"{tasks_json}: not the tasks.json squidflow wrote ({why}). Rebuild it with rule "
            "label_studio_tasks, or point `expected` at the file that was imported."
        )
    out: dict[str, list[str]] = {}
    for k, t in enumerate(tasks if isinstance(tasks, list) else [None]):
        data = t.get("data") if isinstance(t, dict) else None
        hit = data.get("hit") if isinstance(data, dict) else None
        if not isinstance(data, dict) or not isinstance(hit, str) or not hit or hit in out:
            why = "a duplicated" if isinstance(hit, str) and hit in out else "no"
            raise JudgmentError(
                f"{tasks_json}: task {k + 1} (key data.hit) has {why} HIT id: not the tasks.json "
                "squidflow wrote. Rebuild it with rule label_studio_tasks, or point `expected` at the "
                "file that was imported."
            )
        out[hit] = _images_of(data)
    return out


def _images_of(data: dict) -> list[str]:
    slots = sorted({int(m.group(1)) for k in data if (m := IMAGE_KEY.match(k))})
    # ids as people write them: the release's `"""-id_3"""` read without its quotes and whitespace
    return [clean_id(data.get(f"image_{i}_id") or "")[0] for i in slots]


def _image_problems(images: list[str], known_images) -> list[str]:
    """What is wrong with a task's image ids: one that is not `<video_id>_<frame_index>`, or (given `known_images`)
    one that is not in the dataset. Empty slots are not checked here."""
    bad = []
    for img in images:
        if not img:
            continue
        try:
            split_image_id(img)
        except ValueError as exc:
            bad.append(str(exc))
            continue
        if known_images is not None and img not in known_images:
            hint = unknown_id_hint(img, known_images) if len(bad) < HINTS else ""
            bad.append(f"unknown image {img!r} (not in results/dataset/frames.parquet){hint}")
    return bad


def _task_name(task, position: int) -> int | str:
    """How errors name a task: its Label Studio id, or where it stands in the export when it has no usable id."""
    tid = task.get("id") if isinstance(task, dict) else None
    if isinstance(tid, (int, str)) and not isinstance(tid, bool) and str(tid).strip():
        return tid
    return f"#{position + 1} in the export (id {tid!r})"


def _shape_problem(task: dict, seen: set) -> str | None:
    """What makes a task unreadable as Label Studio exports it (a dict `data`, lists of dict annotations with a list
    `result` of dicts, integer annotation ids), or a task id seen before in the export; None when it is readable."""
    tid = task.get("id")
    if not isinstance(tid, (int, str)) or isinstance(tid, bool) or tid == "":
        return f"task id {tid!r} is not a Label Studio task id (a number): export the project again"
    if tid in seen:
        return f"task id {tid} appears more than once in the export (export the project again)"
    seen.add(tid)
    if not isinstance(task.get("data"), dict):
        return f"`data` is {type(task.get('data')).__name__}, not an object"
    for key in ("hit", "variant", "event_prompt", "query_id"):
        if not isinstance(task["data"].get(key) or "", str):
            return f"data.{key} is {type(task['data'].get(key)).__name__}, not a text"
    for key in ("annotations", "drafts"):
        if not isinstance(task.get(key) or [], list):
            return f"`{key}` is {type(task.get(key)).__name__}, not a list"
    for a in task.get("annotations") or []:
        if not isinstance(a, dict):
            return f"an annotation is {type(a).__name__}, not an object"
        aid = a.get("id")
        if aid is not None and (not isinstance(aid, int) or isinstance(aid, bool)):
            return f"annotation id {aid!r} is not a whole number"
        who = a.get("completed_by")
        if not (isinstance(who, (int, str)) and not isinstance(who, bool)) and not (
            isinstance(who, dict)
            and isinstance(who.get("email") or "", str)
            and (who.get("email") or isinstance(who.get("id"), (int, str)))
        ):
            return f"annotation {aid}: `completed_by` {str(who)[:40]} names no user (an id or an email)"
        if not isinstance(a.get("result") or [], list):
            return f"annotation {aid}: `result` is {type(a.get('result')).__name__}, not a list"
        for r in a.get("result") or []:
            if not isinstance(r, dict) or not isinstance(r.get("value") or {}, dict):
                return f"annotation {aid}: a result is not an object with a `value` object: {str(r)[:60]}"
    return None


def _readable(
    tasks: list, where: str, stats: ExportStats, problems: list[TaskProblem]
) -> Iterator[tuple[int | str, dict]]:
    """Each task of an export that Label Studio could have written (`_shape_problem`), with how errors name it: the
    one walk every reader starts from, so an unreadable task is a problem (listed in `problems`) the same way in each,
    and a readable task's drafts are counted in `stats`."""
    seen: set = set()
    for k, task in enumerate(tasks):
        tid = _task_name(task, k)
        if why := _shape_problem(task, seen):
            problems.append(TaskProblem(where, tid, why))
            continue
        stats.drafts += len(task.get("drafts") or [])
        yield tid, task


def _rating_task_problems(
    data: dict,
    images: list[str],
    *,
    hit: str,
    variant: str,
    prompt: str,
    expected: dict[str, list[str]] | None,
    expected_from: str,
) -> list[str]:
    """What is wrong with an A/B task's own data, in words: not a rating task, no prompt or images, images other
    than the imported tasks.json's for its hit (`expected`)."""
    bad = []
    if variant not in RATING_TASKS:
        bad.append(f"data.variant {variant!r} is not A or B (is this an A/B rating project?)")
    if not prompt:
        bad.append("empty data.event_prompt")
    if not images:
        bad.append("no data.image_<i>_id: the task was not made by squidflow (results/annotation/label_studio/)")
    if expected is not None and not bad:
        want = expected.get(hit)
        if want is None:
            bad.append(
                f"hit {hit!r} is not in {expected_from}: the project holds tasks squidflow did not write. "
                f"Import {expected_from} into a fresh project"
            )
        elif want != images:
            bad.append(
                f"images {images} do not match hit {hit!r} in {expected_from} ({want}): the project was "
                f"imported from other tasks. Export the project that {expected_from} was imported into, "
                "or re-import it"
            )
    if images and not any(images):
        bad.append("every data.image_<i>_id is empty")
    return bad


def _ratings_of(annotation: dict, images: list[str], bad: list[str]) -> list[tuple[str, int]]:
    """(image id, rating) for each filled image slot of an annotation; a slot without a whole 0-100 rating is added
    to `bad` in words."""
    who, ratings, out = annotator_of(annotation), {}, []
    for r in annotation.get("result") or []:
        m = RATING_FROM.match(str(r.get("from_name", "")))
        if m and r.get("type") == "number":
            ratings[int(m.group(1))] = (r.get("value") or {}).get("number")
    for i, img in enumerate(images, start=1):
        if not img:
            continue
        value = ratings.get(i)
        if value is None:
            bad.append(f"annotation {annotation.get('id')} by {who}: image {i} ({img}) has no rating_{i}")
            continue
        if (
            not isinstance(value, (int, float))
            or isinstance(value, bool)
            or not 0 <= value <= 100
            or value != int(value)
        ):  # NaN fails the range, so int() never sees NaN or inf
            bad.append(
                f"annotation {annotation.get('id')} by {who}: rating_{i} = {value!r} for {img} is outside 0-100 "
                "(or not a whole number)"
            )
            continue
        out.append((img, int(value)))
    return out


def read_export(
    export: list[dict] | str | Path,
    *,
    where: str | None = None,
    on_error: str = "stop",
    known_images: set[str] | None = None,
    expected: dict[str, list[str]] | None = None,
    expected_from: str = "tasks.json",
    source: str = "label_studio",
    round_: int = 1,
) -> tuple[pl.DataFrame, list[TaskProblem], ExportStats]:
    """A Label Studio JSON export of an A or B project -> judgments, the skipped tasks, and the counts.

    `expected` (hit -> image ids, from the tasks.json that was imported) catches a task whose images do not match
    what squidflow wrote; `known_images` an image that is not in the dataset.
    """
    export, where = _load(export, where)
    stats = ExportStats(tasks=len(export))
    rows: list[dict] = []
    problems: list[TaskProblem] = []
    for tid, task in _readable(export, where, stats, problems):
        data = task["data"]
        hit = str(data.get("hit") or f"ls-task-{tid}")
        variant = str(data.get("variant") or "")
        prompt = str(data.get("event_prompt") or "").strip()
        images = _images_of(data)
        bad = _rating_task_problems(
            data, images, hit=hit, variant=variant, prompt=prompt, expected=expected, expected_from=expected_from
        )
        bad += _image_problems(images, known_images)
        kept = _task_annotations(task, tid, where, bad, stats, problems)
        if kept is None:
            continue
        task_rows = []
        for position, a in enumerate(kept):
            for img, value in _ratings_of(a, images, bad):
                video, frame = split_image_id(img)
                task_rows.append(
                    {
                        "video_id": video,
                        "frame_index": frame,
                        "event_prompt": prompt,
                        "variant": variant,
                        "annotator": annotator_of(a),
                        "position": position,
                        "hit": hit,
                        "rating": value,
                        "round": round_,
                        "source": source,
                        "_task": tid,
                    }
                )
        if bad:
            problems.append(TaskProblem.of(where, tid, bad))
            continue
        rows += task_rows
    _stop(problems, on_error)
    return _frame(rows), problems, stats


def _task_annotations(
    task: dict, tid, where: str, bad: list[str], stats: ExportStats, problems: list[TaskProblem]
) -> list[dict] | None:
    """The task's annotations that count (kept_annotations, counted in `stats` either way), or None when the task's
    own data is wrong (`bad`): its problem is recorded and its annotations are not read."""
    kept = kept_annotations(task, stats)
    if bad:
        problems.append(TaskProblem.of(where, tid, bad))
        return None
    return kept


def _answers(annotation: dict, control: re.Pattern, key: str) -> dict[int, object]:
    """An annotation's answers to the numbered controls `control` matches (keywords_<i>, plausibility_<i>): slot i ->
    the result's `value[key]` (an empty list when absent)."""
    return {
        int(m.group(1)): (r.get("value") or {}).get(key) or []
        for r in annotation.get("result") or []
        if (m := control.match(str(r.get("from_name", ""))))
    }


def kept_annotations(task: dict, stats: ExportStats) -> list[dict]:
    """A task's annotations that count, in order of submission: cancelled ones dropped, an annotator's last
    annotation of the task only; drafts, updates, skips and superseded annotations are counted in `stats`."""
    submitted = []
    for a in task.get("annotations") or []:
        stats.annotations += 1
        if a.get("was_cancelled"):
            stats.cancelled += 1
            continue
        if _was_updated(a):
            stats.updated += 1
        submitted.append(a)
    if not submitted:
        stats.unannotated += 1
    last: dict[str, dict] = {}
    for a in sorted(submitted, key=lambda a: (_time(a, "updated_at"), a.get("id") or 0)):
        who = annotator_of(a)
        if who in last:
            stats.superseded += 1
        last[who] = a
    kept = sorted(last.values(), key=lambda a: (_time(a, "created_at"), a.get("id") or 0))
    if len(kept) > 1:
        stats.several += 1
    return kept


def _load(export, where: str | None) -> tuple[list[dict], str]:
    if isinstance(export, list):
        return export, where or "Label Studio export"
    where = where or str(export)
    data, why = _json_of(job_file(export) if isinstance(export, (str, Path)) else export)  # object storage: its copy
    if why:
        raise JudgmentError(
            f"{where}: not a Label Studio JSON export ({why}). Export the project with Export > JSON "
            "(not JSON-MIN or CSV), or pull it with `squidflow label-studio pull`."
        )
    if not isinstance(data, list) or any(not isinstance(t, dict) or "data" not in t for t in data):
        raise JudgmentError(
            f"{where}: not a Label Studio JSON export (a list of tasks, each with `data` and "
            "`annotations`). Export the project with Export > JSON (not JSON-MIN or CSV)."
        )
    return data, where


def _keywords_of(
    annotation: dict, images: list[str], max_length: int, bad: list[str]
) -> list[tuple[str, int, str, str]]:
    """(image id, box, keyword as typed, normalised) for each filled image slot of a task K annotation; a slot without
    a keyword, and a keyword too long or without letters or digits, is added to `bad` in words."""
    from squidflow.judgments.keywords import normalise_keyword

    who, given, out = annotator_of(annotation), _answers(annotation, KEYWORDS_FROM, "text"), []
    for i, img in enumerate(images, start=1):
        if not img:
            continue
        answer = given.get(i, [])
        if not isinstance(answer, list) or not all(isinstance(w, str) for w in answer):
            bad.append(
                f"annotation {annotation.get('id')} by {who}: keywords_{i} = {str(given[i])[:40]} is not a list of texts"
            )
            continue
        words = [w for w in answer if w.strip()]
        if not words:
            bad.append(f"annotation {annotation.get('id')} by {who}: no keyword for image {i} ({img})")
        for j, text in enumerate(words, start=1):
            text = str(text).strip()
            norm = normalise_keyword(text)
            if len(text) > max_length or not norm:
                bad.append(
                    f"annotation {annotation.get('id')} by {who}: keyword {j} of image {i} = {text[:40]!r} is "
                    f"{'longer than ' + str(max_length) + ' characters' if norm else 'without letters or digits'}"
                )
                continue
            out.append((img, j, text, norm))
    return out


def read_keyword_export(
    export,
    *,
    where: str | None = None,
    on_error: str = "stop",
    max_length: int = 40,
    known_images: set[str] | None = None,
    round_: int = 1,
) -> tuple[pl.DataFrame, list[TaskProblem], ExportStats]:
    """A Label Studio export of task K -> keyword judgments (schemas.KEYWORD_JUDGMENTS, source label_studio)."""
    tasks, where = _load(export, where)
    stats = ExportStats(tasks=len(tasks))
    rows: list[dict] = []
    problems: list[TaskProblem] = []
    for tid, task in _readable(tasks, where, stats, problems):
        data, bad, found = task["data"], [], []
        images = _images_of(data)
        if not data.get("hit"):
            bad.append("no data.hit: the task was not made by squidflow (results/annotation/label_studio/)")
        if not any(images):
            bad.append("no data.image_<i>_id: the task was not made by squidflow (results/annotation/label_studio/)")
        bad += _image_problems(images, known_images)
        kept = _task_annotations(task, tid, where, bad, stats, problems)
        if kept is None:
            continue
        for a in kept:
            for img, j, text, norm in _keywords_of(a, images, max_length, bad):
                video, frame = split_image_id(img)
                found.append(
                    {
                        "video_id": video,
                        "frame_index": frame,
                        "annotator": annotator_of(a),
                        "hit": str(data.get("hit")),
                        "position": j,
                        "keyword": text,
                        "normalised": norm,
                        "round": round_,
                        "source": "label_studio",
                    }
                )
        if bad:
            problems.append(TaskProblem.of(where, tid, bad))
            continue
        rows += found
    _stop(problems, on_error)
    df = (
        pl.DataFrame(rows, schema=schemas.KEYWORD_JUDGMENTS.columns)
        if rows
        else schemas.empty(schemas.KEYWORD_JUDGMENTS)
    )
    return df, problems, stats


def read_comparison_export(
    export, *, where: str | None = None, on_error: str = "stop"
) -> tuple[pl.DataFrame, list[TaskProblem], ExportStats]:
    """A Label Studio export of the comparison sets -> one row per (query, candidate, annotator): the 1–3
    plausibility (Sherlock §4.3), for crowd-kit and, two annotators wide, for `comparison.ratings`."""
    tasks, where = _load(export, where)
    stats = ExportStats(tasks=len(tasks))
    rows: list[dict] = []
    problems: list[TaskProblem] = []
    for tid, task in _readable(tasks, where, stats, problems):
        data, bad, found = task["data"], [], []
        n = sorted({int(m.group(1)) for k in data if (m := CANDIDATE_KEY.match(k)) and data[k]})
        if not n:
            bad.append("no data.candidate_id_<i>: the task was not made by squidflow (comparison_hits.csv)")
        if not isinstance(data.get("query_id"), str) or not data["query_id"].strip():
            bad.append(f"data.query_id {data.get('query_id')!r} is not a query id")
        bad += [
            f"data.candidate_id_{i} {data[f'candidate_id_{i}']!r} is not a candidate id"
            for i in n
            if not isinstance(data[f"candidate_id_{i}"], str)
        ]
        kept = _task_annotations(task, tid, where, bad, stats, problems)
        if kept is None:
            continue
        for a in kept:
            who, chosen = annotator_of(a), _answers(a, PLAUSIBILITY_FROM, "choices")
            for i in n:
                c = chosen.get(i) or []
                if (
                    not isinstance(c, list)
                    or len(c) != 1
                    or not isinstance(c[0], (str, int))
                    or isinstance(c[0], bool)
                    or str(c[0]) not in ("1", "2", "3")
                ):
                    bad.append(f"annotation {a.get('id')} by {who}: plausibility_{i} = {c!r} is not one of 1, 2, 3")
                    continue
                found.append(
                    {
                        "query_id": str(data.get("query_id")),
                        "candidate_id": str(data[f"candidate_id_{i}"]),
                        "annotator": who,
                        "rating": int(c[0]),
                    }
                )
        if bad:
            problems.append(TaskProblem.of(where, tid, bad))
            continue
        rows += found
    _stop(problems, on_error)
    schema = {"query_id": pl.Utf8, "candidate_id": pl.Utf8, "annotator": pl.Utf8, "rating": pl.Int64}
    return pl.DataFrame(rows, schema=schema), problems, stats


def comparison_ratings_table(long: pl.DataFrame) -> pl.DataFrame:
    """Long comparison ratings -> `comparison.ratings`' shape (query_id, candidate_id, annot1, annot2): each set's
    first two annotators in order of submission; a set with fewer than two is left out."""
    firsts = long.group_by("query_id", maintain_order=True).agg(pl.col("annotator").unique(maintain_order=True).head(2))
    out = []
    for qid, who in firsts.iter_rows():
        if len(who) < 2:
            continue
        part = long.filter(pl.col("query_id") == qid)
        for cid in part["candidate_id"].unique(maintain_order=True):
            r = {a: part.filter((pl.col("candidate_id") == cid) & (pl.col("annotator") == a))["rating"] for a in who}
            if all(len(v) for v in r.values()):
                out.append(
                    {"query_id": qid, "candidate_id": cid, "annot1": int(r[who[0]][0]), "annot2": int(r[who[1]][0])}
                )
    return pl.DataFrame(
        out, schema={"query_id": pl.Utf8, "candidate_id": pl.Utf8, "annot1": pl.Int64, "annot2": pl.Int64}
    )


def _frame(rows: list[dict]) -> pl.DataFrame:
    cols = {
        **{c: schemas.JUDGMENTS.columns[c] for c in schemas.JUDGMENTS.required},
        "_task": pl.Utf8,
        "_where": pl.Utf8,
        "_wave": pl.Utf8,
    }
    if not rows:
        return pl.DataFrame(schema=cols)
    return (
        pl.DataFrame([{**r, "_task": str(r["_task"]), "_where": "", "_wave": ""} for r in rows])
        .select(list(cols))
        .cast(pl.Schema(cols))
    )
