"""The annotation tasks on a self-hosted Label Studio, and the judgments read back from its JSON export.

Label Studio (labelstud.io; `label-studio` on PyPI) is where many labs collect judgments from their own annotators.
The same tasks as the MTurk batches (SQUID-E §3.2, supplement A.2 and B; the HIT design of
`squidflow.judgments.annotation` and `squidflow.judgments.keywords`) become, per task:

- a labeling config (XML) that shows what the MTurk page shows — variants A and B: the event prompt and a six-image
  screen with one 0–100 rating per image (`Number` controls `rating_<i>`); K: up to N keywords per image
  (`TextArea` controls `keywords_<i>`); a comparison set (Sherlock §4.3): the image with its region and a 1–3
  plausibility choice per inference (`Choices` controls `plausibility_<i>`) — with the paper's instructions;
- the tasks as Label Studio import JSON (one task per HIT; `data.hit` is the HIT's id, `data.image_<i>_id` the
  image ids), images referenced by a URL under a configured base, or served by Label Studio's local-files storage
  (`/data/local-files/?d=<path under LOCAL_FILES_DOCUMENT_ROOT>`);
- variants A and B as separate projects: the paper's annotator groups are disjoint (no annotator in both).

`read_export` reads a Label Studio JSON export (a file, or the same list pulled from the server) into the judgments
schema of the MTurk reader (`schemas.JUDGMENTS`), with the same `on_error` rule: a bad task stops the run with the
file (or server and project), the task id and the fix, or is skipped and listed with `on_error: skip`. What Label
Studio has besides submitted annotations is counted and reported, never silently used: cancelled (skipped)
annotations, drafts, annotations updated after they were submitted (the stored last version counts), an annotator's
several annotations of one task (the last one counts), tasks with several annotators' annotations (one judgment
each, `position` in order of submission).
"""

from __future__ import annotations

import json
import logging
import re
import urllib.parse
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from xml.sax.saxutils import quoteattr

import polars as pl

from squidflow import schemas
from squidflow.errors import UserError
from squidflow.io import md_escape, unneutralise, write_text
from squidflow.judgments.ingest import JudgmentError, split_image_id

log = logging.getLogger(__name__)

PLATFORMS = ("mturk", "label_studio")
RATING_TASKS = ("A", "B")
TASKS = ("A", "B", "K", "comparison")
LOCAL_FILES_PREFIX = "/data/local-files/?d="
IMAGE_KEY = re.compile(r"^image_([0-9]+)_id\Z")  # ASCII digits, no trailing newline: one key per slot
RATING_FROM = re.compile(r"^rating_([0-9]+)\Z")
KEYWORDS_FROM = re.compile(r"^keywords_([0-9]+)\Z")
PLAUSIBILITY_FROM = re.compile(r"^plausibility_([0-9]+)\Z")
CANDIDATE_KEY = re.compile(r"^candidate_id_([0-9]+)\Z")
EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)  # written exports' timestamps count seconds from here

RATING_INSTRUCTIONS = (
    "Please rate your % confidence that each image belongs to a video matching the event type above, from 0 to 100. "
    "Rate each image individually. 0: you are nearly certain the video does not depict the event. 1-49: the visual "
    "evidence is weak enough that another event type is likelier. 50: equally likely this event or a similar one "
    "that shares visual attributes (a birthday party and a wedding). 51-99: the event is likelier than not. 100: "
    "you are nearly certain the video depicts the event. A completely black or blank image is rated 0 to 5. "
    "Images can be clicked to enlarge them. Your ratings are checked against these guidelines."
)
KEYWORD_INSTRUCTIONS = (
    "For each image, type up to {n} keywords that describe what you see: objects, people, actions, the place, the "
    "kind of event. One or two words per box, the most important first; at least one keyword per image. If an image "
    "shows nothing you can recognise (a black or blurred frame), say so in a keyword: black, blurry."
)
LIKERT = {
    1: "irrelevant or verifiably incorrect",
    2: "statement is probably true but there is a better highlighted region to support it",
    3: "statement is probably true and the highlighted region supports it",
}
COMPARISON_INSTRUCTIONS = (
    "Each statement is an inference about the highlighted region of the image. Rate how plausible it is: "
    + "; ".join(f"{k}: {v}" for k, v in LIKERT.items()) + "."
)


# --- labeling configs --------------------------------------------------------------------------------------------
def _grid(cells: list[str]) -> str:
    return ('  <View style="display: grid; grid-template-columns: repeat(3, 1fr); gap: 1em">\n'
            + "\n".join(cells) + "\n  </View>")


def rating_config(images_per_hit: int = 6, *, required: bool = True) -> str:
    """Variants A/B: the event prompt, the instructions, and per image its picture and a 0–100 `Number`."""
    cells = [
        f'    <View style="text-align: center">\n'
        f'      <Image name="image_{i}" value="$image_{i}" maxWidth="100%" zoom="true" zoomControl="true"/>\n'
        f'      <Header value="Image {i}" size="6"/>\n'
        f'      <Number name="rating_{i}" toName="image_{i}" min="0" max="100" step="1" '
        f'required="{str(required).lower()}" requiredMessage="Rate image {i} (0-100)"/>\n'
        f"    </View>"
        for i in range(1, images_per_hit + 1)
    ]
    return ('<View>\n  <Header value="Event type: $event_prompt" size="3"/>\n'
            f"  <Text name=\"instructions\" value={quoteattr(RATING_INSTRUCTIONS)}/>\n{_grid(cells)}\n</View>\n")


def keyword_config(images_per_hit: int = 6, keywords_per_image: int = 5) -> str:
    """Task K: per image its picture and a `TextArea` taking up to `keywords_per_image` keywords."""
    cells = [
        f'    <View>\n'
        f'      <Image name="image_{i}" value="$image_{i}" maxWidth="100%" zoom="true" zoomControl="true"/>\n'
        f'      <Header value="Image {i}" size="6"/>\n'
        f'      <TextArea name="keywords_{i}" toName="image_{i}" maxSubmissions="{keywords_per_image}" rows="1" '
        f'editable="true" placeholder="a keyword, then Enter"/>\n'
        f"    </View>"
        for i in range(1, images_per_hit + 1)
    ]
    text = KEYWORD_INSTRUCTIONS.format(n=keywords_per_image)
    return ('<View>\n  <Header value="Describe each image with a few keywords" size="3"/>\n'
            f"  <Text name=\"instructions\" value={quoteattr(text)}/>\n{_grid(cells)}\n</View>\n")


def comparison_config(set_size: int = 10) -> str:
    """A comparison set: the image with its region(s) (shown as a prediction) and a 1–3 choice per inference."""
    items = []
    for i in range(1, set_size + 1):
        choices = "".join(f'<Choice value="{v}" hint={quoteattr(LIKERT[v])}/>' for v in (1, 2, 3))
        items.append(
            f'    <View style="margin: .5em 0">\n      <Text name="inference_{i}" value="$inference_{i}"/>\n'
            f'      <Choices name="plausibility_{i}" toName="image" choice="single-radio" showInline="true" '
            f'required="true">{choices}</Choices>\n    </View>'
        )
    return ('<View>\n  <Header value="How plausible is each statement about the highlighted region?" size="3"/>\n'
            f"  <Text name=\"instructions\" value={quoteattr(COMPARISON_INSTRUCTIONS)}/>\n"
            '  <Image name="image" value="$image" maxWidth="100%" zoom="true"/>\n'
            '  <RectangleLabels name="region" toName="image" showInline="true"><Label value="region" '
            'background="#E69F00"/></RectangleLabels>\n' + "\n".join(items) + "\n</View>\n")


# --- tasks -------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ImageSource:
    """How Label Studio reaches the images: `url` (`<base_url>/<video_id>/<frame_index>.jpg`) or `local_files`
    (the image file's path relative to the server's LOCAL_FILES_DOCUMENT_ROOT, served by Label Studio itself)."""

    mode: str = "url"
    base_url: str = ""
    document_root: str = "."

    def url(self, image_id: str, image_path: str | None) -> str:
        if not image_id:
            return ""
        if self.mode == "local_files":
            if not image_path:
                raise UserError(f"image {image_id}: no image file in results/dataset/frames.parquet to serve as a "
                                "local file; use annotation.label_studio.images: url")
            rel = Path(image_path).absolute().relative_to(Path(self.document_root).absolute()) \
                if Path(image_path).is_absolute() or self.document_root != "." else Path(image_path)
            return LOCAL_FILES_PREFIX + urllib.parse.quote(rel.as_posix(), safe="/")
        video, frame = split_image_id(image_id)
        return f"{self.base_url.rstrip('/')}/{video}/{frame}.jpg"


def rating_tasks(hits: pl.DataFrame, images: ImageSource, image_paths: dict[str, str]) -> list[dict]:
    """A/B/K HITs (rows of hits_<task>.csv) -> Label Studio tasks; `data.hit` = `<variant>-<hit_index>`."""
    slots = sorted(int(m.group(1)) for c in hits.columns if (m := IMAGE_KEY.match(c)))
    tasks = []
    for row in hits.iter_rows(named=True):
        variant = unneutralise(str(row["variant"]))
        data = {"hit": f"{variant}-{row['hit_index']}", "variant": variant}
        if "event" in row:
            data["event"] = unneutralise(row["event"] or "")
            data["event_prompt"] = unneutralise(row["event_prompt"] or "")
        for i in slots:
            img = unneutralise(row[f"image_{i}_id"] or "")
            data[f"image_{i}_id"] = img
            data[f"image_{i}"] = images.url(img, image_paths.get(img))
        tasks.append({"data": data})
    return tasks


def comparison_tasks(hits: pl.DataFrame, images: ImageSource | None = None) -> list[dict]:
    """Comparison-set HITs (rows of comparison_hits.csv) -> tasks; the regions come as a read-only prediction. A
    local image path becomes a local-files URL when Label Studio serves the images (`images.mode` local_files)."""
    tasks = []
    n = max((int(c.rsplit("_", 1)[1]) for c in hits.columns if c.startswith("inference_")), default=0)
    for row in hits.iter_rows(named=True):
        image = row["image"]
        if images is not None and images.mode == "local_files" and "://" not in image:
            image = LOCAL_FILES_PREFIX + urllib.parse.quote(Path(image).as_posix(), safe="/")
        data = {"hit": f"comparison-{row['query_id']}", "query_id": row["query_id"], "image": image}
        for i in range(1, n + 1):
            data[f"inference_{i}"] = row.get(f"inference_{i}") or ""
            data[f"candidate_id_{i}"] = row.get(f"candidate_id_{i}") or ""
        w, h = float(row.get("width") or 1), float(row.get("height") or 1)
        boxes = json.loads(row["bboxes"]) if row.get("bboxes") else []
        result = [
            {"id": f"r{k}", "from_name": "region", "to_name": "image", "type": "rectanglelabels",
             "original_width": int(w), "original_height": int(h),
             "value": {"x": 100 * b["left"] / w, "y": 100 * b["top"] / h, "width": 100 * b["width"] / w,
                       "height": 100 * b["height"] / h, "rotation": 0, "rectanglelabels": ["region"]}}
            for k, b in enumerate(boxes)
        ]
        tasks.append({"data": data, "predictions": [{"model_version": "sherlock-region", "result": result}]})
    return tasks


def project_title(prefix: str, task: str) -> str:
    names = {"A": "variant A (rating)", "B": "variant B (rating)", "K": "keywords (task K)",
             "comparison": "comparison sets (plausibility)"}
    return f"{prefix} {names[task]}"


def write_project(folder: str | Path, *, task: str, label_config: str, tasks: list[dict], instructions_html: str,
                  title: str) -> None:
    """One task's files to import by hand or with `squidflow label-studio push`: label_config.xml, tasks.json,
    instructions.html (the project's instructions shown to annotators) and project.json (title, task)."""
    folder = Path(folder)
    write_text(folder / "label_config.xml", label_config)
    write_text(folder / "tasks.json", json.dumps(tasks, ensure_ascii=False, indent=1) + "\n")
    write_text(folder / "instructions.html", instructions_html)
    write_text(folder / "project.json", json.dumps({"title": title, "task": task, "n_tasks": len(tasks)}, indent=1) + "\n")


def template_instructions(name: str) -> str:
    """The `<details>` instructions block of an MTurk task page (the paper's wording), as the project's HTML."""
    from importlib import resources

    page = resources.files("squidflow").joinpath(f"templates/{name}").read_text(encoding="utf-8")
    m = re.search(r"<details[^>]*>(.*?)</details>", page, re.S)
    return re.sub(r"</?summary>", "", m.group(1)).strip() + "\n" if m else ""


def build_label_studio_tasks(
    out_dir: str | Path, *, frames_path, hits: dict[str, str | Path], images: dict, images_per_hit: int,
    keywords_per_image: int = 5, project_prefix: str = "squidflow",
) -> dict[str, int]:
    """The rule's edge: hits_{A,B,K}.csv (and comparison_hits.csv) -> results/annotation/label_studio/<task>/."""
    from squidflow.io import read_csv_strings, read_parquet

    frames = read_parquet(frames_path, schemas.FRAMES) if frames_path else None
    paths = dict(frames.select("image_id", "image_path").iter_rows()) if frames is not None else {}
    source = ImageSource(mode=images.get("mode", "url"), base_url=images.get("base_url") or "",
                         document_root=images.get("document_root") or ".")
    counts = {}
    for task, hits_path in hits.items():
        df = read_csv_strings(hits_path, what=f"task {task} HITs")
        if task == "comparison":
            tasks = comparison_tasks(df, source)
            n = max((int(c.rsplit("_", 1)[1]) for c in df.columns if c.startswith("inference_")), default=1)
            config, instructions = comparison_config(n), f"<p>{COMPARISON_INSTRUCTIONS}</p>\n"
        else:
            tasks = rating_tasks(df, source, paths)
            full = all(t["data"].get(f"image_{i}_id") for t in tasks for i in range(1, images_per_hit + 1))
            if task == "K":
                config, instructions = keyword_config(images_per_hit, keywords_per_image), template_instructions("keyword_template.html")
            else:
                config, instructions = rating_config(images_per_hit, required=full), template_instructions("hit_template.html")
        write_project(Path(out_dir) / task, task=task, label_config=config, tasks=tasks, instructions_html=instructions,
                      title=project_title(project_prefix, task))
        counts[task] = len(tasks)
        log.info("task %s: %d Label Studio tasks -> %s", task, len(tasks), Path(out_dir) / task)
    return counts


# --- reading the export back -------------------------------------------------------------------------------------
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


def expected_images(tasks_json: str | Path) -> dict[str, list[str]]:
    """hit -> its image ids, from the tasks.json squidflow wrote (what was imported)."""
    try:
        tasks = json.loads(Path(tasks_json).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise JudgmentError(f"{tasks_json}: not the tasks.json squidflow wrote ({exc}). Rebuild it with rule "
                            "label_studio_tasks, or point `expected` at the file that was imported.") from None
    out: dict[str, list[str]] = {}
    for k, t in enumerate(tasks if isinstance(tasks, list) else [None]):
        data = t.get("data") if isinstance(t, dict) else None
        hit = data.get("hit") if isinstance(data, dict) else None
        if not isinstance(hit, str) or not hit or hit in out:
            why = "a duplicated" if isinstance(hit, str) and hit in out else "no"
            raise JudgmentError(f"{tasks_json}: task {k + 1} (key data.hit) has {why} HIT id: not the tasks.json "
                                "squidflow wrote. Rebuild it with rule label_studio_tasks, or point `expected` at the "
                                "file that was imported.")
        out[hit] = _images_of(data)
    return out


def _images_of(data: dict) -> list[str]:
    slots = sorted({int(m.group(1)) for k in data if (m := IMAGE_KEY.match(k))})
    return [str(data.get(f"image_{i}_id") or "") for i in slots]


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
            bad.append(f"unknown image {img!r} (not in results/dataset/frames.parquet)")
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
                isinstance(who, dict) and isinstance(who.get("email") or "", str)
                and (who.get("email") or isinstance(who.get("id"), (int, str)))):
            return f"annotation {aid}: `completed_by` {str(who)[:40]} names no user (an id or an email)"
        if not isinstance(a.get("result") or [], list):
            return f"annotation {aid}: `result` is {type(a.get('result')).__name__}, not a list"
        for r in a.get("result") or []:
            if not isinstance(r, dict) or not isinstance(r.get("value") or {}, dict):
                return f"annotation {aid}: a result is not an object with a `value` object: {str(r)[:60]}"
    return None


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
    rows, problems, seen = [], [], set()
    for k, task in enumerate(export):
        tid = _task_name(task, k)
        if why := _shape_problem(task, seen):
            problems.append(TaskProblem(where, tid, why))
            continue
        data = task["data"]
        stats.drafts += len(task.get("drafts") or [])
        bad: list[str] = []
        hit = str(data.get("hit") or f"ls-task-{tid}")
        variant = str(data.get("variant") or "")
        prompt = str(data.get("event_prompt") or "").strip()
        if variant not in RATING_TASKS:
            bad.append(f"data.variant {variant!r} is not A or B (is this an A/B rating project?)")
        if not prompt:
            bad.append("empty data.event_prompt")
        images = _images_of(data)
        if not images:
            bad.append("no data.image_<i>_id: the task was not made by squidflow (results/annotation/label_studio/)")
        if expected is not None and not bad:
            want = expected.get(hit)
            if want is None:
                bad.append(f"hit {hit!r} is not in {expected_from}: the project holds tasks squidflow did not write. "
                           f"Import {expected_from} into a fresh project")
            elif want != images:
                bad.append(f"images {images} do not match hit {hit!r} in {expected_from} ({want}): the project was "
                           f"imported from other tasks. Export the project that {expected_from} was imported into, "
                           "or re-import it")
        if images and not any(images):
            bad.append("every data.image_<i>_id is empty")
        bad += _image_problems(images, known_images)
        kept = kept_annotations(task, stats)
        if bad:  # the task's own data is wrong: its annotations are not read
            problems.append(TaskProblem(where, tid, "; ".join(dict.fromkeys(bad))))
            continue
        task_rows = []
        for position, a in enumerate(kept):
            who = annotator_of(a)
            ratings: dict[int, object] = {}
            for r in a.get("result") or []:
                m = RATING_FROM.match(str(r.get("from_name", "")))
                if m and r.get("type") == "number":
                    ratings[int(m.group(1))] = (r.get("value") or {}).get("number")
            for i, img in enumerate(images, start=1):
                if not img:
                    continue
                value = ratings.get(i)
                if value is None:
                    bad.append(f"annotation {a.get('id')} by {who}: image {i} ({img}) has no rating_{i}")
                    continue
                if (not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 100
                        or value != int(value)):  # NaN fails the range, so int() never sees NaN or inf
                    bad.append(f"annotation {a.get('id')} by {who}: rating_{i} = {value!r} for {img} is outside 0-100 "
                               "(or not a whole number)")
                    continue
                video, frame = split_image_id(img)
                task_rows.append({"video_id": video, "frame_index": frame, "event_prompt": prompt, "variant": variant,
                                  "annotator": who, "position": position, "hit": hit, "rating": int(value),
                                  "round": round_, "source": source, "_task": tid})
        if bad:
            problems.append(TaskProblem(where, tid, "; ".join(dict.fromkeys(bad))))
            continue
        rows += task_rows
    _fail(problems, on_error, "Fix the tasks in Label Studio (or the export file) and export again.")
    return _frame(rows), problems, stats


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
    try:
        data = json.loads(Path(export).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise JudgmentError(f"{where}: not a Label Studio JSON export ({exc}). Export the project with Export > JSON "
                            "(not JSON-MIN or CSV), or pull it with `squidflow label-studio pull`.") from None
    if not isinstance(data, list) or any(not isinstance(t, dict) or "data" not in t for t in data):
        raise JudgmentError(f"{where}: not a Label Studio JSON export (a list of tasks, each with `data` and "
                            "`annotations`). Export the project with Export > JSON (not JSON-MIN or CSV).")
    return data, where


def read_keyword_export(export, *, where: str | None = None, on_error: str = "stop", max_length: int = 40,
                        known_images: set[str] | None = None, round_: int = 1) -> tuple[pl.DataFrame, list[TaskProblem], ExportStats]:
    """A Label Studio export of task K -> keyword judgments (schemas.KEYWORD_JUDGMENTS, source label_studio)."""
    from squidflow.judgments.keywords import normalise_keyword

    tasks, where = _load(export, where)
    stats, rows, problems, seen = ExportStats(tasks=len(tasks)), [], [], set()
    for k, task in enumerate(tasks):
        tid, bad, found = _task_name(task, k), [], []
        if why := _shape_problem(task, seen):
            problems.append(TaskProblem(where, tid, why))
            continue
        data = task["data"]
        stats.drafts += len(task.get("drafts") or [])
        images = _images_of(data)
        if not data.get("hit"):
            bad.append("no data.hit: the task was not made by squidflow (results/annotation/label_studio/)")
        if not any(images):
            bad.append("no data.image_<i>_id: the task was not made by squidflow (results/annotation/label_studio/)")
        bad += _image_problems(images, known_images)
        kept = kept_annotations(task, stats)
        if bad:  # the task's own data is wrong: its annotations are not read
            problems.append(TaskProblem(where, tid, "; ".join(dict.fromkeys(bad))))
            continue
        for a in kept:
            who = annotator_of(a)
            given = {int(m.group(1)): (r.get("value") or {}).get("text") or []
                     for r in a.get("result") or [] if (m := KEYWORDS_FROM.match(str(r.get("from_name", ""))))}
            for i, img in enumerate(images, start=1):
                if not img:
                    continue
                if not isinstance(given.get(i, []), list) or not all(isinstance(w, str) for w in given.get(i, [])):
                    bad.append(f"annotation {a.get('id')} by {who}: keywords_{i} = {str(given[i])[:40]} is not a list "
                               "of texts")
                    continue
                words = [w for w in given.get(i, []) if w.strip()]
                if not words:
                    bad.append(f"annotation {a.get('id')} by {who}: no keyword for image {i} ({img})")
                for j, text in enumerate(words, start=1):
                    text = str(text).strip()
                    norm = normalise_keyword(text)
                    if len(text) > max_length or not norm:
                        bad.append(f"annotation {a.get('id')} by {who}: keyword {j} of image {i} = {text[:40]!r} is "
                                   f"{'longer than ' + str(max_length) + ' characters' if norm else 'without letters or digits'}")
                        continue
                    video, frame = split_image_id(img)
                    found.append({"video_id": video, "frame_index": frame, "annotator": who, "hit": str(data.get("hit")),
                                  "position": j, "keyword": text, "normalised": norm, "round": round_,
                                  "source": "label_studio"})
        if bad:
            problems.append(TaskProblem(where, tid, "; ".join(dict.fromkeys(bad))))
            continue
        rows += found
    _fail(problems, on_error, "Fix the tasks in Label Studio (or the export file) and export again.")
    df = pl.DataFrame(rows, schema=schemas.KEYWORD_JUDGMENTS.columns) if rows else schemas.empty(schemas.KEYWORD_JUDGMENTS)
    return df, problems, stats


def read_comparison_export(export, *, where: str | None = None, on_error: str = "stop") -> tuple[pl.DataFrame, list[TaskProblem], ExportStats]:
    """A Label Studio export of the comparison sets -> one row per (query, candidate, annotator): the 1–3
    plausibility (Sherlock §4.3), for crowd-kit and, two annotators wide, for `comparison.ratings`."""
    tasks, where = _load(export, where)
    stats, rows, problems, seen = ExportStats(tasks=len(tasks)), [], [], set()
    for k, task in enumerate(tasks):
        tid, bad, found = _task_name(task, k), [], []
        if why := _shape_problem(task, seen):
            problems.append(TaskProblem(where, tid, why))
            continue
        data = task["data"]
        stats.drafts += len(task.get("drafts") or [])
        n = sorted({int(m.group(1)) for k in data if (m := CANDIDATE_KEY.match(k)) and data[k]})
        if not n:
            bad.append("no data.candidate_id_<i>: the task was not made by squidflow (comparison_hits.csv)")
        if not isinstance(data.get("query_id"), str) or not data["query_id"].strip():
            bad.append(f"data.query_id {data.get('query_id')!r} is not a query id")
        bad += [f"data.candidate_id_{i} {data[f'candidate_id_{i}']!r} is not a candidate id" for i in n
                if not isinstance(data[f"candidate_id_{i}"], str)]
        kept = kept_annotations(task, stats)
        if bad:  # the task's own data is wrong: its annotations are not read
            problems.append(TaskProblem(where, tid, "; ".join(dict.fromkeys(bad))))
            continue
        for a in kept:
            who = annotator_of(a)
            chosen = {int(m.group(1)): (r.get("value") or {}).get("choices") or []
                      for r in a.get("result") or [] if (m := PLAUSIBILITY_FROM.match(str(r.get("from_name", ""))))}
            for i in n:
                c = chosen.get(i) or []
                if not isinstance(c, list) or len(c) != 1 or not isinstance(c[0], (str, int)) or isinstance(c[0], bool) \
                        or str(c[0]) not in ("1", "2", "3"):
                    bad.append(f"annotation {a.get('id')} by {who}: plausibility_{i} = {c!r} is not one of 1, 2, 3")
                    continue
                found.append({"query_id": str(data.get("query_id")), "candidate_id": str(data[f"candidate_id_{i}"]),
                              "annotator": who, "rating": int(c[0])})
        if bad:
            problems.append(TaskProblem(where, tid, "; ".join(dict.fromkeys(bad))))
            continue
        rows += found
    _fail(problems, on_error, "Fix the tasks in Label Studio (or the export file) and export again.")
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
                out.append({"query_id": qid, "candidate_id": cid, "annot1": int(r[who[0]][0]), "annot2": int(r[who[1]][0])})
    return pl.DataFrame(out, schema={"query_id": pl.Utf8, "candidate_id": pl.Utf8, "annot1": pl.Int64, "annot2": pl.Int64})


def _frame(rows: list[dict]) -> pl.DataFrame:
    cols = {**schemas.JUDGMENTS.columns, "_task": pl.Utf8, "_where": pl.Utf8}
    if not rows:
        return pl.DataFrame(schema=cols)
    return pl.DataFrame([{**r, "_task": str(r["_task"]), "_where": ""} for r in rows]).select(list(cols)).cast(cols)


def _fail(problems: list[TaskProblem], on_error: str, fix: str) -> None:
    if problems and on_error != "skip":
        shown = "\n  ".join(f"{p.where}: task {p.task}: {p.problem}" for p in problems[:10])
        more = f"\n  ... and {len(problems) - 10} more" if len(problems) > 10 else ""
        raise JudgmentError(
            f"{len(problems)} bad Label Studio task(s):\n  {shown}{more}\n{fix} Or run with "
            "--config judgments='{\"on_error\": \"skip\"}' to skip them (they are listed in "
            "results/judgments/ingest_report.md)."
        )


def annotators_in_both(df: pl.DataFrame) -> list[tuple[str, dict[str, tuple[str, str]]]]:
    """Annotators with judgments in both variants: (annotator, {variant: (where, task id)}) — the first task of each."""
    out = []
    both = df.group_by("annotator").agg(pl.col("variant").n_unique().alias("n")).filter(pl.col("n") > 1)
    for who in sorted(both["annotator"].to_list()):
        mine = df.filter(pl.col("annotator") == who)
        out.append((who, {v: (g["_where"][0], g["_task"][0]) for (v,), g in mine.group_by(["variant"], maintain_order=True)}))
    return out


def ingest_exports(
    exports: list[dict], *, on_error: str = "stop", known_images: set[str] | None = None, source: str = "label_studio",
    on_empty: str = "error",
) -> tuple[pl.DataFrame, str]:
    """Several exports (each {path | tasks + where, round, expected?}) -> judgments and the ingestion report.

    An annotator in both variants breaks the paper's disjoint groups (SQUID-E §3.2): it stops the run naming both
    projects and tasks, or with `on_error: skip` drops that annotator's judgments (listed in the report)."""
    from squidflow.errors import EmptyError

    frames, problems, stats = [], [], ExportStats()
    for e in exports:
        where = e.get("where") or str(e.get("path"))
        expected = expected_images(e["expected"]) if e.get("expected") else None
        df, probs, st = read_export(
            e.get("tasks") if e.get("tasks") is not None else e["path"], where=where, on_error=on_error,
            known_images=known_images, expected=expected, expected_from=str(e.get("expected") or "tasks.json"),
            source=source, round_=e.get("round", 1),
        )
        frames.append(df.with_columns(pl.lit(where).alias("_where")))
        problems += probs
        stats.add(st, where)
    out = pl.concat(frames) if frames else _frame([])
    dropped_annotators = []
    for who, places in annotators_in_both(out):
        shown = " and ".join(f"variant {v} in {w} (task {t})" for v, (w, t) in sorted(places.items()))
        problems.append(TaskProblem(places[min(places)][0], places[min(places)][1],
                                    f"annotator {who} worked in both variants: {shown}"))
        dropped_annotators.append(who)
    if dropped_annotators and on_error != "skip":
        p = problems[-len(dropped_annotators):]
        raise JudgmentError(
            f"{len(p)} annotator(s) worked in both variants A and B; the paper's groups are disjoint (SQUID-E §3.2):"
            "\n  " + "\n  ".join(f"{x.problem}" for x in p) + "\nRemove each from one project's members (and delete "
            "their annotations there), then export again; or run with --config judgments='{\"on_error\": \"skip\"}' "
            "to drop their judgments in both variants."
        )
    out = out.filter(~pl.col("annotator").is_in(dropped_annotators))
    judgments = out.select(list(schemas.JUDGMENTS.columns))
    report = export_report(problems, stats, len(judgments), dropped_annotators, source)
    if judgments.is_empty() and on_empty != "skip":
        raise EmptyError(
            f"no judgment was read from {', '.join(str(e.get('where') or e.get('path')) for e in exports) or 'no export'}: "
            f"{stats.tasks} task(s), {stats.annotations} annotation(s) of which {stats.cancelled} cancelled, "
            f"{len(problems)} task(s) skipped. Annotate and export again (or set `on_empty: skip`)."
        )
    return judgments, report


def export_report(problems: list[TaskProblem], stats: ExportStats, n_judgments: int, dropped: list[str],
                  source: str) -> str:
    label = " (SIMULATED panel, through the Label Studio export format)" if source == "simulated" else ""
    lines = [f"# Judgment ingestion report: Label Studio{label}", "", f"Judgments read: {n_judgments}.", "",
             "| export | tasks | annotations | cancelled (skipped) | drafts (ignored) | updated (last version counts) "
             "| superseded (an annotator's earlier annotation) | tasks with several annotators | tasks not annotated |",
             "|---|---|---|---|---|---|---|---|---|"]
    for where, s in list(stats.by_source.items()) + [("all", stats)]:
        lines.append(f"| {md_escape(where)} | {s.tasks} | {s.annotations} | {s.cancelled} | {s.drafts} | {s.updated} "
                     f"| {s.superseded} | {s.several} | {s.unannotated} |")
    lines += ["", f"Annotators dropped for working in both variants: {len(dropped)}"
              + (f" ({', '.join(md_escape(d) for d in dropped)})" if dropped else "") + ".", "",
              f"## Skipped tasks: {len(problems)}", ""]
    if problems:
        lines += ["| export | task | problem |", "|---|---|---|"]
        lines += [f"| {md_escape(p.where)} | {md_escape(p.task)} | {md_escape(p.problem)} |" for p in problems]
    return "\n".join(lines) + "\n"


# --- writing an export (the simulated panel; the release as a test of the reader) --------------------------------
def export_from_judgments(judgments: pl.DataFrame, *, images_per_hit: int = 6, first_task_id: int = 1,
                          user_ids: dict[str, int] | None = None) -> list[dict]:
    """Judgments -> a Label Studio JSON export: one task per `hit` (its images in order of first appearance, at
    most `images_per_hit`), one annotation per annotator (`completed_by` = {id, email: annotator}) in `position`
    order. What Label Studio would give back had these annotators submitted these ratings."""
    user_ids = {} if user_ids is None else user_ids
    tasks, aid = [], 0
    j = judgments.with_row_index("_order")
    for k, ((hit,), g) in enumerate(j.group_by(["hit"], maintain_order=True)):
        imgs = g.select("video_id", "frame_index").unique(maintain_order=True)
        if len(imgs) > images_per_hit:
            raise ValueError(f"hit {hit} has {len(imgs)} images, more than {images_per_hit}")
        ids = [f"{v}_{f}" for v, f in imgs.iter_rows()]
        data = {"hit": hit, "variant": g["variant"][0], "event_prompt": g["event_prompt"][0]}
        for i, img in enumerate(ids, start=1):
            data[f"image_{i}_id"] = img
            data[f"image_{i}"] = ""
        tid = first_task_id + k
        annotations = []
        for (who, _pos), a in g.sort("position", "_order").group_by(["annotator", "position"], maintain_order=True):
            aid += 1
            uid = user_ids.setdefault(who, len(user_ids) + 1)
            slot = {f"{v}_{f}": i for i, (v, f) in enumerate(zip(a["video_id"], a["frame_index"], strict=False), start=0)}
            result = [{"id": f"r{aid}_{ids.index(img) + 1}", "from_name": f"rating_{ids.index(img) + 1}",
                       "to_name": f"image_{ids.index(img) + 1}", "type": "number", "origin": "manual",
                       "value": {"number": int(a["rating"][n])}} for img, n in slot.items()]
            stamp = (EPOCH + timedelta(seconds=aid)).strftime("%Y-%m-%dT%H:%M:%S.000000Z")
            annotations.append({"id": aid, "completed_by": {"id": uid, "email": who}, "result": result,
                                "was_cancelled": False, "ground_truth": False, "created_at": stamp,
                                "updated_at": stamp, "task": tid, "lead_time": 0.0})
        tasks.append({"id": tid, "data": data, "annotations": annotations, "drafts": [], "predictions": [],
                      "meta": {}})
    return tasks


def simulated_exports(batches: dict[int, pl.DataFrame], *, images_per_hit: int = 6) -> dict[str, str]:
    """The demo: the SIMULATED panel's judgments per round (its MTurk batch results as read by
    judgments.ingest.read_mturk_batch) -> one Label Studio export's JSON text per variant and round (keys A, B,
    A_repeat, B_repeat), as Label Studio would give them back. One user id per annotator across all exports, as on one
    server."""
    users: dict[str, int] = {}
    next_task = 1
    out = {}
    for round_, judgments in sorted(batches.items()):
        for variant in RATING_TASKS:
            key = variant if round_ == 1 else f"{variant}_repeat"
            part = judgments.filter(pl.col("variant") == variant)
            export = export_from_judgments(part, images_per_hit=images_per_hit, first_task_id=next_task, user_ids=users)
            for t in export:
                t["meta"] = {"simulated": True, "note": "SIMULATED annotator panel (squidflow demo), not people"}
            next_task += len(export)
            out[key] = json.dumps(export, ensure_ascii=False) + "\n"
            log.info("SIMULATED variant %s round %d: %d tasks", variant, round_, len(export))
    return out

def ingest_exports_to(judgments_path, report_path, *, exports: list[dict], source: str, frames=None,
                      on_error: str = "stop", on_empty: str = "error") -> pl.DataFrame:
    """The rule's edge for Label Studio exports: known images from frames.parquet, ingest, write parquet + report."""
    from squidflow.io import read_parquet, write_parquet

    known = set(read_parquet(frames, schemas.FRAMES)["image_id"].to_list()) if frames else None
    df, report = ingest_exports(exports, on_error=on_error, known_images=known,
                                source="simulated" if source == "simulated" else "label_studio", on_empty=on_empty)
    write_parquet(df, judgments_path, schemas.JUDGMENTS)
    write_text(report_path, report)
    return df
