"""The two image pools of SQUID-E §5 and the training/evaluation sets each experiment draws from them.

- SE: the selected ambiguous frames (results/dataset/frames.parquet), labelled with their video's event.
- SD: standard "high-certainty" images. At paper scale they come from `standard_data.path` (a folder
  `<root>/<event>/*.jpg` or a Parquet file with image_path and event, optionally split); in the demo they are the
  clean frames of the demo videos: frames where one event's visible evidence is at least
  `standard_data.min_evidence` (0.95), labelled with that event and decoded straight from the video.

`classification_sets` (§5.1, Table 1) and `calibration_sets` (§5.3, Tables 3 and 9) pick rows by a fixed data seed,
so every training seed of an experiment sees the same images and only the model's randomness varies.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import polars as pl

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".bmp")


def _norm(text: str) -> str:
    return " ".join(text.lower().replace("_", " ").replace("-", " ").split())


def prompt_to_event(events: dict | None, candidates: list[str]) -> dict[str, str]:
    """Map every spelling of an event a judgment may carry (id, id with spaces, its `prompt`) to the event id."""
    mapping = {}
    for event in candidates:
        mapping[_norm(event)] = event
        prompt = ((events or {}).get(event) or {}).get("prompt")
        if prompt:
            mapping[_norm(prompt)] = event
    return mapping


def _hash_split(key: str, val_fraction: float) -> str:
    """A stable train/val split from a hash of `key` (the same on every machine and run)."""
    h = int(hashlib.sha1(key.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "val" if h < val_fraction else "train"


def se_pool(frames: pl.DataFrame) -> pl.DataFrame:
    """The SE pool: one row per selected frame, its JPEG as source."""
    return frames.select(
        "image_id",
        pl.lit("SE").alias("pool"),
        "event",
        "split",
        "video_id",
        pl.col("image_path").alias("source_path"),
        pl.lit(None, dtype=pl.Int64).alias("frame_index"),
    ).sort("image_id")


def _cap_per_event(df: pl.DataFrame, per_event: int | None, seed: int) -> pl.DataFrame:
    if not per_event:
        return df
    parts = []
    for (_event, _split), group in df.sort("image_id").group_by(["event", "split"], maintain_order=True):
        parts.append(group if len(group) <= per_event else group.sample(per_event, seed=seed).sort("image_id"))
    return pl.concat(parts) if parts else df


def sd_pool_from_demo(
    truth: pl.DataFrame,
    videos: pl.DataFrame,
    frames: pl.DataFrame,
    *,
    events: list[str],
    min_evidence: float = 0.95,
    frame_step: int = 1,
    max_per_event: int | None = None,
    val_fraction: float = 0.2,
    seed: int = 0,
) -> pl.DataFrame:
    """Clean frames of the demo videos: one event's evidence >= `min_evidence`, labelled with that event.

    Frames that are also selected SE frames are left out, so no image is in both pools. A video keeps the split the
    frames stage gave its SE frames (so SD validation frames come from videos SE does not train on); a video without
    SE frames gets a hashed split.
    """
    ok = videos.filter(pl.col("status") == "ok").select("video_id", pl.col("path").alias("source_path"))
    video_split = (
        frames.group_by("video_id").agg(pl.col("split").mode().sort().first().alias("split"))
        if len(frames) else pl.DataFrame(schema={"video_id": pl.Utf8, "split": pl.Utf8})
    )
    clean = (
        truth.filter(pl.col("frame_index") % max(frame_step, 1) == 0)
        .select("video_id", "frame_index", "evidence")
        .explode("evidence")
        .with_columns(
            pl.col("evidence").struct.field("event").alias("event"),
            pl.col("evidence").struct.field("weight").alias("weight"),
        )
    )
    clean = (
        clean.filter((pl.col("weight") >= min_evidence) & pl.col("event").is_in(events))
        .with_columns(pl.format("{}_{}", "video_id", "frame_index").alias("image_id"))
        .filter(~pl.col("image_id").is_in(frames["image_id"].implode()))
        .unique(["image_id"], keep="first")
        .join(ok, on="video_id", how="inner")
        .join(video_split, on="video_id", how="left")
    )
    clean = clean.with_columns(
        pl.when(pl.col("split").is_null())
        .then(pl.col("video_id").map_elements(lambda v: _hash_split(v, val_fraction), return_dtype=pl.Utf8))
        .otherwise(pl.col("split"))
        .alias("split")
    )
    out = clean.select(
        "image_id", pl.lit("SD").alias("pool"), "event", "split", "video_id", "source_path", "frame_index"
    ).sort("video_id", "frame_index")
    return _cap_per_event(out, max_per_event, seed).sort("video_id", "frame_index")


def sd_pool_from_standard_data(
    path: str | Path,
    *,
    events: list[str],
    max_per_event: int | None = None,
    val_fraction: float = 0.2,
    seed: int = 0,
) -> pl.DataFrame:
    """Standard images from a folder `<root>/<event>/*.jpg` or a Parquet file (image_path, event[, split])."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(
            f"standard_data.path = {str(path)!r} does not exist: put the standard images under {path}/<event>/*.jpg "
            f"for the events {events} (e.g. subsets of Visual Genome, WIDER, USED, UCLA Protest), or point it at a "
            "Parquet file with image_path and event; leave it empty to use the demo videos' clean frames"
        )
    if path.is_dir():
        rows = [
            {"source_path": str(p), "event": event_dir.name}
            for event_dir in sorted(path.iterdir()) if event_dir.is_dir()
            for p in sorted(event_dir.rglob("*")) if p.suffix.lower() in IMAGE_SUFFIXES
        ]
        df = pl.DataFrame(rows, schema={"source_path": pl.Utf8, "event": pl.Utf8})
    elif path.suffix == ".parquet":
        df = pl.read_parquet(path)
        missing = {"image_path", "event"} - set(df.columns)
        if missing:
            raise ValueError(f"{path}: standard_data Parquet needs columns image_path and event; missing {sorted(missing)}")
        df = df.rename({"image_path": "source_path"})
        base = path.parent
        df = df.with_columns(
            pl.col("source_path").map_elements(lambda p: p if Path(p).is_absolute() else str(base / p), return_dtype=pl.Utf8)
        )
    else:
        raise ValueError(f"standard_data.path = {str(path)!r}: expected a folder <root>/<event>/*.jpg or a .parquet file")
    df = df.filter(pl.col("event").is_in(events))
    found = set(df["event"].unique())
    if not set(events) <= found:
        raise ValueError(f"{path}: no standard images for event(s) {sorted(set(events) - found)}; "
                         f"add {path}/<event>/*.jpg or rows with that event")
    if "split" not in df.columns:
        df = df.with_columns(
            pl.col("source_path").map_elements(lambda p: _hash_split(p, val_fraction), return_dtype=pl.Utf8).alias("split")
        )
    df = df.with_columns(
        pl.col("source_path").map_elements(lambda p: "sd_" + hashlib.sha1(p.encode()).hexdigest()[:12], return_dtype=pl.Utf8)
        .alias("image_id"),
        pl.lit("SD").alias("pool"),
        pl.lit(None, dtype=pl.Utf8).alias("video_id"),
        pl.lit(None, dtype=pl.Int64).alias("frame_index"),
    )
    out = df.select("image_id", "pool", "event", "split", "video_id", "source_path", "frame_index").sort("image_id")
    return _cap_per_event(out, max_per_event, seed)


# --- experiment sets -------------------------------------------------------------------------------------------


def _sample(df: pl.DataFrame, n: int, seed: int, what: str) -> pl.DataFrame:
    df = df.sort("image_id")
    if len(df) < n:
        log.warning("%s: wanted %d images, only %d exist; using all of them", what, n, len(df))
        return df
    return df.sample(n, seed=seed).sort("image_id") if len(df) > n else df


def human_means(scores: pl.DataFrame, *, variant: str, events: dict | None, candidates: list[str]) -> pl.DataFrame:
    """image_id, prompt_event, human_mean for judgments of `variant` whose prompt names one of `candidates`."""
    mapping = prompt_to_event(events, candidates)
    return (
        scores.filter(pl.col("variant") == variant)
        .with_columns(
            pl.col("event_prompt").map_elements(lambda p: mapping.get(_norm(p)), return_dtype=pl.Utf8).alias("prompt_event"),
            pl.format("{}_{}", "video_id", "frame_index").alias("image_id"),
        )
        .filter(pl.col("prompt_event").is_not_null())
        .select("image_id", "prompt_event", pl.col("mean").cast(pl.Float64).alias("human_mean"))
        .unique(["image_id", "prompt_event"], keep="first")
    )


def _rows(df: pl.DataFrame, use: str, dataset: str, label: pl.Expr, human: bool = False) -> pl.DataFrame:
    return df.select(
        "image_id",
        "pool",
        "row",
        pl.lit(use).alias("use"),
        pl.lit(dataset).alias("dataset"),
        "event",
        label.cast(pl.Int64).alias("label"),
        (pl.col("human_mean") if human else pl.lit(None, dtype=pl.Float64)).alias("human_mean"),
    )


def classification_sets(
    sd: pl.DataFrame,
    se: pl.DataFrame,
    scores: pl.DataFrame,
    *,
    events: list[str],
    event_info: dict | None = None,
    train_per_event: int | None = None,
    sd_val_per_event: int | None = None,
    seed: int = 0,
) -> pl.DataFrame:
    """§5.1: 4-way classification. Both training sets get the same number of images per event (the smaller pool's
    count, or `train_per_event`); SE evaluation images are the non-training frames with a variant A judgment of their
    own event (for the certainty bins); SD evaluation images are SD validation images."""
    label = pl.col("event").replace_strict({e: i for i, e in enumerate(events)}, return_dtype=pl.Int64)
    sd, se = sd.filter(pl.col("event").is_in(events)), se.filter(pl.col("event").is_in(events))
    sd_train, se_train = sd.filter(pl.col("split") == "train"), se.filter(pl.col("split") == "train")
    n = min(
        min(len(sd_train.filter(pl.col("event") == e)) for e in events),
        min(len(se_train.filter(pl.col("event") == e)) for e in events),
    )
    if train_per_event:
        n = min(n, train_per_event)
    if n == 0:
        raise ValueError(f"classification: no training images for some event of {events} in SD or SE (split=train); "
                         "check results/dataset/frames.parquet splits and standard_data")
    parts = []
    for e in events:
        parts.append(_rows(_sample(sd_train.filter(pl.col("event") == e), n, seed, f"SD train {e}"), "train", "SD", label))
        parts.append(_rows(_sample(se_train.filter(pl.col("event") == e), n, seed, f"SE train {e}"), "train", "SE", label))
        sd_val = sd.filter((pl.col("split") != "train") & (pl.col("event") == e))
        if sd_val_per_event:
            sd_val = _sample(sd_val, sd_val_per_event, seed, f"SD val {e}")
        parts.append(_rows(sd_val, "eval", "SD", label))
    judged = human_means(scores, variant="A", events=event_info, candidates=events)
    se_eval = (
        se.filter(pl.col("split") != "train")
        .join(judged, left_on=["image_id", "event"], right_on=["image_id", "prompt_event"], how="inner")
    )
    if len(se_eval) == 0:
        raise ValueError("classification: no SE evaluation frame (split val/test) has a variant A judgment of its own "
                         "event in results/judgments/image_scores.parquet; Table 1's certainty bins need them")
    parts.append(_rows(se_eval, "eval", "SE", label, human=True))
    return pl.concat(parts)


def calibration_sets(
    sd: pl.DataFrame,
    se: pl.DataFrame,
    scores: pl.DataFrame,
    *,
    events: list[str],
    target: str,
    similar: str,
    event_info: dict | None = None,
    train_target: int = 480,
    train_other: int = 480,
    val_target: int = 120,
    val_similar: int = 120,
    seed: int = 0,
) -> pl.DataFrame:
    """§5.3: "target event or not". Each training set: `train_target` target images and `train_other` split evenly over
    the other events; evaluation: `val_target` target and `val_similar` similar-event images. SE evaluation images
    are variant B images judged for the target prompt (both positive and negative judgments exist)."""
    if target not in events or similar not in events or target == similar:
        raise ValueError(f"training.calibration: target {target!r} and similar {similar!r} must be two of {events}")
    label = (pl.col("event") == target).cast(pl.Int64)
    others = [e for e in events if e != target]
    per_other = train_other // len(others)
    parts = []
    for name, pool in (("SD", sd), ("SE", se)):
        train = pool.filter(pl.col("split") == "train")
        parts.append(_rows(_sample(train.filter(pl.col("event") == target), train_target, seed, f"{name} train {target}"),
                           "train", name, label))
        for e in others:
            parts.append(_rows(_sample(train.filter(pl.col("event") == e), per_other, seed, f"{name} train {e}"),
                               "train", name, label))
    sd_val = sd.filter(pl.col("split") != "train")
    parts.append(_rows(_sample(sd_val.filter(pl.col("event") == target), val_target, seed, "SD val target"), "eval", "SD", label))
    parts.append(_rows(_sample(sd_val.filter(pl.col("event") == similar), val_similar, seed, "SD val similar"), "eval", "SD", label))
    judged = human_means(scores, variant="B", events=event_info, candidates=events).filter(pl.col("prompt_event") == target)
    se_val = se.filter(pl.col("split") != "train").join(judged.drop("prompt_event"), on="image_id", how="inner")
    if len(se_val) == 0:
        raise ValueError(f"calibration: no SE frame outside the training split has a variant B judgment for the target "
                         f"event {target!r} in results/judgments/image_scores.parquet; Tables 3 and 9 need them")
    for e, n in ((target, val_target), (similar, val_similar)):
        parts.append(_rows(_sample(se_val.filter(pl.col("event") == e), n, seed, f"SE val {e}"), "eval", "SE", label, human=True))
    return pl.concat(parts)


# --- entry points for the rules --------------------------------------------------------------------------------


def pool_images(pool: str, inputs: dict[str, pl.DataFrame], standard_data: dict, training: dict) -> pl.DataFrame:
    """The images of pool SE (selected frames) or SD (standard_data.path, else the demo videos' clean frames)."""
    events = list(training["classification"]["events"])
    frames = inputs["frames"]
    if pool == "SE":
        return se_pool(frames)
    if standard_data.get("path"):
        return sd_pool_from_standard_data(
            standard_data["path"], events=events, max_per_event=standard_data.get("max_per_event"),
            val_fraction=standard_data.get("val_fraction", 0.2), seed=training.get("data_seed", 0),
        )
    if "truth" not in inputs:
        raise ValueError("standard_data.path is empty, so SD images are the demo videos' clean frames, but "
                         "results/videos/demo/truth.parquet is not an input; set standard_data.path for non-demo sources")
    return sd_pool_from_demo(
        inputs["truth"], inputs["videos"], frames, events=events,
        min_evidence=standard_data.get("min_evidence", 0.95), frame_step=standard_data.get("frame_step", 1),
        max_per_event=standard_data.get("max_per_event"), val_fraction=standard_data.get("val_fraction", 0.2),
        seed=training.get("data_seed", 0),
    )


def experiment_sets(
    experiment: str, sd: pl.DataFrame, se: pl.DataFrame, scores: pl.DataFrame, training: dict, events: dict | None
) -> pl.DataFrame:
    """The TRAINING_SETS rows of `experiment` (classification = §5.1, calibration = §5.3) from the cached pools."""
    seed = training.get("data_seed", 0)
    if experiment == "classification":
        c = training["classification"]
        return classification_sets(
            sd, se, scores, events=list(c["events"]), event_info=events, train_per_event=c.get("train_per_event"),
            sd_val_per_event=c.get("sd_val_per_event"), seed=seed,
        )
    if experiment == "calibration":
        c = training["calibration"]
        return calibration_sets(
            sd, se, scores, events=list(training["classification"]["events"]), target=c["target_event"],
            similar=c["similar_event"], event_info=events, train_target=c["train_target"], train_other=c["train_other"],
            val_target=c["val_target"], val_similar=c["val_similar"], seed=seed,
        )
    raise ValueError(f"unknown experiment {experiment!r}; expected classification or calibration")
