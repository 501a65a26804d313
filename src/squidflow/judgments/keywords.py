"""The keyword task (variant K): people's free-text keywords for each image — the gold of the text baselines.

"Apples to Oranges" shows that how gold annotations are collected decides what a keyword system's scores mean; the
UNT dataset it studies asks several people for keywords per image and scores systems against the multiset of their
answers (squidflow.text.semeval). Variant K uses the HIT machinery of variants A and B (squidflow.judgments.annotation):
images interleaved across videos into HITs of `images_per_hit`, an MTurk batch input CSV written through the one
neutralising writer, and a task page (`templates/keyword_template.html`) with one panel per image and up to N text
boxes under it (no event prompt: people describe what they see, unprimed).

Reading the batch results back uses the rating ingestion's rules (squidflow.judgments.ingest): rejected assignments
are dropped and counted; a bad row is an error naming the file, the CSV line and the problem — an image without any
keyword, a keyword longer than `max_length`, a keyword with no letters or digits once markup is removed, an unknown
image, the same worker twice on an image — or, with `on_error: skip`, is skipped and listed in the report. The raw
keyword is kept as typed (a formula or markup a worker typed is data, never run: every CSV goes through the
neutralising writer, every Markdown/HTML output escapes it) and its `normalised` form is NFKC, lowercase, markup and
character references removed, leading formula characters dropped, spaces collapsed.

For the offline demo a SIMULATED panel answers the task (squidflow.demo.keyword_panel).
"""

from __future__ import annotations

import html
import logging
import re
import unicodedata
from importlib import resources
from pathlib import Path

import numpy as np
import polars as pl

from squidflow.contracts import schemas
from squidflow.contracts.io import FORMULA_START, unneutralise
from squidflow.contracts.paths import KEYWORD_HITS
from squidflow.judgments.annotation import _chunks, _interleave_by_video, mturk_value, render_task_page
from squidflow.judgments.ingest import (
    JudgmentError,
    Problem,
    dropped_markdown,
    fail_on_problems,
    images_in_slots,
    missing_ids,
    open_mturk_batch,
)

log = logging.getLogger(__name__)

VARIANT = "K"
KEYWORD_COL = re.compile(r"^Answer\.keyword_(\d+)_(\d+)$")
MARKUP = re.compile(r"<[^<>]*>")
EDGE = re.compile(r"^[\s\"'`.,;:!?*_~]+|[\s\"'`.,;:!?*_~]+$")  # surrounding quotes and sentence punctuation
MTURK_REQUIRED = ["HITId", "WorkerId", "AssignmentStatus"]


# --- the task ----------------------------------------------------------------------------------------------------
def make_keyword_hits(
    frames: pl.DataFrame, *, images_per_hit: int = 6, base_url: str = "../dataset/images", seed: int = 0
) -> pl.DataFrame:
    """One row per HIT: hit_index, variant (K), image_{i}_id, image_{i}_url; every frame once, consecutive images
    from different videos (so one HIT rarely shows two frames of a video)."""
    rng = np.random.default_rng([seed, ord(VARIANT)])
    ordered = _interleave_by_video(frames, rng)
    path_of = {
        img: mturk_value(f"{base_url.rstrip('/')}/{vid}/{fi}.jpg")
        for img, vid, fi in frames.select("image_id", "video_id", "frame_index").iter_rows()
    }
    rows = []
    for k, chunk in enumerate(_chunks(ordered, images_per_hit)):
        row = {"hit_index": k, "variant": VARIANT}
        for i in range(images_per_hit):
            img = chunk[i] if i < len(chunk) else ""
            row[f"image_{i + 1}_id"] = img
            row[f"image_{i + 1}_url"] = path_of.get(img, "")
        rows.append(row)
    return pl.DataFrame(rows)


def keyword_template(*, images_per_hit: int = 6, keywords_per_image: int = 5, max_length: int = 40) -> str:
    """The MTurk page with `images_per_hit` panels of `keywords_per_image` boxes (`${...}` left for MTurk)."""
    page = resources.files("squidflow").joinpath("templates/keyword_template.html").read_text(encoding="utf-8")
    panels = []
    for i in range(1, images_per_hit + 1):
        boxes = "\n".join(
            f'        <input type="text" name="keyword_{i}_{j}" id="keyword_{i}_{j}" maxlength="{max_length}" '
            f'autocomplete="off" placeholder="keyword {j}" aria-label="image {i}, keyword {j}">'
            for j in range(1, keywords_per_image + 1)
        )
        panels.append(
            f'      <figure class="item" data-slot="{i}">\n'
            f'        <img src="${{image_{i}_url}}" alt="image {i}" data-image-id="${{image_{i}_id}}" onclick="enlarge(this)">\n'
            f"        <figcaption>Image {i}</figcaption>\n{boxes}\n      </figure>"
        )
    return page.replace("{{PANELS}}", "\n".join(panels)).replace("{{N}}", str(keywords_per_image))


def keyword_tasks(
    frames: pl.DataFrame,
    *,
    images_per_hit: int,
    image_base_url: str,
    seed: int,
    keywords_per_image: int,
    max_length: int,
) -> tuple[pl.DataFrame, str, str]:
    """frames -> the keyword HITs (hits_K.csv), the keyword task page, and a preview of its first HIT."""
    hits = make_keyword_hits(frames, images_per_hit=images_per_hit, base_url=image_base_url, seed=seed)
    template = keyword_template(
        images_per_hit=images_per_hit, keywords_per_image=keywords_per_image, max_length=max_length
    )
    return hits, template, render_task_page(template, hits.row(0, named=True) if hits.height else {})


# --- reading the answers -----------------------------------------------------------------------------------------
def normalise_keyword(text: str) -> str:
    """The form keywords are compared in: character references resolved, markup removed, NFKC, lowercase, leading
    formula characters and surrounding punctuation dropped, whitespace collapsed ("" when nothing is left)."""
    t = html.unescape(unneutralise(str(text).strip()))
    t = MARKUP.sub(" ", t)
    t = unicodedata.normalize("NFKC", t).lower()
    t = " ".join(t.split())
    while t.startswith(FORMULA_START + ("'",)):
        t = t[1:].lstrip()
    return EDGE.sub("", t)


def _slots(columns: list[str]) -> dict[int, list[int]]:
    """image slot -> its keyword boxes, from the batch's Answer.keyword_<i>_<j> columns."""
    boxes: dict[int, list[int]] = {}
    for c in columns:
        if m := KEYWORD_COL.match(c):
            boxes.setdefault(int(m.group(1)), []).append(int(m.group(2)))
    return {i: sorted(js) for i, js in boxes.items()}


def _require_boxes(path: Path, raw: pl.DataFrame, images: list[int], boxes: dict[int, list[int]]) -> None:
    """Every image slot the batch fills has keyword boxes; a batch without them is another task's (an error naming it)."""
    no_boxes = [
        i for i in images if i not in boxes and raw[f"Input.image_{i}_id"].fill_null("").str.strip_chars().ne("").any()
    ]
    if no_boxes:
        raise JudgmentError(
            f"{path}: no Answer.keyword_<i>_<j> columns for image slot(s) {no_boxes}; is this the keyword task's batch "
            "(results/annotation/keyword_template.html)? Rating batches (variants A, B) go in judgments.batches."
        )


def _slot_keywords(
    rec: dict, i: int, img: str, boxes: list[int], max_length: int, bad: list[str]
) -> list[tuple[int, str, str]]:
    """(box, keyword as typed, normalised) for image slot `i` of one assignment; each bad keyword, and a slot with
    none, is added to `bad` in words."""
    found, given = [], 0
    for j in boxes:
        text = unneutralise((rec.get(f"Answer.keyword_{i}_{j}") or "").strip())
        if not text:
            continue
        given += 1
        if len(text) > max_length:
            bad.append(
                f"Answer.keyword_{i}_{j} is {len(text)} characters long (at most {max_length}: "
                "text.gold.max_length; keywords are words, not sentences)"
            )
            continue
        norm = normalise_keyword(text)
        if not norm:
            bad.append(f"Answer.keyword_{i}_{j} = {text[:40]!r} has no letters or digits once markup is removed")
            continue
        found.append((j, text, norm))
    if not given:
        bad.append(f"Answer.keyword_{i}_1..{max(boxes or [0])} are all empty: no keyword for image {img}")
    return found


def read_keyword_batch(
    path: str | Path,
    *,
    on_error: str = "stop",
    known_images: set[str] | None = None,
    max_length: int = 40,
    source: str = "mturk",
    round_: int = 1,
) -> tuple[pl.DataFrame, list[Problem], int]:
    """An MTurk batch-results CSV of the keyword task -> keyword judgments, the skipped rows, the rejected count."""
    path = Path(path)
    raw, images = open_mturk_batch(path, MTURK_REQUIRED, KEYWORD_HITS)
    boxes = _slots(raw.columns)
    _require_boxes(path, raw, images, boxes)
    rows, problems, rejected = [], [], 0
    seen: dict[tuple, int] = {}
    for rec in raw.iter_rows(named=True):
        line = rec["_line"]
        if (rec["AssignmentStatus"] or "").strip() == "Rejected":
            rejected += 1
            continue
        worker, hit = (rec["WorkerId"] or "").strip(), (rec["HITId"] or "").strip()
        variant = (rec.get("Input.variant") or VARIANT).strip()
        bad, found = missing_ids(worker, hit), []
        if variant != VARIANT:
            bad.append(f"Input.variant {variant!r} is not K: a rating batch belongs in judgments.batches")
        for i, img, vid, frame in images_in_slots(rec, images, known_images, bad):
            if (worker, img) in seen:
                bad.append(f"duplicate: worker {worker} already gave keywords for {img} (line {seen[(worker, img)]})")
                continue
            found += [
                ((worker, img), vid, frame, *k) for k in _slot_keywords(rec, i, img, boxes.get(i, []), max_length, bad)
            ]
        if bad:
            problems.append(Problem(str(path), line, "; ".join(bad)))
            continue
        for key, vid, frame, j, text, norm in found:
            seen[key] = line
            rows.append(
                {
                    "video_id": vid,
                    "frame_index": frame,
                    "annotator": worker,
                    "hit": hit,
                    "position": j,
                    "keyword": text,
                    "normalised": norm,
                    "round": round_,
                    "source": source,
                }
            )
    fail_on_problems(problems, on_error, "Fix or remove these rows in the keyword batch-results CSV.")
    df = (
        pl.DataFrame(rows, schema=schemas.KEYWORD_JUDGMENTS.columns)
        if rows
        else schemas.empty(schemas.KEYWORD_JUDGMENTS)
    )
    return df, problems, rejected


def keyword_report(problems: list[Problem], rejected: dict[str, int], df: pl.DataFrame) -> str:
    """Markdown listing what keyword ingestion kept and dropped (data escaped: keywords are typed by strangers)."""
    n_images = df.select("video_id", "frame_index").n_unique() if df.height else 0
    lines = [
        "# Keyword ingestion report (variant K)",
        "",
        f"Keywords read: {df.height}, for {n_images} images from {df['annotator'].n_unique() if df.height else 0} annotators.",
        "",
    ]
    return "\n".join(lines + dropped_markdown(problems, rejected)) + "\n"


def keyword_judgments(
    batches: list[dict], *, known_images: set[str] | None, on_error: str, max_length: int, source: str
) -> tuple[pl.DataFrame, str]:
    """Keyword batch-results CSVs (each {path, round}; read here, so an error names the file and line) -> the keyword
    judgments (schemas.KEYWORD_JUDGMENTS) and the Markdown report of what was kept and dropped."""
    parts, problems, rejected = [], [], {}
    for batch in batches:
        df, probs, n_rej = read_keyword_batch(
            batch["path"],
            on_error=on_error,
            known_images=known_images,
            max_length=max_length,
            source=source,
            round_=batch.get("round", 1),
        )
        parts.append(df)
        problems += probs
        if n_rej:
            rejected[str(batch["path"])] = n_rej
    out = pl.concat(parts) if parts else schemas.empty(schemas.KEYWORD_JUDGMENTS)
    dup = out.filter(pl.struct("annotator", "video_id", "frame_index", "round", "position").is_duplicated())
    if dup.height:
        first = dup.row(0, named=True)
        raise JudgmentError(
            f"{dup.height} duplicate keyword rows across batch files, e.g. annotator {first['annotator']} on "
            f"{first['video_id']}_{first['frame_index']} in round {first['round']}. Ingest each batch once; mark a "
            "repeat task with `round: 2` in text.gold.batches."
        )
    if out.height == 0:
        raise JudgmentError(
            "no keyword read from "
            + (", ".join(str(b["path"]) for b in batches) or "no batch (text.gold.batches is empty)")
            + "".join(f"; {p.file} line {p.row}: {p.problem}" for p in problems[:3])
        )
    return out, keyword_report(problems, rejected, out)
