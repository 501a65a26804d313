"""Annotator quality: the "pitfalls" rubric of SQUID-E §3.2.

Disagreement is intrinsic to the task, so a careful annotator cannot be told from a careless one by distance to a
reference score. The paper instead checks for ratings that the instructions rule out, e.g. rating a completely black
image above 5%, or rating an image whose text states the event outside an expected range. Here:

- `blank`: an image whose pixels are (near) constant — black, white or one flat colour — rated above
  `blank_max_rating` under any prompt; blank images are found from the pixels, so no truth is needed.
- `control`: configured control images (image id, prompt, expected [min, max]) rated outside their range.

Each annotator gets a row with their flags; those with more than `max_violations` violations are excluded from
aggregation and agreement, and listed as excluded (never dropped silently).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
from PIL import Image

from squidflow.config.validation import defaults_from_schema
from squidflow.contracts import schemas
from squidflow.contracts.paths import job_file


@dataclass(frozen=True)
@defaults_from_schema("judgments.quality")
class QualityConfig:
    blank_max_rating: int
    blank_max_std: float  # pixel standard deviation (0-255 grey levels) below which an image is blank
    controls: list[dict]  # {image_id, event_prompt, min, max}
    max_violations: int
    exclude: str  # rubric | triage: which raters aggregation leaves out (squidflow.judgments.triage)

    @classmethod
    def from_config(cls, cfg: dict | None) -> QualityConfig:
        return cls(**(cfg or {}))


def blank_images(frames: pl.DataFrame, max_std: float, root: str | Path = ".") -> set[str]:
    """Image ids whose pixels are (near) constant: black, white, or a flat colour."""
    out = set()
    for img, path in frames.select("image_id", "image_path").iter_rows():
        p = Path(job_file(Path(root) / path))
        if not p.exists():
            continue
        with Image.open(p) as im:
            im.draft("L", (160, 120))  # JPEG: decode at reduced size, enough to tell a flat image
            pixels = np.asarray(im.convert("L"), dtype=float)
        if pixels.std() <= max_std:
            out.add(img)
    return out


def annotator_report(judgments: pl.DataFrame, cfg: QualityConfig, blank: Collection[str] = frozenset()) -> pl.DataFrame:
    """One row per annotator: judgments count, flags (one string per violated check), excluded."""
    j = judgments.with_columns((pl.col("video_id") + "_" + pl.col("frame_index").cast(pl.Utf8)).alias("image_id"))
    violations: dict[str, list[str]] = {}
    blank_hits = j.filter(pl.col("image_id").is_in(list(blank)) & (pl.col("rating") > cfg.blank_max_rating))
    for (annotator,), g in blank_hits.group_by(["annotator"], maintain_order=True):
        shown = ", ".join(f"{i}={r}" for i, r in g.select("image_id", "rating").head(5).iter_rows())
        violations.setdefault(annotator, []).append(
            f"blank: rated {len(g)} blank image(s) above {cfg.blank_max_rating} ({shown})"
        )
    for c in cfg.controls:
        lo, hi = c.get("min", 0), c.get("max", 100)
        bad = j.filter(
            (pl.col("image_id") == c["image_id"])
            & (pl.col("event_prompt") == c["event_prompt"])
            & ((pl.col("rating") < lo) | (pl.col("rating") > hi))
        )
        for annotator, rating in bad.select("annotator", "rating").iter_rows():
            violations.setdefault(annotator, []).append(
                f"control: rated {c['image_id']} for {c['event_prompt']!r} {rating}, expected {lo}-{hi}"
            )
    counts = j.group_by("annotator", maintain_order=True).len().sort("annotator")
    rows = []
    for annotator, n in counts.iter_rows():
        flags = violations.get(annotator, [])
        n_viol = sum(int(f.split(" ")[2]) if f.startswith("blank") else 1 for f in flags)
        rows.append({"annotator": annotator, "n_judgments": n, "flags": flags, "excluded": n_viol > cfg.max_violations})
    if not rows:
        return schemas.empty(schemas.ANNOTATOR_REPORT)
    return pl.DataFrame(rows, schema=schemas.ANNOTATOR_REPORT.columns)


def excluded(report: pl.DataFrame) -> list[str]:
    return report.filter(pl.col("excluded"))["annotator"].to_list()
