"""The human sample check (litmus test §3.1, §5.1): do the rule soft labels correlate with human disagreement?

People saw a first-turn QA pair with the candidate boxes and selected every object that could still be the target
(the reference set). Where they disagree, the share of annotators selecting an object is a human soft label, built
like the rule ensemble's (each annotator a vote, the votes normalised the same way: three annotators are to the
human labels what R1–R3 are to the rule labels). The check reports, per question type, Pearson's r between human and
rule soft labels over every (QA pair, candidate) — the paper: 0.94 for spatial questions, almost perfect for category
questions — and the share of QA pairs on which all annotators selected the same set (91% category, 70% spatial).

The annotations are a CSV with a header and one row per (QA pair, annotator):
`qa_id` (the id of the game's first turn, `qas[0].id`), `annotator`, `selected_object_ids` (object ids separated by
spaces or semicolons; empty = none selected).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import cast

import numpy as np
import polars as pl

from squidflow.errors import UserError
from squidflow.litmus.metrics import pearson
from squidflow.litmus.questions import QUESTION_TYPES
from squidflow.litmus.soft_labels import normalise

COLUMNS = ("qa_id", "annotator", "selected_object_ids")


class AnnotationError(UserError, ValueError):
    """The human annotation CSV is malformed; the message names the file, the line and the column."""


def _selected_ids(text: str | None, game_id: int, candidates: set[int], where: str) -> list[int]:
    """A row's `selected_object_ids` (separated by spaces or semicolons) -> the sorted distinct ids; a token that is
    not an id, or not a candidate of the game, is an AnnotationError naming the row."""
    ids = []
    for tok in re.split(r"[\s;]+", (text or "").strip()):
        if not tok:
            continue
        if not re.fullmatch(r"-?\d+", tok):
            raise AnnotationError(
                f"{where}: column 'selected_object_ids' has {tok!r}, not an object id "
                "(ids are separated by spaces or semicolons)"
            )
        if int(tok) not in candidates:
            raise AnnotationError(
                f"{where}: column 'selected_object_ids' has object {tok}, which is not a "
                f"candidate of game {game_id} (candidates: {sorted(candidates)})"
            )
        ids.append(int(tok))
    return sorted(set(ids))


def read_annotations(path: str | Path, games: pl.DataFrame, name: str | None = None) -> pl.DataFrame:
    """Read and check the CSV against the games: qa_id, game_id, annotator, object_ids (list)."""
    name = name or str(path)
    first_turns = {
        qa: (gid, {o["object_id"] for o in objs})
        for qa, gid, objs in games.filter(pl.col("qa_id").is_not_null())
        .select("qa_id", "game_id", "objects")
        .iter_rows()
    }
    rows: list[dict] = []
    seen: dict[tuple[int, str], int] = {}
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise AnnotationError(
                f"{name}, line 1: missing column(s) {missing} (has {reader.fieldnames}); the header "
                f"must name {list(COLUMNS)}"
            )
        for row in reader:
            line = reader.line_num
            where = f"{name}, line {line}"
            raw = (row["qa_id"] or "").strip()
            if not re.fullmatch(r"-?\d+", raw):
                raise AnnotationError(f"{where}: column 'qa_id' = {raw!r} is not an integer QA id")
            qa_id = int(raw)
            if qa_id not in first_turns:
                raise AnnotationError(
                    f"{where}: column 'qa_id' = {qa_id} is not the first turn of any game in "
                    "litmus.games; annotate first turns (qas[0].id) of the configured games"
                )
            annotator = (row["annotator"] or "").strip()
            if not annotator:
                raise AnnotationError(f"{where}: column 'annotator' is empty; name who annotated the row")
            if (qa_id, annotator) in seen:
                raise AnnotationError(
                    f"{where}: annotator {annotator!r} annotated QA {qa_id} already on line "
                    f"{seen[(qa_id, annotator)]}; keep one row per (qa_id, annotator)"
                )
            seen[(qa_id, annotator)] = line
            game_id, candidates = first_turns[qa_id]
            ids = _selected_ids(row["selected_object_ids"], game_id, candidates, where)
            rows.append({"qa_id": qa_id, "game_id": game_id, "annotator": annotator, "object_ids": ids})
    if not rows:
        raise AnnotationError(f"{name}: has no annotation rows")
    return pl.DataFrame(
        rows, schema={"qa_id": pl.Int64, "game_id": pl.Int64, "annotator": pl.Utf8, "object_ids": pl.List(pl.Int64)}
    )


def human_soft_labels(annotations: pl.DataFrame, games: pl.DataFrame, normalisation: str = "sum") -> pl.DataFrame:
    """Per (QA pair, candidate): how many annotators selected it and the human soft label (null when nobody
    selected anything)."""
    objects = {gid: [o["object_id"] for o in objs] for gid, objs in games.select("game_id", "objects").iter_rows()}
    rows = []
    for (game_id,), group in annotations.group_by(["game_id"], maintain_order=True):
        ids = objects[game_id]
        votes = np.array([sum(oid in sel for sel in group["object_ids"].to_list()) for oid in ids], dtype=float)
        labels = normalise(votes, normalisation)
        rows += [
            {
                "game_id": game_id,
                "object_id": oid,
                "votes": int(v),
                "human_soft_label": None if np.isnan(s) else float(s),
            }
            for oid, v, s in zip(ids, votes, labels, strict=True)
        ]
    return pl.DataFrame(
        rows, schema={"game_id": pl.Int64, "object_id": pl.Int64, "votes": pl.Int64, "human_soft_label": pl.Float64}
    )


def _agreement_and_pairs(
    annotations: pl.DataFrame, games: pl.DataFrame, soft_labels: pl.DataFrame, normalisation: str
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per annotated QA pair: its annotators and whether they all chose the same objects, with its question type;
    and every (QA pair, candidate) with both a human and a rule soft label, in a fixed order."""
    human = human_soft_labels(annotations, games, normalisation)
    agree = (
        annotations.with_columns(pl.col("object_ids").list.sort().cast(pl.List(pl.Utf8)).list.join(" ").alias("_set"))
        .group_by("game_id", maintain_order=True)
        .agg(pl.len().alias("annotators"), (pl.col("_set").n_unique() == 1).alias("agree"))
    )
    types = soft_labels.select("game_id", "question_type").unique(maintain_order=True)
    agree = agree.join(types, on="game_id", how="left", maintain_order="left").with_columns(
        pl.col("question_type").fill_null("other")
    )
    paired = human.join(
        soft_labels.select("game_id", "object_id", "soft_label"),
        on=["game_id", "object_id"],
        how="inner",
        maintain_order="left",
    ).drop_nulls(["human_soft_label", "soft_label"])
    # in a fixed order: joins may reorder rows, and a sum's last bit depends on its order
    paired = paired.join(types, on="game_id", maintain_order="left").sort("game_id", "object_id")
    return agree, paired


def sample_check(
    annotations: pl.DataFrame,
    games: pl.DataFrame,
    soft_labels: pl.DataFrame,
    normalisation: str = "sum",
    intervals=None,
) -> pl.DataFrame:
    """Per question type: QA pairs, annotators per QA pair, the share with full agreement, and Pearson's r between
    human and rule soft labels (null for "other", which has no rule labels). With `intervals`
    (squidflow.statistics.intervals.IntervalConfig), full_agreement and pearson_r have `_lo` / `_hi`: bootstrap over the
    annotated QA pairs within their question type, each QA pair with its annotators (check_intervals)."""
    agree, paired = _agreement_and_pairs(annotations, games, soft_labels, normalisation)
    rows = []
    for qtype in QUESTION_TYPES:
        a = agree.filter(pl.col("question_type") == qtype)
        if a.is_empty():
            continue
        p = paired.filter(pl.col("question_type") == qtype)
        rows.append(
            {
                "question_type": qtype,
                "n_qa": a.height,
                "annotators_per_qa": float(cast(float, a["annotators"].mean())),
                "full_agreement": float(cast(float, a["agree"].mean())),
                "pearson_r": pearson(p["human_soft_label"], p["soft_label"]) if qtype != "other" else None,
                "n_pairs": p.height if qtype != "other" else 0,
            }
        )
    table = pl.DataFrame(
        rows,
        schema={
            "question_type": pl.Utf8,
            "n_qa": pl.Int64,
            "annotators_per_qa": pl.Float64,
            "full_agreement": pl.Float64,
            "pearson_r": pl.Float64,
            "n_pairs": pl.Int64,
        },
    )
    if intervals is None:
        return table
    bounds = check_intervals(agree, paired, table, intervals)
    return table.join(bounds, on="question_type", how="left", maintain_order="left").select(
        "question_type",
        "n_qa",
        "annotators_per_qa",
        "full_agreement",
        "full_agreement_lo",
        "full_agreement_hi",
        "pearson_r",
        "pearson_r_lo",
        "pearson_r_hi",
        "n_pairs",
    )


def check_intervals(agree: pl.DataFrame, paired: pl.DataFrame, table: pl.DataFrame, cfg) -> pl.DataFrame:
    """The intervals of sample_check's full_agreement and pearson_r: one index matrix over the annotated QA pairs,
    stratified by question type; a QA pair brings its annotators and its candidates. Pearson's r of a resample is
    computed from each QA pair's sums over its candidates, weighted by how often the pair is drawn."""
    from squidflow.statistics.intervals import counts, image_resamples, interval_from

    qa = agree.sort("game_id")
    types = qa["question_type"].to_numpy()
    drawn = counts(image_resamples(len(qa), cfg, strata=types), len(qa))
    x, y = pl.col("human_soft_label"), pl.col("soft_label")
    sums = (
        qa.select("game_id")
        .join(
            paired.group_by("game_id", maintain_order=True).agg(
                pl.len().cast(pl.Float64).alias("n"),
                x.sum().alias("x"),
                y.sum().alias("y"),
                (x * y).sum().alias("xy"),
                (x * x).sum().alias("xx"),
                (y * y).sum().alias("yy"),
            ),
            on="game_id",
            how="left",
            maintain_order="left",
        )
        .fill_null(0.0)
        .drop("game_id")
        .to_numpy()
    )
    agreed = qa["agree"].cast(pl.Float64).to_numpy()
    rows = []
    for rec in table.iter_rows(named=True):
        w = drawn * (types == rec["question_type"])
        with np.errstate(invalid="ignore", divide="ignore"):
            full = (w @ agreed) / w.sum(axis=1)
            n, sx, sy, sxy, sxx, syy = (w @ sums).T
            var = (n * sxx - sx**2) * (n * syy - sy**2)
            r = np.where(var > 0, (n * sxy - sx * sy) / np.sqrt(np.where(var > 0, var, 1)), np.nan)
        _, f_lo, f_hi = interval_from(rec["full_agreement"], full, cfg)
        point_r = rec["pearson_r"] if rec["pearson_r"] is not None else float("nan")
        _, r_lo, r_hi = interval_from(point_r, r, cfg)
        rows.append(
            {
                "question_type": rec["question_type"],
                "full_agreement_lo": f_lo,
                "full_agreement_hi": f_hi,
                "pearson_r_lo": r_lo,
                "pearson_r_hi": r_hi,
            }
        )
    return pl.DataFrame(
        rows,
        schema={
            "question_type": pl.Utf8,
            **{f"{c}_{e}": pl.Float64 for c in ("full_agreement", "pearson_r") for e in ("lo", "hi")},
        },
    )
