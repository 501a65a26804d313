"""The SQUID-E authors' own image sets of Tables 1 and 3, mapped from the release's random file names to frames.

The release ships its experiment sets (`experiments/indices/`): `indices.json` lists the images of the Table 1
experiment (§5.1: 1,200 training and 1,200 rated evaluation images of birthday, parade, protest and wedding),
`indices_uq.json` those of Table 3 per target event (§5.3: 960 training and 200 evaluation images), and
`labels_{all,var_a,var_b}.json` say for each image file its video, event, whether it is a train or eval image, and
its ratings. The file names (8 random characters + `.png`) cannot be regenerated, so they are mapped:

- an eval image by its video and ratings: the variant A ratings of its own event and the variant B ratings under
  the variant B prompt must equal a row of `huj_annotations.csv` for the same video (`match` = `ratings`). Two
  images of one video that carry identical ratings and match the same two frames are paired in file-name order and
  marked `tied ratings` (their means, the only thing the experiments read, are the same either way).
- a train image by its video only (`frame_index` null, `match` = `video`): each train video of the release lists
  exactly its six frames of `dataset.csv`, but which file is which frame is not recorded.
- a video id that `dataset.csv` does not know (the release renamed some videos: numeric COVID-test ids, truncated
  local file names) is resolved through the ratings of its eval images, which match a row of a known video of the
  same event (`ratings (renamed video)`, and `video (renamed)` for the train images of that video); otherwise the
  image keeps the release's id and says `video (unresolved rename)` / `unmatched`.

`leaks` counts what the released Table 3 sets share between training and evaluation: rated eval images used for
training, and evaluation images whose video also gives training images.
"""

from __future__ import annotations

import json
import logging
from collections import Counter, defaultdict
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from squidflow.vocabulary.release import EVENTS_BY_PROMPT, read_dataset_csv

log = logging.getLogger(__name__)

EXPERIMENT_FILES = ("indices.json", "indices_uq.json", "labels_all.json", "labels_var_a.json", "labels_var_b.json")
# `match` values, from the most to the least exact
MATCHES = (
    "ratings",
    "tied ratings",
    "ratings (renamed video)",
    "video",
    "video (renamed)",
    "video (unresolved rename)",
    "unmatched",
)


def experiment_file_sources(source: str) -> dict[str, str]:
    """The five files of the release's `experiments/indices/` folder, as URLs or local paths under `source`."""
    base = str(source).rstrip("/")
    return {name: f"{base}/{name}" for name in EXPERIMENT_FILES}


def read_experiment_files(paths: Mapping[str, str | Path]) -> dict[str, dict]:
    """Parse the five JSON files; an unreadable or misshapen file is named with what was expected."""
    out = {}
    for name in EXPERIMENT_FILES:
        path = paths.get(name)
        if path is None:
            raise FileNotFoundError(
                f"the SQUID-E experiment file {name} is missing; squid_e_release.experiments must "
                f"name the release's experiments/indices folder (URL or local copy)"
            )
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(
                f"{path}: cannot read the SQUID-E experiment file {name}: {exc}; point "
                "squid_e_release.experiments at the release's experiments/indices folder"
            ) from exc
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a JSON object (the release's {name}), found {type(data).__name__}")
        out[name] = data
    return out


def _event_of_prompt(prompt: str) -> str:
    """A prompt as the label files write it (an event id, or the annotators' wording) -> the release event id."""
    return EVENTS_BY_PROMPT.get(prompt, prompt)


def image_table(labels_all: dict, labels_var_a: dict, where: str = "labels_all.json") -> pl.DataFrame:
    """One row per released image: image, release_video, event, data_type, ratings_a, prompt_b, ratings_b.

    labels_all holds, per prompt, every rating of the image: the variant A ratings (own event) followed by the
    variant B ratings when variant B asked about the same event, else the variant B ratings under the other prompt.
    labels_var_a holds the variant A ratings alone, which tells the two apart.
    """
    rows = []
    for image, rec in labels_all.items():
        try:
            vid, event, data_type = str(rec["vid_id"]), str(rec["event"]), str(rec["data_type"])
        except (KeyError, TypeError) as exc:
            raise ValueError(
                f"{where}: image {image!r} lacks vid_id/event/data_type ({exc}); is this the release's labels_all.json?"
            ) from exc
        ratings_a: list[int] = []
        prompt_b: str | None = None
        ratings_b: list[int] = []
        if data_type == "eval":
            ratings_a = [int(r) for r in ((labels_var_a.get(image) or {}).get("huj_data") or [])]
            by_prompt = {_event_of_prompt(p): [int(r) for r in rs] for p, rs in (rec.get("huj_data") or {}).items()}
            rest = {}
            for p, rs in by_prompt.items():
                if p == event and rs[: len(ratings_a)] == ratings_a:
                    rs = rs[len(ratings_a) :]
                if rs:
                    rest[p] = rs
            if len(rest) == 1:
                ((prompt_b, ratings_b),) = rest.items()
        rows.append(
            {
                "image": image,
                "release_video": vid,
                "event": event,
                "data_type": data_type,
                "ratings_a": ratings_a,
                "prompt_b": prompt_b,
                "ratings_b": ratings_b,
            }
        )
    return pl.DataFrame(
        rows,
        schema={
            "image": pl.Utf8,
            "release_video": pl.Utf8,
            "event": pl.Utf8,
            "data_type": pl.Utf8,
            "ratings_a": pl.List(pl.Int64),
            "prompt_b": pl.Utf8,
            "ratings_b": pl.List(pl.Int64),
        },
    )


def judged_rows(judgments: pl.DataFrame) -> pl.DataFrame:
    """Release judgments (schemas.JUDGMENTS, one row per rating) -> one row per CSV row: video_id, frame_index,
    variant, prompt_event (release event id), ratings (in huj_0..huj_2 order)."""
    return (
        judgments.sort("hit", "position")
        .group_by("hit", maintain_order=True)
        .agg(
            pl.col("video_id").first(),
            pl.col("frame_index").first(),
            pl.col("variant").first(),
            pl.col("event_prompt").first(),
            pl.col("rating").alias("ratings"),
        )
        .with_columns(pl.col("event_prompt").replace(EVENTS_BY_PROMPT).alias("prompt_event"))
        .select("video_id", "frame_index", "variant", "prompt_event", pl.col("ratings").cast(pl.List(pl.Int64)))
    )


def map_images(
    images: pl.DataFrame, judged: pl.DataFrame, known_videos: Mapping[str, str]
) -> tuple[pl.DataFrame, list[str]]:
    """Give every released image its video (resolved) and, for eval images, its frame; returns (map, notes).

    `known_videos`: dataset.csv's video id -> event. Output columns: image, event, data_type, video_id, frame_index,
    match, release_video.
    """
    a_rows, b_rows, by_event_a = _judged_index(judged)
    notes: list[str] = []
    resolved = _resolve_renamed(images, known_videos, by_event_a, notes)
    out = []
    candidates: dict[str, set] = {}
    for rec in images.iter_rows(named=True):
        raw = rec["release_video"]
        vid = raw if raw in known_videos else resolved.get(raw, raw)
        renamed_video = vid != raw
        if rec["data_type"] != "eval":
            match = (
                "video (renamed)" if renamed_video else "video" if vid in known_videos else "video (unresolved rename)"
            )
            out.append({**_base(rec), "video_id": vid, "frame_index": None, "match": match})
            continue
        frames = set(a_rows.get((vid, rec["event"], tuple(rec["ratings_a"])), set()))
        if rec["prompt_b"] is not None:
            frames &= b_rows.get((vid, rec["prompt_b"], tuple(rec["ratings_b"])), set())
        candidates[rec["image"]] = frames
        if len(frames) == 1:
            match = "ratings (renamed video)" if renamed_video else "ratings"
            out.append({**_base(rec), "video_id": vid, "frame_index": next(iter(frames)), "match": match})
        else:
            out.append({**_base(rec), "video_id": vid, "frame_index": None, "match": "unmatched"})
    _pair_ties(out, candidates, notes)
    unmatched = [r["image"] for r in out if r["match"] == "unmatched"]
    if unmatched:
        notes.append(
            f"{len(unmatched)} eval image(s) match no single frame by video and ratings: {', '.join(unmatched[:10])}"
        )
    table = pl.DataFrame(
        out,
        schema={
            "image": pl.Utf8,
            "event": pl.Utf8,
            "data_type": pl.Utf8,
            "release_video": pl.Utf8,
            "video_id": pl.Utf8,
            "frame_index": pl.Int64,
            "match": pl.Utf8,
        },
    )
    return table, notes


def _judged_index(judged: pl.DataFrame) -> tuple[dict[tuple, set], dict[tuple, set], dict[tuple, set]]:
    """The judged frames by (video, event, ratings) of variant A, by (video, prompt, ratings) of variant B, and
    variant A's (video, frame) by (event, ratings), which resolves renamed videos."""
    a_rows: dict[tuple, set] = defaultdict(set)  # (video, event, ratings) -> frames
    b_rows: dict[tuple, set] = defaultdict(set)  # (video, prompt, ratings) -> frames
    by_event_a: dict[tuple, set] = defaultdict(set)  # (event, ratings) -> {(video, frame)}: to resolve renamed videos
    for vid, frame, variant, prompt, ratings in judged.iter_rows():
        key = tuple(ratings)
        if variant == "A":
            a_rows[(vid, prompt, key)].add(frame)
            by_event_a[(prompt, key)].add((vid, frame))
        else:
            b_rows[(vid, prompt, key)].add(frame)
    return a_rows, b_rows, by_event_a


def _resolve_renamed(
    images: pl.DataFrame, known_videos: Mapping[str, str], by_event_a: dict[tuple, set], notes: list[str]
) -> dict[str, str]:
    """Release video ids that dataset.csv does not list -> the video their eval images' ratings point at (a vote)."""
    votes: dict[str, Counter] = defaultdict(Counter)
    for rec in images.filter(
        (pl.col("data_type") == "eval") & ~pl.col("release_video").is_in(list(known_videos))
    ).iter_rows(named=True):
        hits = {v for v, _ in by_event_a.get((rec["event"], tuple(rec["ratings_a"])), set())}
        if len(hits) == 1:
            votes[rec["release_video"]][hits.pop()] += 1
    resolved = {old: c.most_common(1)[0][0] for old, c in votes.items()}
    for old, c in sorted(votes.items()):
        if len(c) > 1:
            notes.append(f"renamed video {old!r}: its eval images match {dict(c)}; using {resolved[old]!r}")
    unresolved = sorted(set(images["release_video"]) - set(known_videos) - set(resolved))
    if resolved:
        notes.append(
            f"{len(resolved)} release video ids that dataset.csv does not list were resolved through the "
            f"ratings of their eval images: " + ", ".join(f"{o} -> {n}" for o, n in sorted(resolved.items()))
        )
    if unresolved:
        notes.append(
            f"{len(unresolved)} release video ids are neither in dataset.csv nor resolvable through ratings "
            f"(kept as released): {', '.join(unresolved)}"
        )
    return resolved


def _pair_ties(out: list[dict], candidates: dict[str, set], notes: list[str]) -> None:
    """Ties: k images of one video with identical ratings that match the same k frames, paired in file-name order
    (in place in `out`)."""
    groups: dict[tuple, list[str]] = defaultdict(list)
    for rec in out:
        if rec["match"] == "unmatched" and len(candidates.get(rec["image"], ())) > 1:
            groups[(rec["video_id"], tuple(sorted(candidates[rec["image"]])))].append(rec["image"])
    by_image = {rec["image"]: rec for rec in out}
    for (vid, frames), names in sorted(groups.items()):
        if len(names) == len(frames):
            for name, frame in zip(sorted(names), frames, strict=True):
                by_image[name].update(frame_index=frame, match="tied ratings")
            notes.append(
                f"{len(names)} eval images of video {vid} ({', '.join(sorted(names))}) carry identical "
                f"ratings and match frames {list(frames)}: paired in file-name order (same mean judgments)"
            )
        else:
            notes.append(f"eval images {sorted(names)} of video {vid} match frames {list(frames)}: left unmatched")


def _base(rec: dict) -> dict:
    return {k: rec[k] for k in ("image", "event", "data_type", "release_video")}


def set_rows(indices: dict, indices_uq: dict, where: str = "indices") -> pl.DataFrame:
    """The experiments' lists as rows: experiment (table1 | table3), target (null for Table 1), split, image."""
    rows = []

    def add(experiment, target, split_lists, name):
        for split_key, split in (("train", "train"), ("val", "val")):
            names = split_lists.get(split_key)
            if not isinstance(names, list):
                raise ValueError(f"{where}: {name} has no list {split_key!r}; expected {{train: [...], val: [...]}}")
            rows.extend({"experiment": experiment, "target": target, "split": split, "image": str(n)} for n in names)

    add("table1", None, indices, "indices.json")
    for target, lists in indices_uq.items():
        add("table3", str(target), lists, f"indices_uq.json[{target!r}]")
    return pl.DataFrame(rows, schema={"experiment": pl.Utf8, "target": pl.Utf8, "split": pl.Utf8, "image": pl.Utf8})


def authors_sets(
    files: Mapping[str, dict], judgments: pl.DataFrame, dataset_csv: str | Path
) -> tuple[pl.DataFrame, list[str]]:
    """The AUTHORS_SETS rows (schemas.AUTHORS_SETS) of Tables 1 and 3 and readable notes on the mapping (`leaks`
    counts what the sets share between training and evaluation)."""
    release = read_dataset_csv(dataset_csv)
    known: dict[str, str] = {}
    for row in release.rows:
        known.setdefault(row.video_id, row.event)
    images = image_table(files["labels_all.json"], files["labels_var_a.json"])
    mapped, notes = map_images(images, judged_rows(judgments), known)
    sets = set_rows(files["indices.json"], files["indices_uq.json"])
    missing = sets.join(mapped, on="image", how="anti", maintain_order="left")
    if len(missing):
        raise ValueError(
            f"indices: {len(missing)} listed image(s) are not in labels_all.json (e.g. "
            f"{missing['image'].head(3).to_list()}); the five experiment files must come from one release"
        )
    out = sets.join(mapped.drop("release_video"), on="image", how="left", maintain_order="left")
    counts = mapped.group_by("data_type", "match", maintain_order=True).len().sort("data_type", "match")
    notes.insert(0, "images mapped: " + "; ".join(f"{d} {m}: {n}" for d, m, n in counts.iter_rows()))
    return out.select(
        "experiment", "target", "split", "image", "event", "data_type", "video_id", "frame_index", "match"
    ), notes


def leaks(sets: pl.DataFrame) -> pl.DataFrame:
    """Per experiment and target: training images that are rated eval images of the release, evaluation images whose
    video also gives training images, and the sizes of both lists."""
    rows = []
    for (experiment, target), g in sets.group_by("experiment", "target", maintain_order=True):
        train, val = g.filter(pl.col("split") == "train"), g.filter(pl.col("split") == "val")
        train_videos = set(train["video_id"].drop_nulls())
        train_frames = set(train.filter(pl.col("frame_index").is_not_null()).select("video_id", "frame_index").rows())
        rows.append(
            {
                "experiment": experiment,
                "target": target,
                "n_train": len(train),
                "n_val": len(val),
                "rated_in_train": int((train["data_type"] == "eval").sum()),
                "val_sharing_video": int(val["video_id"].is_in(list(train_videos)).sum()),
                "val_in_train": sum((v, f) in train_frames for v, f in val.select("video_id", "frame_index").rows()),
            }
        )
    return pl.DataFrame(
        rows,
        schema={
            "experiment": pl.Utf8,
            "target": pl.Utf8,
            "n_train": pl.Int64,
            "n_val": pl.Int64,
            "rated_in_train": pl.Int64,
            "val_sharing_video": pl.Int64,
            "val_in_train": pl.Int64,
        },
    ).sort("experiment", "target", nulls_last=False)


def leak_sentence(rec: Mapping) -> str:
    name = "Table 1" if rec["experiment"] == "table1" else f"Table 3 (target {rec['target']})"
    return (
        f"{name}: {rec['n_train']} training and {rec['n_val']} evaluation images; {rec['rated_in_train']} training "
        f"images are rated eval images of the release, {rec['val_sharing_video']} of {rec['n_val']} evaluation "
        f"images share a video with a training image"
    )
