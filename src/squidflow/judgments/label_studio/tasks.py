"""The annotation tasks on a self-hosted Label Studio, and judgments written in its JSON export format.

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

`export_from_judgments` writes judgments as the JSON export Label Studio would give back had these annotators
submitted them: the demo's SIMULATED panel (`squidflow.demo.label_studio`), and the release as a test of the reader. An export
is read by `squidflow.judgments.label_studio.export`; a run's exports are ingested by
`squidflow.judgments.label_studio.run_exports`.
"""

from __future__ import annotations

import json
import logging
import re
import urllib.parse
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from xml.sax.saxutils import quoteattr

import polars as pl

from squidflow.contracts import schemas
from squidflow.contracts.io import unneutralise, write_text
from squidflow.errors import UserError
from squidflow.judgments.ingest import split_image_id

log = logging.getLogger(__name__)

PLATFORMS = ("mturk", "label_studio")
RATING_TASKS = ("A", "B")
TASKS = ("A", "B", "K", "comparison")  # and each next round's A_round<k>, B_round<k> (rule next_round, k >= 2)
TASK_NAME = re.compile(r"^(?:A|B|K|comparison|[AB]_round(?:[2-9]|[1-9][0-9]+))\Z")


def is_task(name: str) -> bool:
    """A Label Studio task (project) squidflow writes: A, B, K, comparison, or a next round's A_round<k>, B_round<k>."""
    return isinstance(name, str) and TASK_NAME.match(name) is not None


def task_order(name: str) -> tuple:
    """Tasks in the order they are written: round 1's A, B, then K, comparison, then round 2's, round 3's, ..."""
    m = re.match(r"^([AB])_round([0-9]+)\Z", name)
    return (int(m.group(2)), m.group(1)) if m else (1, TASKS.index(name) if name in TASKS else len(TASKS))


LOCAL_FILES_PREFIX = "/data/local-files/?d="
IMAGE_KEY = re.compile(r"^image_([0-9]+)_id\Z")  # ASCII digits, no trailing newline: one key per slot
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
    + "; ".join(f"{k}: {v}" for k, v in LIKERT.items())
    + "."
)


# --- labeling configs --------------------------------------------------------------------------------------------
def _grid(cells: list[str]) -> str:
    return (
        '  <View style="display: grid; grid-template-columns: repeat(3, 1fr); gap: 1em">\n'
        + "\n".join(cells)
        + "\n  </View>"
    )


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
    return (
        '<View>\n  <Header value="Event type: $event_prompt" size="3"/>\n'
        f'  <Text name="instructions" value={quoteattr(RATING_INSTRUCTIONS)}/>\n{_grid(cells)}\n</View>\n'
    )


def keyword_config(images_per_hit: int = 6, keywords_per_image: int = 5) -> str:
    """Task K: per image its picture and a `TextArea` taking up to `keywords_per_image` keywords."""
    cells = [
        f"    <View>\n"
        f'      <Image name="image_{i}" value="$image_{i}" maxWidth="100%" zoom="true" zoomControl="true"/>\n'
        f'      <Header value="Image {i}" size="6"/>\n'
        f'      <TextArea name="keywords_{i}" toName="image_{i}" maxSubmissions="{keywords_per_image}" rows="1" '
        f'editable="true" placeholder="a keyword, then Enter"/>\n'
        f"    </View>"
        for i in range(1, images_per_hit + 1)
    ]
    text = KEYWORD_INSTRUCTIONS.format(n=keywords_per_image)
    return (
        '<View>\n  <Header value="Describe each image with a few keywords" size="3"/>\n'
        f'  <Text name="instructions" value={quoteattr(text)}/>\n{_grid(cells)}\n</View>\n'
    )


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
    return (
        '<View>\n  <Header value="How plausible is each statement about the highlighted region?" size="3"/>\n'
        f'  <Text name="instructions" value={quoteattr(COMPARISON_INSTRUCTIONS)}/>\n'
        '  <Image name="image" value="$image" maxWidth="100%" zoom="true"/>\n'
        '  <RectangleLabels name="region" toName="image" showInline="true"><Label value="region" '
        'background="#E69F00"/></RectangleLabels>\n' + "\n".join(items) + "\n</View>\n"
    )


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
                raise UserError(
                    f"image {image_id}: no image file in results/dataset/frames.parquet to serve as a "
                    "local file; use annotation.label_studio.images: url"
                )
            return self.local_file(image_path)
        video, frame = split_image_id(image_id)
        return f"{self.base_url.rstrip('/')}/{video}/{frame}.jpg"

    def local_file(self, image_path: str) -> str:
        """The local-files URL of an image file: its path relative to `document_root` (a relative path is the run
        folder's, the working directory of the rule and of `squidflow label-studio`)."""
        rel = (
            Path(image_path).absolute().relative_to(Path(self.document_root).absolute())
            if Path(image_path).is_absolute() or self.document_root != "."
            else Path(image_path)
        )
        return LOCAL_FILES_PREFIX + urllib.parse.quote(rel.as_posix(), safe="/")


def rating_tasks(
    hits: pl.DataFrame, images: ImageSource, image_paths: dict[str, str], *, hit_prefix: str = ""
) -> list[dict]:
    """A/B/K HITs (rows of hits_<task>.csv) -> Label Studio tasks; `data.hit` = `<variant>-<hit_index>`, or
    `<hit_prefix>-<hit_index>` (a next round's task, A_round2-0: its pages are not round 1's)."""
    slots = sorted(int(m.group(1)) for c in hits.columns if (m := IMAGE_KEY.match(c)))
    tasks = []
    for row in hits.iter_rows(named=True):
        variant = unneutralise(str(row["variant"]))
        data = {"hit": f"{hit_prefix or variant}-{row['hit_index']}", "variant": variant}
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
            image = images.local_file(image)
        data = {"hit": f"comparison-{row['query_id']}", "query_id": row["query_id"], "image": image}
        for i in range(1, n + 1):
            data[f"inference_{i}"] = row.get(f"inference_{i}") or ""
            data[f"candidate_id_{i}"] = row.get(f"candidate_id_{i}") or ""
        w, h = float(row.get("width") or 1), float(row.get("height") or 1)
        boxes = json.loads(row["bboxes"]) if row.get("bboxes") else []
        result = [
            {
                "id": f"r{k}",
                "from_name": "region",
                "to_name": "image",
                "type": "rectanglelabels",
                "original_width": int(w),
                "original_height": int(h),
                "value": {
                    "x": 100 * b["left"] / w,
                    "y": 100 * b["top"] / h,
                    "width": 100 * b["width"] / w,
                    "height": 100 * b["height"] / h,
                    "rotation": 0,
                    "rectanglelabels": ["region"],
                },
            }
            for k, b in enumerate(boxes)
        ]
        tasks.append({"data": data, "predictions": [{"model_version": "sherlock-region", "result": result}]})
    return tasks


def project_title(prefix: str, task: str) -> str:
    names = {
        "A": "variant A (rating)",
        "B": "variant B (rating)",
        "K": "keywords (task K)",
        "comparison": "comparison sets (plausibility)",
    }
    m = re.match(r"^([AB])_round([0-9]+)\Z", task)
    return f"{prefix} {names[m.group(1)]}, round {m.group(2)}" if m else f"{prefix} {names[task]}"


def write_project(
    folder: str | Path, *, task: str, label_config: str, tasks: list[dict], instructions_html: str, title: str
) -> None:
    """One task's files to import by hand or with `squidflow label-studio push`: label_config.xml, tasks.json,
    instructions.html (the project's instructions shown to annotators) and project.json (title, task)."""
    folder = Path(folder)
    write_text(folder / "label_config.xml", label_config)
    write_text(folder / "tasks.json", json.dumps(tasks, ensure_ascii=False, indent=1) + "\n")
    write_text(folder / "instructions.html", instructions_html)
    write_text(
        folder / "project.json", json.dumps({"title": title, "task": task, "n_tasks": len(tasks)}, indent=1) + "\n"
    )


def template_instructions(name: str) -> str:
    """The `<details>` instructions block of an MTurk task page (the paper's wording), as the project's HTML."""
    from importlib import resources

    page = resources.files("squidflow").joinpath(f"templates/{name}").read_text(encoding="utf-8")
    m = re.search(r"<details[^>]*>(.*?)</details>", page, re.S)
    return re.sub(r"</?summary>", "", m.group(1)).strip() + "\n" if m else ""


def build_label_studio_tasks(
    out_dir: str | Path,
    *,
    frames_path: str | Path,
    hits: dict[str, str | Path],
    images: dict,
    images_per_hit: int,
    keywords_per_image: int = 5,
    project_prefix: str = "squidflow",
) -> dict[str, int]:
    """The rule's edge: hits_{A,B,K}.csv (and comparison_hits.csv) -> results/annotation/label_studio/<task>/."""
    from squidflow.contracts.io import read_csv_strings, read_parquet

    frames = read_parquet(frames_path, schemas.FRAMES) if frames_path else None
    paths = dict(frames.select("image_id", "image_path").iter_rows()) if frames is not None else {}
    source = ImageSource(
        mode=images.get("mode", "url"),
        base_url=images.get("base_url") or "",
        document_root=images.get("document_root") or ".",
    )
    counts = {}
    for task, hits_path in hits.items():
        df = read_csv_strings(hits_path, what=f"task {task} HITs")
        if task == "comparison":
            tasks = comparison_tasks(df, source)
            n = max((int(c.rsplit("_", 1)[1]) for c in df.columns if c.startswith("inference_")), default=1)
            config, instructions = comparison_config(n), f"<p>{COMPARISON_INSTRUCTIONS}</p>\n"
        else:
            tasks = rating_tasks(df, source, paths, hit_prefix=task if "_round" in task else "")
            full = all(t["data"].get(f"image_{i}_id") for t in tasks for i in range(1, images_per_hit + 1))
            if task == "K":
                config, instructions = (
                    keyword_config(images_per_hit, keywords_per_image),
                    template_instructions("keyword_template.html"),
                )
            else:
                config, instructions = (
                    rating_config(images_per_hit, required=full),
                    template_instructions("hit_template.html"),
                )
        write_project(
            Path(out_dir) / task,
            task=task,
            label_config=config,
            tasks=tasks,
            instructions_html=instructions,
            title=project_title(project_prefix, task),
        )
        counts[task] = len(tasks)
        log.info("task %s: %d Label Studio tasks -> %s", task, len(tasks), Path(out_dir) / task)
    return counts


# --- writing an export (the demo's simulated panel; the release as a test of the reader) --------------------------------
def export_from_judgments(
    judgments: pl.DataFrame, *, images_per_hit: int = 6, first_task_id: int = 1, user_ids: dict[str, int] | None = None
) -> list[dict]:
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
            slot = {
                f"{v}_{f}": i for i, (v, f) in enumerate(zip(a["video_id"], a["frame_index"], strict=False), start=0)
            }
            result = [
                {
                    "id": f"r{aid}_{ids.index(img) + 1}",
                    "from_name": f"rating_{ids.index(img) + 1}",
                    "to_name": f"image_{ids.index(img) + 1}",
                    "type": "number",
                    "origin": "manual",
                    "value": {"number": int(a["rating"][n])},
                }
                for img, n in slot.items()
            ]
            stamp = (EPOCH + timedelta(seconds=aid)).strftime("%Y-%m-%dT%H:%M:%S.000000Z")
            annotations.append(
                {
                    "id": aid,
                    "completed_by": {"id": uid, "email": who},
                    "result": result,
                    "was_cancelled": False,
                    "ground_truth": False,
                    "created_at": stamp,
                    "updated_at": stamp,
                    "task": tid,
                    "lead_time": 0.0,
                }
            )
        tasks.append({"id": tid, "data": data, "annotations": annotations, "drafts": [], "predictions": [], "meta": {}})
    return tasks
