"""One published folder from the run's tables: the configs' shards, the card, croissant.json, the LeWiDi files and
the task pages, written into a scratch folder beside the target and moved into place only once mlcroissant has
validated croissant.json and generated records of every record set (a failure names the field and leaves no folder).
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import cast

import polars as pl

from squidflow.contracts import schemas
from squidflow.contracts.io import write_csv
from squidflow.contracts.paths import job_file
from squidflow.errors import EmptyError, UserError
from squidflow.judgments.pseudonyms import pseudonyms, raw_ids_in_tables
from squidflow.judgments.waves import narrowing, narrowing_summary
from squidflow.publish import card, croissant, faces, lewidi, shards
from squidflow.publish import facts as F
from squidflow.publish import tables as T
from squidflow.publish.methods import changes as method_changes
from squidflow.statistics.intervals import IntervalConfig
from squidflow.videos.takedown import published_version, removals_by_reason

log = logging.getLogger(__name__)

TASK_PAGES = {"rating": "tasks/rating_task.html", "keyword": "tasks/keyword_task.html"}


class PublishError(UserError, ValueError):
    """A published folder that does not pass the checks the venues run."""


@dataclass
class RunTables:
    """squidflow's own tables that the dataset is made of (None: the stage did not run)."""

    judgments: pl.DataFrame
    annotator_report: pl.DataFrame
    scores: pl.DataFrame
    table7: pl.DataFrame | None = None
    frames: pl.DataFrame | None = None
    videos: pl.DataFrame | None = None
    comparison_sets: pl.DataFrame | None = None
    keywords: pl.DataFrame | None = None
    dropped_md: str = ""
    task_pages: dict[str, str] = field(default_factory=dict)  # rating | keywords -> the page's HTML
    takedowns: pl.DataFrame | None = None  # results/videos/takedown_log.csv (squidflow.videos.takedown)
    taken_down: dict = field(default_factory=dict)  # ratings and images a takedown left out (ingest_counts.json)
    methods: list = field(default_factory=list)  # the methods recorded, in order (squidflow.publish.methods)


@dataclass(frozen=True)
class RunSettings:
    """The config values a publish job depends on (the rule's params)."""

    publish: Mapping
    demo: bool
    judgment_source: str
    platform: str
    sources: list[str]
    intervals: Mapping
    frames: Mapping = field(default_factory=dict)  # n, k, backbone (empty without the frames stage)


def build_tables(run: RunTables, settings: RunSettings, mode: str) -> tuple[dict[str, pl.DataFrame], dict[str, str]]:
    """config -> its rows (with `split`), and the pseudonyms."""
    images = T.images_table(run.frames, run.videos, run.judgments)
    if mode == "embed":
        T.check_embeddable(images)
    names = pseudonyms(
        run.judgments["annotator"].to_list(), [] if run.keywords is None else run.keywords["annotator"].to_list()
    )
    excluded = run.annotator_report.filter(pl.col("excluded"))["annotator"].to_list()
    cfg = IntervalConfig.from_config(settings.intervals)
    out = {
        "images": images,
        "judgments": T.with_split(T.judgments_table(run.judgments, names, run.annotator_report), images),
        "soft_labels": T.with_split(T.soft_labels_table(run.scores, run.judgments, excluded, cfg), images),
    }
    if run.comparison_sets is not None:
        out["comparison_sets"] = T.with_split(run.comparison_sets, images)
    if run.keywords is not None:
        out["keywords"] = T.with_split(T.keywords_table(run.keywords, names), images)
    leaks = raw_ids_in_tables(out, names)
    if leaks:  # a reason written before raters were named by pseudonym, or a new text column naming one
        raise PublishError(
            f"the published tables would name raters by their platform id ({'; '.join(leaks[:5])}): nothing "
            "published names a rater but by pseudonym (Ann<k>). Run the judgments stage again (its rater triage "
            "names partner raters by pseudonym) and publish again."
        )
    return out, names


SCHEMAS = {
    "images": schemas.PUBLISH_IMAGES,
    "judgments": schemas.PUBLISH_JUDGMENTS,
    "soft_labels": schemas.PUBLISH_SOFT_LABELS,
    "comparison_sets": schemas.PUBLISH_COMPARISON_SETS,
    "keywords": schemas.PUBLISH_KEYWORDS,
}


def _image_bytes(images: pl.DataFrame) -> list[bytes]:
    out = []
    for path in images["image_path"].to_list():
        try:
            out.append(Path(job_file(path)).read_bytes())
        except (OSError, TypeError) as exc:
            raise PublishError(
                f"publish.images embed: cannot read the frame {path!r} ({exc}); rerun the frames "
                "stage (results/dataset/frames.parquet names the files) or set publish.images: reference"
            ) from None
    return out


def gather_facts(
    run: RunTables,
    settings: RunSettings,
    cfg: Mapping,
    mode: str,
    configs: Mapping[str, pl.DataFrame],
    blurred: list[int] | None = None,
    *,
    data_digest: str = "",
    rebuild: tuple[str, bool] = ("", False),
) -> F.Facts:
    """Everything the card, croissant.json and the LeWiDi files state, once: from the published tables (`configs`),
    the run's own outputs and publish.* (`cfg`). `data_digest` is the data files' (shards.digest), `rebuild` the URL
    list of reference mode and whether it names videos by relative path (T.REBUILD_LIST; empty in embed mode)."""
    source, present = F.judgment_source(run.judgments, settings.judgment_source)  # the rows say, not the config
    soft = configs.get("soft_labels", pl.DataFrame(schema={"variant": pl.Utf8, "n": pl.Int64}))
    rai = _rai(cfg, _limitations(source, present, soft, mode), blurred, mode, settings.demo, source == "simulated")
    return F.Facts(
        **_release_facts(run, cfg, configs),
        demo=settings.demo,
        judgment_source=source,
        platform=source if source in F.PLATFORMS else settings.platform,
        image_mode=mode,
        description=cfg.get("description") or _description(configs, source == "simulated"),
        **_video_facts(run, settings),
        **_judgment_facts(run, settings, cfg, configs, source, soft),
        counts={c: t.height for c, t in configs.items()},
        splits={
            c: dict(t.group_by("split", maintain_order=True).len().sort("split").iter_rows())
            for c, t in configs.items()
        },
        rai=rai,
        licences=F.images_by_licence(configs["images"]),
        data_digest=data_digest,
        rebuild_list=rebuild[0],
        rebuild_relative=rebuild[1],
    )


def _release_facts(run: RunTables, cfg: Mapping, configs: Mapping[str, pl.DataFrame]) -> dict:
    """Who publishes what, under which licence and version: publish.* and the version its data raised (a next round
    or a change of method the minor number, a removal on request the patch number)."""
    name = cfg["name"]
    changes = removals_by_reason(run.takedowns) if run.takedowns is not None and not run.takedowns.is_empty() else {}
    methods = method_changes(run.methods)
    return {
        "name": name,
        "pretty_name": cfg.get("pretty_name") or name,
        "version": published_version(
            cfg["version"], sum(changes.values()), next_rounds(configs.get("judgments")) + len(methods)
        ),
        "base_version": cfg["version"],
        "changes": changes,
        "taken_down": dict(run.taken_down or {}),
        "method_changes": methods,
        "contact": cfg.get("contact") or "",
        "license": cfg["license"],
        "license_name": cfg.get("license_name") or "",
        "license_link": cfg.get("license_link") or "",
        "citation": cfg["citation"],
        "url": cfg.get("url") or f"https://huggingface.co/datasets/{name}",
        "creators": list(cfg.get("creators") or []),
        "terms": cfg.get("terms") or "",
        "pay": cfg.get("pay") or "",
    }


def _video_facts(run: RunTables, settings: RunSettings) -> dict:
    """Where the videos came from and how frames were chosen (the manifest, frames.*, dropped_videos.md)."""
    per_status, queries, languages = F.video_summary(run.videos)
    return {
        "sources": sorted(set(settings.sources)) if run.videos is not None else ["squid-e-release (judgments only)"],
        "frames": dict(settings.frames) if run.frames is not None else {},
        "videos": per_status,
        "queries": queries,
        "languages": languages,
        "dropped": F.dropped_text(run.dropped_md) if run.dropped_md else "",
        "timeframe": F.collection_timeframe(run.videos),
    }


def _judgment_facts(
    run: RunTables, settings: RunSettings, cfg: Mapping, configs: Mapping[str, pl.DataFrame], source: str, soft
) -> dict:
    """How people judged the images and how well they agreed, from the published judgments and soft labels."""
    judgments = configs.get("judgments")
    demographics = (cfg.get("annotators") or {}).get("demographics") or (
        "none: the ratings come from a SIMULATED annotator panel, not from people"
        if source == "simulated"
        else F.NOT_COLLECTED
    )
    return {
        "images_per_hit": F.images_per_hit(run.judgments) if source != "release" else 0,
        "annotator_demographics": demographics,
        "task_wording": F.task_wording(run.task_pages.get("rating", "")),
        "task_pages": [TASK_PAGES[k] for k in run.task_pages],
        "raters": F.raters_per_image(soft),
        "precision": F.soft_label_precision(soft, judgments),
        "agreement": run.table7,
        **F.rater_facts(judgments),
        "wave_effects": wave_effects(judgments, IntervalConfig.from_config(settings.intervals)),
    }


def _limitations(source: str, present: list[str], soft: pl.DataFrame, mode: str) -> list[str]:
    """The card's and Croissant's data limitations that the run itself shows (the rest is publish.rai's)."""
    limitations = []
    if source == "simulated":
        limitations.append(
            "The judgments come from a SIMULATED annotator panel and the videos are SYNTHETIC "
            "(squidflow's offline demo): not data about people."
        )
    if not soft.is_empty():
        limitations.append(
            f"Each soft label is the mean of few ratings (median {float(cast(float, soft['n'].median())):g} per "
            "image and prompt): the interval of the mean (mean_lo, mean_hi) says how far it may be off."
        )
    if mode == "reference":
        limitations.append(
            "No pixels are published: frames are rebuilt from the source videos, and videos taken "
            "down since cannot be rebuilt."
        )
    if len(present) > 1:
        limitations.append(
            f"The ratings come from several sources ({', '.join(present)}): the `judgments` config's "
            "`source` column says which for each rating."
        )
    if source == "release":
        limitations.append(
            "The SQUID-E release names no annotator: its annotator ids are the three rating positions "
            "of a row (huj_0..huj_2), not people; a few images are rated twice in a variant."
        )
    return limitations


def _rai(
    cfg: Mapping, limitations: list[str], blurred: list[int] | None, mode: str, demo: bool, simulated: bool
) -> dict:
    """publish.rai with what the run knows added: its limitations, the faces blurred, a simulated collection, and
    how to ask for a removal."""
    rai = dict(cfg.get("rai") or {})
    rai["data_limitations"] = limitations
    face_note = faces.sensitive_note(blurred, mode=mode, demo=demo)
    if face_note:
        rai["personal_sensitive_information"] = [*(rai.get("personal_sensitive_information") or []), face_note]
    if simulated:  # the demo's videos are made by ffmpeg and its ratings by a panel model: no web, no crowd
        rai["data_collection_type"] = ["Synthetic data (squidflow's offline demo videos)", "Simulated annotations"]
    removal = F.removal_requests(cfg.get("contact") or "")
    rai["data_release_maintenance_plan"] = " ".join(x for x in (rai.get("data_release_maintenance_plan"), removal) if x)
    return rai


def _description(configs: Mapping[str, pl.DataFrame], simulated: bool) -> str:
    """The card's first paragraph when publish.description gives none: what the dataset holds, in counts."""
    judgments = configs["judgments"].height if "judgments" in configs else 0
    return (
        f"{configs['images'].height:,} images from event videos with {judgments:,} "
        + ("SIMULATED " if simulated else "human ")
        + "uncertainty judgments (0-100: how certain that the image comes from a video of the prompted event), made "
        "with squidflow (SQUID-E, Sanders et al., NeurIPS 2022 Datasets and Benchmarks)."
    )


def wave_effects(published: pl.DataFrame | None, cfg: IntervalConfig) -> list[dict]:
    """From the published `judgments` rows alone: what each next-round wave added and how the intervals of the soft
    labels it re-rated narrowed (squidflow.judgments.waves.narrowing_summary); empty with one wave."""
    if published is None or published.is_empty() or published["wave"].n_unique() < 2:
        return []
    rows = published.rename({"prompt": "event_prompt"})
    excluded = rows.filter(pl.col("excluded"))["annotator"].unique().to_list()
    return narrowing_summary(narrowing(rows, cfg, excluded), rows)


def next_rounds(published: pl.DataFrame | None) -> int:
    """The next rounds (waves after the first) whose ratings the published judgments hold: each raised the minor
    version."""
    if published is None or published.is_empty() or "wave" not in published.columns:
        return 0
    return int(published.filter(pl.col("wave") != "first")["wave"].n_unique())


def write_folder(folder: Path, run: RunTables, settings: RunSettings, cfg: Mapping, mode: str) -> F.Facts:
    """Every file of the published folder into `folder` (no checks)."""
    configs, names = build_tables(run, settings, mode)
    meta = lewidi.annotators_meta(names, (cfg.get("annotators") or {}).get("meta") or {})  # refused before any write
    if configs["images"].is_empty():
        raise EmptyError(
            "nothing to publish: no image was selected or rated (results/dataset/frames.parquet, "
            "results/judgments/judgments.parquet); see results/videos/dropped_videos.md"
        )
    # a config without rows (every comparison set filtered out, a task nobody did) is left out, not published empty
    configs = {c: t for c, t in configs.items() if c == "images" or not t.is_empty()}
    max_bytes = shards.shard_size(cfg.get("shard_size"))
    pixels, blurred = None, None
    if mode == "embed":
        pixels = _image_bytes(configs["images"])
        if faces.blur_requested(cfg.get("blur_faces"), mode=mode, demo=settings.demo):
            pixels, blurred = faces.blur_all(pixels)  # the published copy only: the run's frames stay as they are
            configs["images"] = configs["images"].with_columns(pl.Series("faces_blurred", blurred, dtype=pl.Int64))
    written, feats = [], {}
    for config, table in configs.items():
        embed = config == "images" and mode == "embed"
        feats[config] = shards.features(SCHEMAS[config], image=embed)
        written += shards.write_config(folder, config, table, feats[config], max_bytes, pixels if embed else None)
    rebuild = ("", False)
    if mode == "reference" and run.frames is not None:  # the card's recipe reads the videos and frames from it
        rebuild = _write_rebuild_list(folder, configs["images"])
    facts = gather_facts(
        run, settings, cfg, mode, configs, blurred, data_digest=shards.digest(written), rebuild=rebuild
    )
    (folder / "README.md").write_text(card.card(facts), encoding="utf-8")
    (folder / "croissant.json").write_text(
        json.dumps(croissant.metadata_json(facts, written, feats), indent=2, ensure_ascii=False, default=str) + "\n",
        encoding="utf-8",
    )
    _write_lewidi(folder / "lewidi", facts.name, run, names, configs["images"], meta)
    for kind, page in run.task_pages.items():
        target = folder / TASK_PAGES[kind]
        target.parent.mkdir(exist_ok=True)
        target.write_text(page, encoding="utf-8")
    return facts


def _write_rebuild_list(folder: Path, images: pl.DataFrame) -> tuple[str, bool]:
    """Reference mode's URL list of the videos with their published frames (T.REBUILD_LIST), which the card's recipe
    reads; returns its path in the folder and whether it names videos by relative path (a base_url is needed)."""
    listing = T.rebuild_list(images)
    (folder / T.REBUILD_LIST).parent.mkdir(exist_ok=True)
    write_csv(listing, folder / T.REBUILD_LIST)
    return T.REBUILD_LIST, T.has_relative_urls(listing)


def _write_lewidi(
    folder: Path, name: str, run: RunTables, names: dict[str, str], images: pl.DataFrame, meta: dict
) -> None:
    """The judgments in the LeWiDi 2025 format: one file per variant and split, and the annotators' metadata."""
    folder.mkdir(exist_ok=True)
    splits = dict(zip(images["image_id"].to_list(), images["split"].to_list(), strict=True))
    excluded = run.annotator_report.filter(pl.col("excluded"))["annotator"].to_list()
    for variant, by_split in lewidi.items(T.rated_items(run.judgments, excluded), names, splits).items():
        for split, items in by_split.items():
            (folder / f"{name}_{variant}_{split}.json").write_text(
                json.dumps(items, indent=1, ensure_ascii=False) + "\n"
            )
    (folder / f"{name}_annotators_meta.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n")


def publish(target: str | Path, run: RunTables, settings: RunSettings) -> F.Facts:
    """Write results/publish/<name>/ (`target`) and check it with mlcroissant; the folder appears only when it passes."""
    cfg = F.required(settings.publish, demo=settings.demo)
    if settings.judgment_source == "release" and "rating" not in run.task_pages:
        # the release's task, as squidflow's task page reproduces it (SQUID-E §3.2, supplement B)
        page = resources.files("squidflow").joinpath("templates/hit_template.html").read_text(encoding="utf-8")
        run.task_pages = {**run.task_pages, "rating": page}
    mode = T.image_mode(cfg["images"], settings.sources, settings.judgment_source)
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_scratch(target)
    scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        facts = write_folder(scratch, run, settings, cfg, mode)
        problems = croissant.check(scratch / "croissant.json")
        if problems:
            raise PublishError(
                "the published dataset does not pass mlcroissant's checks:\n"
                + "\n".join(p.replace(str(scratch), str(target)) for p in problems)
            )
        if target.exists():
            shutil.rmtree(target)
        scratch.chmod(0o777 & ~_umask())
        scratch.rename(target)
    finally:
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)
    return facts


def _remove_stale_scratch(target: Path) -> None:
    """Remove the scratch folders (`.<name>.<8 random characters>/`, tempfile.mkdtemp's) that a publish job killed
    before its `finally` left beside `target`: Snakemake runs one job per output at a time, so none is in use."""
    stale = re.compile(rf"\.{re.escape(target.name)}\.[A-Za-z0-9_]{{8}}")
    for path in target.parent.iterdir():
        if stale.fullmatch(path.name) and path.is_dir() and not path.is_symlink():
            log.warning("removing %s, left by a publish job that was killed", path)
            shutil.rmtree(path, ignore_errors=True)


def _umask() -> int:
    from squidflow.contracts.io import current_umask

    return current_umask()
