"""The training and evaluation sets each experiment of SQUID-E §5 draws from the two pools (rule training_sets).

`classification_sets` (§5.1, Table 1) and `calibration_sets` (§5.3, Tables 3 and 9) pick rows by a fixed data seed,
so every training seed of an experiment sees the same images and only the model's randomness varies.
"""

from __future__ import annotations

import logging

import polars as pl

from squidflow.contracts.image_ids import image_id_expr
from squidflow.vocabulary.events import normalise_event, prompt_to_event

log = logging.getLogger(__name__)


# --- experiment sets -------------------------------------------------------------------------------------------
# Two ways to choose an experiment's images (`training.sets`):
# - clean: squidflow's sets, drawn by video so that no evaluation image shares a video with a training image
#   (SQUID-E supplement D.1: "the SQUID-E validation set does not include frames from videos that are included in
#   the SQUID-E training data");
# - authors: the SE images the authors listed in the release's experiment files (squidflow.training.authors_sets),
#   leaks included; the SD images (standard data, not released) are drawn as in clean mode.
# Every function appends what it could not do as asked (fewer images than configured, unmapped images, leaks) to
# `notes`, which the rule writes beside the sets and the tables quote in their captions.

SETS_MODES = ("clean", "authors")
HUMAN_MEANS = ("all", "screened")


def _sample(df: pl.DataFrame, n: int, seed: int, what: str, notes: list[str] | None = None) -> pl.DataFrame:
    df = df.sort("image_id")
    if len(df) < n:
        msg = f"{what}: wanted {n} images, only {len(df)} exist; using all of them"
        log.warning(msg)
        if notes is not None:
            notes.append(msg)
        return df
    return df.sample(n, seed=seed).sort("image_id") if len(df) > n else df


def judgment_means(judgments: pl.DataFrame) -> pl.DataFrame:
    """Per image, prompt and variant: the mean of every first-round judgment, no annotator screened out (the
    IMAGE_SCORES columns that `human_means` reads)."""
    j = judgments.filter(pl.col("round") == 1) if "round" in judgments.columns else judgments
    return (
        j.group_by("video_id", "frame_index", "event_prompt", "variant", maintain_order=True)
        .agg(pl.col("rating").cast(pl.Float64).mean().alias("people_mean"))
        .sort("video_id", "frame_index", "event_prompt", "variant")
    )


def screening_notes(judgments: pl.DataFrame, report: pl.DataFrame, scores: pl.DataFrame) -> list[str]:
    """What the annotator-quality step removes from the judgments, and how many image means that changes."""
    excluded = report.filter(pl.col("excluded"))
    if not len(excluded):
        return []
    removed = judgments.filter(pl.col("annotator").is_in(excluded["annotator"].implode()))
    key = ["video_id", "frame_index", "event_prompt", "variant"]
    both = judgment_means(judgments).join(
        scores.select(*key, pl.col("people_mean").alias("screened")), on=key, how="left", maintain_order="left"
    )
    changed = both.filter(pl.col("screened").is_null() | ((pl.col("people_mean") - pl.col("screened")).abs() > 1e-9))
    who = "; ".join(f"{a} ({', '.join(f) or 'no flag'})" for a, f in excluded.select("annotator", "flags").iter_rows())
    return [
        f"the annotator-quality step excludes {len(excluded)} annotator(s): {who}; that removes {len(removed)} of "
        f"{len(judgments)} judgments and changes the mean of {len(changed)} image/prompt pairs "
        "(training.human_means: all keeps every judgment, screened drops them)"
    ]


def human_means(scores: pl.DataFrame, *, variant: str, events: dict | None, candidates: list[str]) -> pl.DataFrame:
    """image_id, prompt_event, human_mean for judgments of `variant` whose prompt names one of `candidates`."""
    mapping = prompt_to_event(candidates, events)
    return (
        scores.filter(pl.col("variant") == variant)
        .with_columns(
            pl.col("event_prompt")
            .map_elements(lambda p: mapping.get(normalise_event(p)), return_dtype=pl.Utf8)
            .alias("prompt_event"),
            image_id_expr(),
        )
        .filter(pl.col("prompt_event").is_not_null())
        .select("image_id", "prompt_event", pl.col("people_mean").cast(pl.Float64).alias("human_mean"))
        .unique(["image_id", "prompt_event"], keep="first", maintain_order=True)
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


def authors_images(listed: pl.DataFrame, se: pl.DataFrame, seed: int, what: str, notes: list[str]) -> pl.DataFrame:
    """The SE pool rows of one of the authors' image lists (rows of AUTHORS_SETS), with the authors' event.

    An image mapped to a frame takes that frame's row. An image known only by its video (a release train image)
    takes one of that video's frames in the pool: a video listed k times gets k distinct frames, drawn with `seed`
    among the frames the list does not already use. Images whose frame or video is not in the pool (a video that
    could not be acquired) are left out and counted in `notes`.
    """
    pool = se.select("image_id", "pool", "row", "video_id", "frame_index")
    framed = (
        listed.filter(pl.col("frame_index").is_not_null())
        .select("event", image_id_expr())
        .join(pool.drop("video_id", "frame_index"), on="image_id", how="left", maintain_order="left")
    )
    lost_frames = int(framed["row"].null_count())
    framed = framed.filter(pl.col("row").is_not_null()).unique("image_id", keep="first", maintain_order=True)
    used = set(framed["image_id"])
    by_video = (
        listed.filter(pl.col("frame_index").is_null())
        .group_by("video_id", "event", maintain_order=True)
        .len()
        .sort("video_id", "event")
    )
    parts, lost_videos, short = [framed], 0, 0
    for i, (video, event, k) in enumerate(by_video.iter_rows()):
        frames = pool.filter((pl.col("video_id") == video) & ~pl.col("image_id").is_in(list(used))).sort("frame_index")
        if not len(frames):
            lost_videos += k
            continue
        take = frames if len(frames) <= k else frames.sample(k, seed=seed + i).sort("frame_index")
        short += k - len(take)
        used |= set(take["image_id"])
        parts.append(take.select(pl.lit(event).alias("event"), "image_id", "pool", "row"))
    if lost_frames or lost_videos or short:
        notes.append(
            f"{what}: {lost_frames} framed image(s) and {lost_videos} video-only image(s) of the authors' list "
            f"have no frame in the SE pool (video not acquired), {short} video-only image(s) found fewer "
            f"frames than listed; {len(listed) - lost_frames - lost_videos - short} of {len(listed)} used"
        )
    return pl.concat(parts).select("image_id", "pool", "row", "event")


def _authors_list(authors: pl.DataFrame | None, experiment: str, target: str | None, split: str) -> pl.DataFrame:
    if authors is None:
        raise ValueError("training.sets = authors needs results/training/authors_sets.parquet (rule authors_sets)")
    rows = authors.filter((pl.col("experiment") == experiment) & (pl.col("split") == split))
    if target is not None:
        targets = sorted(set(authors.filter(pl.col("experiment") == experiment)["target"].drop_nulls()))
        if target not in targets:
            raise ValueError(
                f"training.calibration.target_event = {target!r}: the authors' Table 3 sets exist for the "
                f"targets {targets} (indices_uq.json); pick one of them or set training.sets: clean"
            )
        rows = rows.filter(pl.col("target") == target)
    return rows


def _check_authors_events(authors: pl.DataFrame | None, events: list[str]) -> pl.DataFrame:
    """The authors' sets, checked against the configured events (without them: the error _authors_list gives)."""
    if authors is None:
        raise ValueError("training.sets = authors needs results/training/authors_sets.parquet (rule authors_sets)")
    unknown = sorted(set(authors.filter(pl.col("experiment") == "table1")["event"]) - set(events))
    if unknown:
        raise ValueError(
            f"training.sets = authors: the authors' images are labelled with the release's event ids "
            f"{sorted(set(authors['event']))}, but training.classification.events is {events} "
            f"(unknown here: {unknown}); use the release's ids (config/squid-e.yaml) or training.sets: clean"
        )
    return authors


def _train_per_event(
    sd_train: pl.DataFrame, se_train: pl.DataFrame, events: list[str], train_per_event: int | None, notes: list[str]
) -> int:
    """Training images per event, the same for both datasets: the smaller pool's count, at most `train_per_event`."""
    n = min(
        min(len(sd_train.filter(pl.col("event") == e)) for e in events),
        min(len(se_train.filter(pl.col("event") == e)) for e in events),
    )
    if train_per_event:
        n = min(n, train_per_event)
    if n == 0:
        raise ValueError(
            f"classification: no training images for some event of {events} in SD or SE (split=train); "
            "check results/dataset/frames.parquet splits and standard_data"
        )
    if train_per_event and n < train_per_event:
        notes.append(
            f"training images per event: {n} from each dataset (training.classification.train_per_event = "
            f"{train_per_event}; the smaller pool has no more)"
        )
    return n


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
    mode: str = "clean",
    authors: pl.DataFrame | None = None,
    notes: list[str] | None = None,
) -> pl.DataFrame:
    """§5.1: 4-way classification. Both training sets get the same number of images per event (the smaller pool's
    count, or `train_per_event`); SE evaluation images are judged in variant A for their own event (for the
    certainty bins); SD evaluation images are SD validation images.

    clean: SE training images from the frames stage's train split, evaluation images from its val/test splits.
    authors: SE images of the authors' `indices.json` (training by video, evaluation by frame).
    """
    notes = [] if notes is None else notes
    label = pl.col("event").replace_strict({e: i for i, e in enumerate(events)}, return_dtype=pl.Int64)
    sd, se = sd.filter(pl.col("event").is_in(events)), se.filter(pl.col("event").is_in(events))
    sd_train = sd.filter(pl.col("split") == "train")
    judged = human_means(scores, variant="A", events=event_info, candidates=events)
    if mode == "authors":
        authors = _check_authors_events(authors, events)
        se_train = authors_images(
            _authors_list(authors, "table1", None, "train"), se, seed, "SE train (authors)", notes
        )
        se_eval = authors_images(_authors_list(authors, "table1", None, "val"), se, seed, "SE eval (authors)", notes)
    else:
        se_train = se.filter(pl.col("split") == "train")
        se_eval = se.filter(pl.col("split") != "train").select("image_id", "pool", "row", "event")
    n = _train_per_event(sd_train, se_train, events, train_per_event, notes)
    parts = []
    for e in events:
        parts.append(
            _rows(_sample(sd_train.filter(pl.col("event") == e), n, seed, f"SD train {e}", notes), "train", "SD", label)
        )
        parts.append(
            _rows(_sample(se_train.filter(pl.col("event") == e), n, seed, f"SE train {e}", notes), "train", "SE", label)
        )
        sd_val = sd.filter((pl.col("split") != "train") & (pl.col("event") == e))
        if sd_val_per_event:
            sd_val = _sample(sd_val, sd_val_per_event, seed, f"SD val {e}", notes)
        parts.append(_rows(sd_val, "eval", "SD", label))
    se_eval = se_eval.join(
        judged, left_on=["image_id", "event"], right_on=["image_id", "prompt_event"], how="inner", maintain_order="left"
    )
    if len(se_eval) == 0:
        raise ValueError(
            "classification: no SE evaluation frame has a variant A judgment of its own event in "
            "results/judgments/image_scores.parquet; Table 1's certainty bins need them"
        )
    parts.append(_rows(se_eval, "eval", "SE", label, human=True))
    return pl.concat(parts)


def _pick_eval_by_video(candidates: pl.DataFrame, n: int, seed: int) -> pl.DataFrame:
    """`n` images taken video by video — the videos with the most candidate images first (ties in a seeded order),
    every candidate image of a video before the next — so that evaluation uses as few videos as it can and leaves
    the others to training."""
    if len(candidates) <= n:
        return candidates
    videos = (
        candidates.group_by("video_id", maintain_order=True)
        .len()
        .sort("video_id")
        .with_columns(pl.int_range(pl.len()).shuffle(seed=seed).alias("_tie"))
        .sort(["len", "_tie"], descending=[True, False])
    )
    order = {v: i for i, v in enumerate(videos["video_id"])}
    ranked = candidates.with_columns(pl.col("video_id").replace_strict(order, return_dtype=pl.Int64).alias("_v"))
    return ranked.sort("_v", "image_id").head(n).drop("_v").sort("image_id")


def _balanced_train(
    train: pl.DataFrame,
    *,
    target: str,
    others: list[str],
    n_target: int,
    n_other: int,
    seed: int,
    what: str,
    notes: list[str],
) -> pl.DataFrame:
    """`n_target` target images and `n_other` split evenly over `others`; when the data has fewer, both classes shrink
    to the same size (a multiple of len(others)) and `notes` says so."""
    avail_t = len(train.filter(pl.col("event") == target))
    avail_o = min(len(train.filter(pl.col("event") == e)) for e in others)
    per_other = min(n_other // len(others), avail_o)
    n_t = min(n_target, avail_t)
    if n_t < n_target or per_other * len(others) < n_other:
        k = min(n_t, per_other * len(others)) // len(others)
        n_t, per_other = k * len(others), k
        notes.append(
            f"{what}: configured {n_target} target + {n_other} other training images, but only {avail_t} "
            f"target and at least {avail_o} per other event are available; balanced to {n_t} + "
            f"{per_other * len(others)} ({per_other} per other event)"
        )
    parts = [_sample(train.filter(pl.col("event") == target), n_t, seed, f"{what} {target}", notes)]
    parts += [_sample(train.filter(pl.col("event") == e), per_other, seed, f"{what} {e}", notes) for e in others]
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
    mode: str = "clean",
    authors: pl.DataFrame | None = None,
    notes: list[str] | None = None,
) -> pl.DataFrame:
    """§5.3: "target event or not". Each training set: `train_target` target images and `train_other` split evenly over
    the other events (supplement D.1: 480 + 480); evaluation: `val_target` target and `val_similar` similar-event
    images (120 + 120), SE evaluation images judged for the target prompt in variant B.

    clean: SE evaluation images are chosen first, video by video, from the frames outside the train split; then
    training images come from every frame whose video gives no evaluation image. Where the data has fewer images
    than configured, both classes shrink to the same size and `notes` says so.
    authors: SE images of the authors' `indices_uq.json` for `target` (with their leaks, see authors_sets).
    """
    notes = [] if notes is None else notes
    if target not in events or similar not in events or target == similar:
        raise ValueError(f"training.calibration: target {target!r} and similar {similar!r} must be two of {events}")
    label = (pl.col("event") == target).cast(pl.Int64)
    others = [e for e in events if e != target]
    judged = human_means(scores, variant="B", events=event_info, candidates=events).filter(
        pl.col("prompt_event") == target
    )
    sizes = {"train_target": train_target, "train_other": train_other, "val_target": val_target}
    parts = _calibration_sd(sd, target, similar, others, sizes | {"val_similar": val_similar}, seed, label, notes)
    if mode == "authors":
        authors = _check_authors_events(authors, events)
        se_train = authors_images(
            _authors_list(authors, "table3", target, "train"), se, seed, "SE train (authors)", notes
        )
        se_val = authors_images(_authors_list(authors, "table3", target, "val"), se, seed, "SE eval (authors)", notes)
        se_val = se_val.join(judged.drop("prompt_event"), on="image_id", how="inner", maintain_order="left")
    else:
        se_val = _calibration_se_eval(se, judged, target, similar, val_target, val_similar, seed, notes)
        eval_videos = se_val["video_id"].drop_nulls().unique().implode()
        se_train = _balanced_train(
            se.filter(~pl.col("video_id").is_in(eval_videos)),
            target=target,
            others=others,
            n_target=train_target,
            n_other=train_other,
            seed=seed,
            what="SE train",
            notes=notes,
        )
    parts.append(_rows(se_train, "train", "SE", label))
    parts.append(_rows(se_val, "eval", "SE", label, human=True))
    return pl.concat(parts)


def _calibration_sd(
    sd: pl.DataFrame,
    target: str,
    similar: str,
    others: list[str],
    sizes: dict[str, int],
    seed: int,
    label: pl.Expr,
    notes: list[str],
) -> list[pl.DataFrame]:
    """The SD images of the calibration sets, split by their own train/val split: a balanced training set, and the
    target and similar-event evaluation images."""
    sd_train = _balanced_train(
        sd.filter(pl.col("split") == "train"),
        target=target,
        others=others,
        n_target=sizes["train_target"],
        n_other=sizes["train_other"],
        seed=seed,
        what="SD train",
        notes=notes,
    )
    sd_val = sd.filter(pl.col("split") != "train")
    return [
        _rows(sd_train, "train", "SD", label),
        _rows(
            _sample(sd_val.filter(pl.col("event") == target), sizes["val_target"], seed, "SD val target", notes),
            "eval",
            "SD",
            label,
        ),
        _rows(
            _sample(sd_val.filter(pl.col("event") == similar), sizes["val_similar"], seed, "SD val similar", notes),
            "eval",
            "SD",
            label,
        ),
    ]


def _calibration_se_eval(
    se: pl.DataFrame,
    judged: pl.DataFrame,
    target: str,
    similar: str,
    val_target: int,
    val_similar: int,
    seed: int,
    notes: list[str],
) -> pl.DataFrame:
    """clean: the SE evaluation images, chosen video by video from the frames outside the train split that have a
    variant B judgment for the target prompt."""
    candidates = se.filter(pl.col("split") != "train").join(
        judged.drop("prompt_event"), on="image_id", how="inner", maintain_order="left"
    )
    if len(candidates) == 0:
        raise ValueError(
            f"calibration: no SE frame outside the training split has a variant B judgment for the target "
            f"event {target!r} in results/judgments/image_scores.parquet; Tables 3 and 9 need them"
        )
    se_picks = []
    for e, n in ((target, val_target), (similar, val_similar)):
        picked = _pick_eval_by_video(candidates.filter(pl.col("event") == e), n, seed)
        if len(picked) < n:
            notes.append(f"SE val {e}: wanted {n} images judged for {target!r} in variant B, only {len(picked)} exist")
        se_picks.append(picked)
    return pl.concat(se_picks)


# --- entry points for the rule --------------------------------------------------------------------------------
def experiment_sets(
    experiment: str,
    sd: pl.DataFrame,
    se: pl.DataFrame,
    scores: pl.DataFrame,
    training: dict,
    events: dict | None,
    *,
    authors: pl.DataFrame | None = None,
    notes: list[str] | None = None,
) -> pl.DataFrame:
    """The TRAINING_SETS rows of `experiment` (classification = §5.1, calibration = §5.3) from the cached pools.

    `training.sets` picks clean or the authors' sets; `scores` holds the per-image means the tables compare with.
    """
    seed = training["data_seed"]
    mode = training["sets"]
    if mode not in SETS_MODES:
        raise ValueError(f"training.sets = {mode!r}: expected one of {SETS_MODES}")
    if experiment == "classification":
        c = training["classification"]
        return classification_sets(
            sd,
            se,
            scores,
            events=list(c["events"]),
            event_info=events,
            train_per_event=c["train_per_event"],
            sd_val_per_event=c["sd_val_per_event"],
            seed=seed,
            mode=mode,
            authors=authors,
            notes=notes,
        )
    if experiment == "calibration":
        c = training["calibration"]
        return calibration_sets(
            sd,
            se,
            scores,
            events=list(training["classification"]["events"]),
            target=c["target_event"],
            similar=c["similar_event"],
            event_info=events,
            train_target=c["train_target"],
            train_other=c["train_other"],
            val_target=c["val_target"],
            val_similar=c["val_similar"],
            seed=seed,
            mode=mode,
            authors=authors,
            notes=notes,
        )
    raise ValueError(f"unknown experiment {experiment!r}; expected classification or calibration")


def sets_summary(
    sets: pl.DataFrame,
    *,
    experiment: str,
    mode: str,
    human_means: str,
    notes: list[str],
    leaks: list[dict] | None = None,
) -> dict:
    """What the tables' captions say about an experiment's sets: the choice, the sizes per set and class, the notes
    (anything that differs from the configuration) and, for the authors' sets, their leaks."""
    counts = (
        sets.group_by("use", "dataset", "label", maintain_order=True)
        .len()
        .sort("use", "dataset", "label")
        .rename({"len": "n"})
        .to_dicts()
    )
    return {
        "experiment": experiment,
        "sets": mode,
        "human_means": human_means,
        "counts": counts,
        "notes": list(notes),
        "leaks": list(leaks or []),
    }


def experiment_sets_with_summary(
    experiment: str,
    sd: pl.DataFrame,
    se: pl.DataFrame,
    scores: pl.DataFrame,
    judgments: pl.DataFrame,
    report: pl.DataFrame,
    training: dict,
    events: dict | None,
    *,
    authors: pl.DataFrame | None = None,
) -> tuple[pl.DataFrame, dict]:
    """The rule's entry: the human means the tables compare with (`training.human_means`: `all` = every first-round
    judgment, which for the release's judgments are the release's means; `screened` = results/judgments/
    image_scores.parquet, after the annotator-quality step), the sets, and their summary for the captions."""
    from squidflow.training.authors_sets import leak_sentence, leaks

    means_choice = training["human_means"]
    if means_choice not in HUMAN_MEANS:
        raise ValueError(
            f"training.human_means = {means_choice!r}: expected one of {HUMAN_MEANS} (or auto in the config)"
        )
    notes = screening_notes(judgments, report, scores)
    means = judgment_means(judgments) if means_choice == "all" else scores
    sets = experiment_sets(experiment, sd, se, means, training, events, authors=authors, notes=notes)
    mode = training["sets"]
    leak_rows = []
    if mode == "authors" and authors is not None:
        name = "table1" if experiment == "classification" else "table3"
        target = None if experiment == "classification" else training["calibration"]["target_event"]
        wanted = authors.filter(
            (pl.col("experiment") == name)
            & (pl.col("target").is_null() if target is None else pl.col("target") == target)
        )
        leak_rows = [{**rec, "sentence": leak_sentence(rec)} for rec in leaks(wanted).iter_rows(named=True)]
    return sets, sets_summary(
        sets, experiment=experiment, mode=mode, human_means=means_choice, notes=notes, leaks=leak_rows
    )
