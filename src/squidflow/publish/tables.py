"""The rows of each published config, from squidflow's own tables (schemas.PUBLISH_*).

- `images`: one row per selected image (results/dataset/frames.parquet with its video's source and licence from the
  manifest); with the SQUID-E release's judgments and no frames, one row per rated image (video id, frame number).
- `judgments`: one row per rating (results/judgments/judgments.parquet), the annotator a pseudonym.
- `soft_labels`: one row per (image, prompt, variant) of results/judgments/image_scores.parquet, with the ratings its
  mean is of and the interval of the mean over the image's raters (config `intervals`).
- `comparison_sets`, `keywords`: the comparison stage's sets and the keyword task's keywords, as they are.

Splits are the image's split in the `datasets` library's words (train, validation, test); an image without a split
(the release's rated images, which form the test split in release mode) is `test`.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from squidflow.config.validation import ConfigError
from squidflow.contracts import schemas
from squidflow.contracts.image_ids import image_id_expr
from squidflow.statistics.intervals import IntervalConfig, item_mean_intervals
from squidflow.vocabulary.events import normalise_event, prompt_to_event
from squidflow.vocabulary.licenses import UNKNOWN, is_creative_commons
from squidflow.vocabulary.release import PROMPTS, UCF_ID, YOUTUBE_ID

SPLITS = {"train": "train", "val": "validation", "validation": "validation", "test": "test", "dev": "validation"}
SPLIT_ORDER = ("train", "validation", "test")
# Sources whose videos belong to someone else on a video site: `auto` publishes them by reference.
REFERENCE_SOURCES = frozenset({"youtube", "urls", "squid-e-release"})
YOUTUBE_URL = "https://www.youtube.com/watch?v={}"
UNKNOWN_LICENSE = UNKNOWN  # a video whose source states no licence
PROVENANCE = ("uploader", "upload_date", "retrieved_at")  # per video, from the manifest (schemas.PUBLISH_IMAGES)


def image_mode(requested: str, source_types: Iterable[str], judgment_source: str) -> str:
    """`embed` or `reference` for publish.images (auto: reference when any video comes from a video site or the
    release's judgments are published without frames)."""
    if requested != "auto":
        return requested
    if judgment_source == "release" or set(source_types) & REFERENCE_SOURCES:
        return "reference"
    return "embed"


def dataset_split(split: pl.Expr) -> pl.Expr:
    """squidflow's split names (train, val, test) -> the `datasets` library's (train, validation, test)."""
    return split.replace_strict(SPLITS, default="test", return_dtype=pl.Utf8).fill_null("test")


def _video_source(videos: pl.DataFrame | None) -> pl.DataFrame:
    """video_id -> the video's source as published (its URL, else its local path) and its licence."""
    if videos is None or videos.is_empty():
        return pl.DataFrame(
            schema={
                "video_id": pl.Utf8,
                "source": pl.Utf8,
                "license": pl.Utf8,
                "kind": pl.Utf8,
                **{c: pl.Utf8 for c in PROVENANCE},
            }
        )

    def given(column: str) -> pl.Expr:  # an empty string says nothing
        value = pl.col(column).cast(pl.Utf8)
        return pl.when(value.str.len_chars() > 0).then(value)

    # a local file is named relative to its source's root (<root>/<event>/<file>: `<event>/<file>`), a demo video by
    # its file name: the published folder never holds a path of the machine that made it
    parts = pl.col("path").cast(pl.Utf8).str.replace_all("\\", "/", literal=True).str.split("/")
    local = (
        pl.when(pl.col("source") == "local")
        .then(parts.list.slice(-2, 2).list.join("/"))
        .when(pl.col("path").cast(pl.Utf8).str.starts_with("/"))
        .then(parts.list.last())
    )
    # an object of a bucket source (s3://bucket/<root>/<event>/<file>) likewise: `<event>/<file>`, not the bucket
    stored = pl.when(pl.col("source") == "storage").then(
        pl.col("url").cast(pl.Utf8).str.split("/").list.slice(-2, 2).list.join("/")
    )
    return videos.select(
        "video_id",
        pl.coalesce(given("webpage_url"), stored, given("url"), local, given("path")).alias("source"),
        given("license").alias("license"),
        pl.col("source").alias("kind"),
        *(given(c).alias(c) if c in videos.columns else pl.lit(None, pl.Utf8).alias(c) for c in PROVENANCE),
    ).unique("video_id", keep="first", maintain_order=True)


def _release_images(judgments: pl.DataFrame, src: pl.DataFrame) -> pl.DataFrame:
    """The images of the release's judgments (no frames): the rated images, event from their variant-A prompt, split
    test, source the video's (else its YouTube URL; UCF-Crime ids: the dataset's name)."""
    to_event = prompt_to_event(PROMPTS)
    events = (
        judgments.filter(pl.col("variant") == "A")
        .group_by("video_id", "frame_index", maintain_order=True)
        .agg(pl.col("event_prompt").first())
        .with_columns(
            pl.col("event_prompt")
            .map_elements(lambda p: to_event.get(normalise_event(p)), return_dtype=pl.Utf8)
            .alias("event")
        )
    )
    out = (
        judgments.select("video_id", "frame_index")
        .unique(maintain_order=True)
        .join(
            events.select("video_id", "frame_index", "event"),
            on=["video_id", "frame_index"],
            how="left",
            maintain_order="left",
        )
        .with_columns(
            image_id_expr().alias("image_id"),
            pl.lit(None, pl.Float64).alias("timestamp_s"),
            pl.lit("test").alias("split"),
            pl.lit(None, pl.Int64).alias("cluster"),
            pl.lit(None, pl.Utf8).alias("image_path"),
        )
        .join(src, on="video_id", how="left", maintain_order="left")
    )
    vid = pl.col("video_id")
    release_url = (
        pl.when(vid.str.contains(UCF_ID.pattern))
        .then(pl.lit("UCF-Crime (Sultani et al., 2018): ") + vid)
        .when(vid.str.contains(YOUTUBE_ID.pattern))
        .then(pl.format(YOUTUBE_URL, vid))
        .otherwise(pl.lit("SQUID-E release video (an older local name; not a YouTube id): ") + vid)
    )
    return out.with_columns(
        pl.coalesce(pl.col("source"), release_url).alias("source"),
        pl.coalesce(pl.col("kind"), pl.lit("squid-e-release")).alias("kind"),
    )


def images_table(frames: pl.DataFrame | None, videos: pl.DataFrame | None, judgments: pl.DataFrame) -> pl.DataFrame:
    """One row per image (schemas.PUBLISH_IMAGES), with `kind` (the video's source type) and `image_path` beside it
    for the pixels of embed mode. Without frames (the release's judgments): the rated images, event from their
    variant-A prompt, source the YouTube URL (UCF-Crime ids: the dataset's name)."""
    src = _video_source(videos)
    if frames is not None:
        out = frames.select(
            image_id_expr().alias("image_id"),
            "video_id",
            "frame_index",
            pl.col("pts_s").alias("timestamp_s"),
            "event",
            dataset_split(pl.col("split")).alias("split"),
            "cluster",
            "image_path",
        ).join(src, on="video_id", how="left", maintain_order="left")
    else:
        out = _release_images(judgments, src)
    # the licence as the video's source states it (the demo's: squidflow's own), else unknown: never guessed
    out = out.with_columns(
        pl.coalesce(pl.col("license"), pl.lit(UNKNOWN_LICENSE)).alias("license"),
        pl.lit(None, pl.Int64).alias("faces_blurred"),
    )  # set when the JPEGs are blurred
    return out.select(*schemas.PUBLISH_IMAGES.columns, "kind", "image_path").sort("split", "image_id")


def check_embeddable(images: pl.DataFrame) -> None:
    """publish.images embed copies pixels: a frame of a video-site video that is not under a Creative Commons
    licence stops the run, naming the video."""
    licences = images["license"].unique(maintain_order=True).to_list()
    shared = [t for t in licences if is_creative_commons(t)]  # the whole statement, never a word in it (issue 44)
    foreign = images.filter(pl.col("kind").is_in(list(REFERENCE_SOURCES)) & ~pl.col("license").is_in(shared))
    if not foreign.is_empty():
        first = foreign.row(0, named=True)
        raise ConfigError(
            f"publish.images: embed would copy the pixels of {foreign['video_id'].n_unique()} videos that are not "
            f"yours to share (e.g. {first['video_id']} from {first['kind']}, licence {first['license']!r}). Set "
            "publish.images: reference (or auto), which publishes video ids and frame numbers as the SQUID-E release did."
        )


def judgments_table(judgments: pl.DataFrame, names: dict[str, str], report: pl.DataFrame | None = None) -> pl.DataFrame:
    """One row per rating (schemas.PUBLISH_JUDGMENTS), annotators replaced by their pseudonyms; an excluded rater's
    ratings stay, with `excluded` and `excluded_because` (the report's flags: the rubric's, the triage's reasons)."""
    if report is None:
        report = pl.DataFrame(schema={"annotator": pl.Utf8, "flags": pl.List(pl.Utf8), "excluded": pl.Boolean})
    why = report.filter(pl.col("excluded")).select(
        "annotator",
        pl.lit(True).alias("excluded"),
        pl.col("flags").list.join("; ").replace("", "excluded by the quality checks").alias("excluded_because"),
    )
    return (
        with_waves(judgments)
        .join(why, on="annotator", how="left", maintain_order="left")
        .select(
            image_id_expr().alias("image_id"),
            "video_id",
            "frame_index",
            pl.col("event_prompt").alias("prompt"),
            "variant",
            "round",
            pl.col("annotator").replace_strict(names, return_dtype=pl.Utf8).alias("annotator"),
            "hit",
            "position",
            "rating",
            pl.col("excluded").fill_null(False),
            "excluded_because",
            "source",
            "wave",
        )
        .sort("variant", "image_id", "prompt", "wave", "round", "hit", "position")
    )


def with_waves(judgments: pl.DataFrame) -> pl.DataFrame:
    """judgments with `wave` (`first` where an older judgments.parquet has none)."""
    if "wave" not in judgments.columns:
        return judgments.with_columns(pl.lit("first").alias("wave"))
    return judgments.with_columns(pl.col("wave").fill_null("first"))


def rated_items(judgments: pl.DataFrame, excluded: Iterable[str] = ()) -> pl.DataFrame:
    """The first-round ratings that results/judgments/image_scores.parquet averages (annotators the quality step
    excluded left out), one row per (image, prompt, variant) with `ratings` and `annotators` as lists."""
    j = judgments.filter(~pl.col("annotator").is_in(list(excluded)) & (pl.col("round") == 1))
    return (
        j.sort("hit", "position")
        .group_by("video_id", "frame_index", "event_prompt", "variant", maintain_order=True)
        .agg(pl.col("rating").alias("ratings"), pl.col("annotator").alias("annotators"), pl.col("hit").alias("hits"))
    )


def soft_labels_table(
    scores: pl.DataFrame, judgments: pl.DataFrame, excluded: Iterable[str], cfg: IntervalConfig
) -> pl.DataFrame:
    """One row per row of image_scores.parquet (schemas.PUBLISH_SOFT_LABELS)."""
    key = ["video_id", "frame_index", "event_prompt", "variant"]
    items = rated_items(judgments, excluded).select(*key, "ratings")
    out = scores.join(items, on=key, how="left", maintain_order="left").with_columns(
        pl.col("ratings").fill_null(pl.lit([], dtype=pl.List(pl.Int64)))
    )
    lo, hi = item_mean_intervals(out["ratings"].to_list(), cfg)
    # the published dataset holds only people's numbers: its columns stay `mean`, `std` (its card and Croissant file
    # name them), where squidflow's own image_scores.parquet says `people_mean`, `people_std`
    out = out.with_columns(
        pl.Series("mean_lo", lo).fill_nan(None),
        pl.Series("mean_hi", hi).fill_nan(None),
        image_id_expr().alias("image_id"),
        pl.col("event_prompt").alias("prompt"),
        pl.col("people_mean").alias("mean"),
        pl.col("people_std").alias("std"),
    )
    return out.select(list(schemas.PUBLISH_SOFT_LABELS.columns)).sort("variant", "image_id", "prompt")


def keywords_table(keywords: pl.DataFrame, names: dict[str, str]) -> pl.DataFrame:
    """One row per keyword an annotator gave an image (schemas.PUBLISH_KEYWORDS)."""
    return keywords.select(
        image_id_expr().alias("image_id"),
        "video_id",
        "frame_index",
        pl.col("annotator").replace_strict(names, return_dtype=pl.Utf8).alias("annotator"),
        "position",
        "keyword",
        "normalised",
        "round",
    ).sort("image_id", "annotator", "position")


def with_split(table: pl.DataFrame, images: pl.DataFrame) -> pl.DataFrame:
    """`table` with a `split` column: its image's split (by image_id); `test` for an image without one."""
    if "split" in table.columns:
        return table.with_columns(dataset_split(pl.col("split")).alias("split"))
    return table.join(
        images.select("image_id", "split"), on="image_id", how="left", maintain_order="left"
    ).with_columns(pl.col("split").fill_null("test"))


REBUILD_LIST = "rebuild/videos.csv"  # in a reference-mode folder: the videos as a squidflow URL list, with their frames


def rebuild_list(images: pl.DataFrame) -> pl.DataFrame:
    """The published images' videos as a URL list (schemas.URL_LIST: url, event, video_id, frames): each video's
    published `source` (a URL, or its path relative to the source's folder) and the frame numbers published of it,
    which a `urls` source extracts exactly (frames.mode exact). One row per video, in the images' order."""
    return (
        images.sort("video_id", "frame_index")
        .group_by("video_id", maintain_order=True)
        .agg(pl.col("source").first(), pl.col("event").first(), pl.col("frame_index").unique(maintain_order=True))
        .select(
            pl.col("source").alias("url"),
            "event",
            "video_id",
            pl.col("frame_index").cast(pl.List(pl.Utf8)).list.join(" ").alias("frames"),
        )
    )


def has_relative_urls(listing: pl.DataFrame) -> bool:
    """Whether a URL list names some video by a path (no scheme): its source then needs a base_url."""
    return bool((~listing["url"].str.contains(r"^[A-Za-z][A-Za-z0-9+.\-]*://")).any()) if listing.height else False
