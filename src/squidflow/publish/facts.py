"""What the card, croissant.json and the LeWiDi files say about the dataset, gathered once from the run's own outputs
and its config: who made it and under which licence (publish.*), where the videos came from (the manifest), how
frames were chosen, how people judged them, and how well they agreed (Table 7 with its intervals).
"""

from __future__ import annotations

import datetime as dt
import html
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import polars as pl

from squidflow.config import own_data
from squidflow.config.validation import ConfigError
from squidflow.contracts.paths import job_file
from squidflow.vocabulary import licenses
from squidflow.vocabulary.licenses import DEMO_LICENSE

DEMO_NAME = "squidflow-demo"
SQUID_E_CITATION = """@inproceedings{sanders2022ambiguous,
  title     = {Ambiguous Images With Human Judgments for Robust Visual Event Classification},
  author    = {Sanders, Kate and Kriz, Reno and Liu, Anqi and Van Durme, Benjamin},
  booktitle = {Advances in Neural Information Processing Systems (NeurIPS), Datasets and Benchmarks Track},
  year      = {2022}
}"""
PLATFORMS = {"mturk": "Amazon Mechanical Turk", "label_studio": "Label Studio"}
NOT_COLLECTED = "not collected: the annotators' demographics were not collected"


@dataclass(frozen=True)
class Facts:
    """Everything the card and croissant.json state; every number comes from the run's files. Built once, by
    squidflow.publish.dataset.gather_facts, and read by the card's template, croissant.json and the LeWiDi files."""

    name: str
    pretty_name: str
    version: str
    license: str
    citation: str
    url: str
    description: str
    creators: list[str]
    demo: bool
    judgment_source: str  # simulated | mturk | label_studio | release
    platform: str
    image_mode: str
    sources: list[str]
    terms: str
    pay: str
    annotator_demographics: str
    frames: dict = field(default_factory=dict)  # backbone, k, n
    videos: pl.DataFrame | None = None  # per event and status: n
    queries: list[str] = field(default_factory=list)
    languages: list[str] = field(default_factory=list)
    dropped: str = ""  # dropped_videos.md, its title removed
    timeframe: tuple[dt.datetime, dt.datetime] | None = None
    task_wording: str = ""
    task_pages: list[str] = field(default_factory=list)  # relative to the dataset folder
    raters: dict = field(default_factory=dict)  # variant -> (min, median, max) raters per image
    agreement: pl.DataFrame | None = None  # Table 7: variant, alpha, alpha_lo, alpha_hi, spearman, ...
    counts: dict = field(default_factory=dict)  # config -> rows
    splits: dict = field(default_factory=dict)  # config -> {split: rows}
    rai: dict = field(default_factory=dict)
    excluded: list = field(default_factory=list)  # (pseudonym, why) of each rater left out of soft labels and Table 7
    annotators: int = 0  # raters in the judgments config
    waves: dict = field(default_factory=dict)  # wave -> ratings it added (first, round2, ...)
    method_changes: list = field(default_factory=list)  # per change of method, the keys it changed (publish.methods)
    license_name: str = ""  # publish.license other: the licence's short id and the URL of its text
    license_link: str = ""
    licences: dict = field(default_factory=dict)  # the videos' licence as stated -> published images
    base_version: str = ""  # publish.version; `version` is it raised by the removals on request
    changes: dict = field(default_factory=dict)  # takedown reason -> videos removed (never their ids)
    taken_down: dict = field(default_factory=dict)  # {"ratings", "images"} the removals left out (never an id)
    images_per_hit: int = 0  # the most images a variant-A task page showed (0: unknown, the release's rows)
    data_digest: str = ""  # sha256 over the data files' sha256 (squidflow.publish.shards.digest): `publish check`
    contact: str = ""  # publish.contact: where removals are asked for
    rebuild_list: str = ""  # reference mode: the URL list of the videos with their frames (REBUILD_LIST), else ""
    rebuild_relative: bool = False  # some of its URLs are paths relative to the videos' folder (a base_url is needed)
    wave_effects: list = field(default_factory=list)  # per next-round wave: squidflow.judgments.waves.narrowing_summary
    precision: dict = field(
        default_factory=dict
    )  # soft_label_precision: how wide their intervals are, from how many ratings

    @property
    def license_url(self) -> str:
        """Croissant's licence: the SPDX page of the Hub id (squidflow.vocabulary.licenses), or `other`'s license_link."""
        return licenses.spdx_url(self.license, self.license_link)

    @property
    def platform_name(self) -> str:
        if self.judgment_source == "simulated":
            return f"a SIMULATED annotator panel (squidflow.demo), answering through the {PLATFORMS.get(self.platform, self.platform)} task format"
        if self.judgment_source == "release":
            return "Amazon Mechanical Turk (the SQUID-E release's judgments)"
        return PLATFORMS.get(self.platform, self.platform)


def required(publish: Mapping, *, demo: bool) -> dict:
    """publish.name, license and citation, the demo's defaults filled in; outside the demo an empty one stops the run
    with the key to fill."""
    out = dict(publish)
    url = str(out.get("url") or "")
    if url and not re.fullmatch(r"https?://[^\s<>\"]+", url):  # the schema's pattern, for a config that skipped it
        raise ConfigError(
            f"publish.url = {url[:80]!r} is not an http(s) address: set the dataset's page (e.g. "
            "https://huggingface.co/datasets/<name>) or leave it empty."
        )
    link = str(out.get("license_link") or "")
    if link and not re.fullmatch(r"https://[^\s<>\"'`\\]+", link):  # the schema's pattern (issue 57)
        raise ConfigError(
            f"publish.license_link = {link[:80]!r} is not an https address: give the address of the licence's text "
            "(e.g. https://example.org/my-licence-1.0), or leave it empty with a Hub licence id in publish.license."
        )
    if demo:
        out["name"] = out.get("name") or DEMO_NAME
        out["license"] = out.get("license") or DEMO_LICENSE
        out["citation"] = out.get("citation") or (
            "@misc{squidflow_demo,\n  title = {squidflow offline demo dataset (synthetic videos, SIMULATED judgments)},\n"
            "  note  = {Made by the squidflow workflow's offline demo; not data about people}\n}"
        )
        return out
    problems = own_data.publish_problems({"stages": ["publish"], "publish": out, "judgments": {"source": "mturk"}})
    if problems:  # every empty key at once, and a licence that is not a Hub id (check-config says the same)
        raise ConfigError("\n".join(problems))
    return out


ROW_SOURCES = {"squid-e-release": "release"}  # judgments.parquet's source -> the card's judgment source


def judgment_source(judgments: pl.DataFrame, configured: str) -> tuple[str, list[str]]:
    """Where the published ratings came from, read from the rows, not from the config: `simulated` when a single row
    is SIMULATED, else the rows' one source (the configured one when they carry none), and every source present."""
    present = sorted({ROW_SOURCES.get(s, s) for s in judgments["source"].drop_nulls().unique().to_list()})
    if "simulated" in present:
        return "simulated", present
    return (present[0] if len(present) == 1 else configured), present


def images_per_hit(judgments: pl.DataFrame | None) -> int:
    """The most images one variant-A task page (HIT) showed, from the ratings (the settings actually used)."""
    if judgments is None or judgments.is_empty() or "hit" not in judgments.columns:
        return 0
    a = judgments.filter(pl.col("variant") == "A")
    if a.is_empty():
        return 0
    per_hit = a.group_by("hit").agg(pl.struct("video_id", "frame_index").n_unique().alias("n"))
    most = per_hit["n"].max()
    return int(most) if isinstance(most, int) else 0


def rater_facts(judgments: pl.DataFrame | None) -> dict:
    """From the published `judgments` rows: the raters excluded and why, how many raters, ratings per wave."""
    if judgments is None or judgments.is_empty():
        return {}
    gone = (
        judgments.filter(pl.col("excluded"))
        .group_by("annotator", maintain_order=True)
        .agg(pl.col("excluded_because").first())
        .sort("annotator")
    )
    waves = judgments.group_by("wave", maintain_order=True).len().sort("wave")
    order = sorted(waves.iter_rows(), key=lambda r: (r[0] != "first", r[0]))
    return {"excluded": list(gone.iter_rows()), "annotators": judgments["annotator"].n_unique(), "waves": dict(order)}


def task_wording(template: str) -> str:
    """The instructions' first paragraph of the annotation task page (the wording annotators read), as text."""
    m = re.search(r"<summary><strong>Instructions</strong></summary>\s*<p>(.*?)</p>", template, flags=re.S)
    text = re.sub(r"<[^>]+>", "", m.group(1)) if m else ""
    return " ".join(html.unescape(text).split())


def collection_timeframe(videos: pl.DataFrame | None) -> tuple[dt.datetime, dt.datetime] | None:
    """When the videos were fetched: the first and last modification time of the ok videos' files (acquisition
    writes each file once; a local source's files keep their own times). None when no file is there."""
    if videos is None or videos.is_empty():
        return None
    times = []
    for p in videos.filter(pl.col("status") == "ok")["path"].drop_nulls().to_list():
        try:
            times.append(Path(job_file(p)).stat().st_mtime)
        except OSError:
            continue
    if not times:
        return None
    utc = dt.timezone.utc
    return (
        dt.datetime.fromtimestamp(min(times), utc).replace(microsecond=0),
        dt.datetime.fromtimestamp(max(times), utc).replace(microsecond=0),
    )


def video_summary(videos: pl.DataFrame | None) -> tuple[pl.DataFrame | None, list[str], list[str]]:
    """Videos per event and status; the search queries; the languages."""
    if videos is None or videos.is_empty():
        return None, [], []
    per = videos.group_by("event", "status", maintain_order=True).len("videos").sort("event", "status")
    queries = sorted({q for q in videos["query"].drop_nulls().to_list() if q})
    languages = sorted({q for q in videos["language"].drop_nulls().to_list() if q})
    return per, queries, languages


def dropped_text(markdown: str) -> str:
    """dropped_videos.md without its title, its headings one level down (the card's own sections are level 2)."""
    lines = [ln for ln in markdown.splitlines() if not ln.startswith("# ")]
    return "\n".join(("##" + ln) if ln.startswith("#") else ln for ln in lines).strip()


def raters_per_image(soft_labels: pl.DataFrame) -> dict:
    """variant -> (min, median, max) of the ratings an image's soft label is of."""
    out = {}
    for (variant,), g in soft_labels.group_by("variant", maintain_order=True):
        n = g["n"]
        out[variant] = (int(cast(int, n.min())), float(cast(float, n.median())), int(cast(int, n.max())))
    return dict(sorted(out.items()))


def soft_label_precision(soft_labels: pl.DataFrame, judgments: pl.DataFrame | None) -> dict:
    """How precisely the soft labels are known (issue 59): the median and 90th percentile width of their intervals of
    the mean (`mean_lo`, `mean_hi`), how many have none (fewer than two ratings), and the ratings that took (every
    published rating, excluded raters' included, and the kept ones)."""
    if soft_labels.is_empty():
        return {}
    width = (soft_labels["mean_hi"] - soft_labels["mean_lo"]).drop_nulls().drop_nans()
    out: dict[str, float] = {"labels": soft_labels.height, "without": soft_labels.height - len(width)}
    if len(width):
        out |= {"median": float(cast(float, width.median())), "p90": float(cast(float, width.quantile(0.9)))}
    if judgments is not None:
        out |= {"ratings": judgments.height, "kept": int((~judgments["excluded"]).sum())}
    return out


def images_by_licence(images: pl.DataFrame) -> dict[str, int]:
    """The published images per licence of their video (as its source states it), most images first."""
    counts = images.group_by("license").len().sort(["len", "license"], descending=[True, False])
    return {str(k): int(n) for k, n in counts.iter_rows()}


def removal_requests(contact: str) -> str:
    """How to ask for a removal (the card's "Removal requests" and Croissant's rai:dataReleaseMaintenancePlan)."""
    who = f"write to {contact}" if contact else "contact the dataset's creators (no contact was given: publish.contact)"
    return (
        f"To ask for a video or an image to be removed, {who}, naming its video_id or image_id. Removals are "
        "applied by rebuilding the dataset without the video (squidflow's `takedown:` list) and published as a "
        "new version whose card counts them by reason."
    )
