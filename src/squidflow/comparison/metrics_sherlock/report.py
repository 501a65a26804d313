"""The three Sherlock metrics of a plausibility scorer over a comparison corpus (the `comparison_metrics` rule).

Prediction files here are the scorer's embeddings (`schemas.COMPARISON_EMBEDDINGS`): every score the metrics need is
a dot product of a region vector and an inference vector, so retrieval chunks and per-image localization matrices
are computed on the fly. The numbers are those allenai/sherlock's leaderboard scorers (`leaderboard_eval/`) report
for the same scores (squidflow's tests run those scorers, unchanged, side by side with these functions):

- retrieval: per chunk and the mean over chunks;
- localization with ground-truth boxes over every image, regions and inferences in corpus order (the order decides
  how lapjv breaks ties); with automatic box proposals (`schemas.COMPARISON_PROPOSALS`: the scorer's region vector
  for each proposal box) the auto-box accuracy and its oracle;
- comparison, when human ratings are given (a CSV with query_id, candidate_id, annot1, annot2, Likert 1–3, e.g. the
  results of the comparison HITs): model, human, random and oracle.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import polars as pl

from squidflow.comparison.metrics_sherlock.comparison import comparison_accuracy
from squidflow.comparison.metrics_sherlock.localization import localization_gt, localization_proposals, region_iou
from squidflow.comparison.metrics_sherlock.retrieval import retrieval_metrics
from squidflow.comparison.plausibility import DualEmbeddings
from squidflow.contracts.io import read_csv_strings
from squidflow.errors import InputError

RATING_COLUMNS = ("query_id", "candidate_id", "annot1", "annot2")
PROPOSAL_COLUMNS = ("image_id", "box", "region")
BOX_KEYS = ("left", "top", "width", "height")


RATINGS_FIX = (
    "Give `comparison.ratings` a CSV with the header query_id,candidate_id,annot1,annot2 (corpus "
    "instance ids and two annotators' Likert ratings 1-3, Sherlock §4.3), or leave it empty."
)


def read_comparison_ratings(path: str | Path) -> pl.DataFrame:
    """The human ratings of comparison sets (`comparison.ratings`), checked: a wrong header or a rating that is not
    1, 2 or 3 is an InputError naming the file, the line and the fix, before any metric is computed."""
    df = read_csv_strings(path, what="comparison ratings CSV", fix=RATINGS_FIX, line_column="_line")
    missing = [c for c in RATING_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(
            f"{path} line 1: missing column(s) {', '.join(missing)}; the header is "
            f"{', '.join(c for c in df.columns if c != '_line')}. {RATINGS_FIX}"
        )
    for col in ("annot1", "annot2"):
        bad = df.filter(~pl.col(col).str.strip_chars().is_in(["1", "2", "3"]))
        if len(bad):
            row = bad.row(0, named=True)
            raise InputError(
                f"{path} line {row['_line']}: {col} = {row[col]!r} is not a Likert rating 1, 2 or 3. {RATINGS_FIX}"
            )
    return df.select(
        pl.col("query_id").str.strip_chars(),
        pl.col("candidate_id").str.strip_chars(),
        *(pl.col(c).str.strip_chars().cast(pl.Int64) for c in ("annot1", "annot2")),
    )


def image_groups(corpus: pl.DataFrame) -> list[tuple[str, np.ndarray]]:
    """Each image's corpus rows, in corpus order; images in order of first appearance."""
    groups = corpus.select("image_id").with_row_index("_row").group_by("image_id", maintain_order=True).agg("_row")
    return [(iid, np.asarray(rows, dtype=np.int64)) for iid, rows in groups.iter_rows()]


def gt_box_scores(
    corpus: pl.DataFrame, region: np.ndarray, inference: np.ndarray
) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """Per image: its id, its rows and the region × inference score matrix of its instances (row i = instance i's
    region, column j = instance j's inference)."""
    for image_id, rows in image_groups(corpus):
        yield image_id, rows, region[rows] @ inference[rows].T


def proposal_scores(
    corpus: pl.DataFrame, inference: np.ndarray, proposals: pl.DataFrame
) -> list[tuple[str, list[tuple[str, np.ndarray, np.ndarray]]]]:
    """Per image with proposals (corpus order): per instance, its id, the score of each proposal for its inference
    and each proposal's IoU with its region (the best over the region's boxes)."""
    missing = [c for c in PROPOSAL_COLUMNS if c not in proposals.columns]
    if missing:
        raise ValueError(
            f"comparison proposals (config comparison.proposals): missing column(s) {missing}; "
            f"expected {PROPOSAL_COLUMNS} (schemas.COMPARISON_PROPOSALS)"
        )
    known = set(corpus["image_id"].to_list())
    unknown = proposals.filter(~pl.col("image_id").is_in(list(known)))["image_id"].unique(maintain_order=True)
    if len(unknown):
        raise ValueError(
            f"comparison proposals (config comparison.proposals): {len(unknown)} image(s) are not in the corpus, "
            f"e.g. {unknown[:3].to_list()}; proposal image_ids must be the corpus' image_id (for Sherlock the image "
            "URL's path; see results/comparison/corpus.parquet)"
        )
    vectors = np.asarray(proposals["region"].to_numpy(), dtype=np.float32).reshape(len(proposals), -1)
    boxes = [tuple(float(b[k]) for k in BOX_KEYS) for b in proposals["box"].to_list()]
    by_image = {
        iid: np.asarray(rows, dtype=np.int64)
        for iid, rows in proposals.select("image_id")
        .with_row_index("_row")
        .group_by("image_id", maintain_order=True)
        .agg("_row")
        .iter_rows()
    }
    instance_ids = corpus["instance_id"].to_list()
    regions = corpus["bboxes"].to_list()
    out = []
    for image_id, rows in image_groups(corpus):
        prop = by_image.get(image_id)
        if prop is None:
            continue
        scores = vectors[prop] @ inference[rows].T  # proposals × the image's inferences
        per_instance = []
        for j, r in enumerate(rows):
            truth = [tuple(float(b[k]) for k in BOX_KEYS) for b in regions[r]]
            ious = np.array([region_iou(boxes[p], truth) for p in prop])
            per_instance.append((instance_ids[r], scores[:, j], ious))
        out.append((image_id, per_instance))
    return out


def rated_sets(
    ratings: pl.DataFrame, emb: DualEmbeddings
) -> list[tuple[str, list[str], np.ndarray, np.ndarray, np.ndarray]]:
    """Per rated query (in ratings order): its id, its candidates' ids, the scorer's score of each candidate's
    inference for the query's image+region, and the two annotators' ratings."""
    missing = [c for c in RATING_COLUMNS if c not in ratings.columns]
    if missing:
        raise ValueError(f"comparison ratings: missing column(s) {missing}; expected {RATING_COLUMNS}")
    pos = {iid: i for i, iid in enumerate(emb.instance_id)}
    sets = []
    for (qid,), part in ratings.group_by("query_id", maintain_order=True):
        cand_ids = part["candidate_id"].to_list()
        q = pos.get(qid)
        cands = [pos.get(c) for c in cand_ids]
        if q is None or any(c is None for c in cands):
            bad = qid if q is None else cand_ids[[c is None for c in cands].index(True)]
            raise ValueError(
                f"comparison ratings: query {qid}: instance {bad} is not in the corpus; the ratings must "
                "be of this corpus' comparison sets (query_id and candidate_id are corpus instance_ids)"
            )
        scores = emb.inference[[pos[c] for c in cand_ids]] @ emb.region[q]
        sets.append((qid, cand_ids, scores, part["annot1"].to_numpy(), part["annot2"].to_numpy()))
    return sets


def evaluate(
    corpus: pl.DataFrame,
    emb: DualEmbeddings,
    ratings: pl.DataFrame | None = None,
    proposals: pl.DataFrame | None = None,
) -> dict:
    """{"retrieval": {...}, "localization": {...}, "comparison": {...} | None} for the scorer's embeddings."""
    pos = {iid: i for i, iid in enumerate(emb.instance_id)}
    absent = [i for i in corpus["instance_id"].to_list() if i not in pos]
    if absent:
        raise ValueError(
            f"comparison metrics: {len(absent)} corpus instance(s) have no embedding, e.g. {absent[:3]}; "
            "the embeddings must come from the same corpus (rerun rule comparison_embed)"
        )
    idx = np.array([pos[i] for i in corpus["instance_id"].to_list()], dtype=np.int64)
    region, inference = emb.region[idx], emb.inference[idx]
    out: dict = {"n_instances": len(corpus)}
    chunks = corpus["chunk"].fill_null(0).to_numpy()
    out["retrieval"] = retrieval_metrics(region, inference, chunks) if len(corpus) else None
    # localization with ground-truth boxes: every image, as the leaderboard (instances sharing a box included)
    per_image = [s for _, _, s in gt_box_scores(corpus, region, inference)]
    shared = (
        corpus.group_by("image_id", maintain_order=True)
        .agg((pl.col("bboxes").n_unique() < pl.len()).alias("shared"))["shared"]
        .sum()
    )
    out["localization"] = None
    if per_image:
        loc: dict = {
            "gt_boxes": localization_gt(per_image),
            "n_images": len(per_image),
            "n_images_shared_box": int(shared),
            "auto_boxes": None,
            "oracle_boxes": None,
            "n_images_auto": 0,
        }
        if proposals is not None and len(proposals):
            auto = [[(s, i) for _, s, i in inst] for _, inst in proposal_scores(corpus, inference, proposals)]
            if auto:
                loc.update(
                    auto_boxes=localization_proposals(auto),
                    oracle_boxes=localization_proposals(auto, oracle=True),
                    n_images_auto=len(auto),
                )
        out["localization"] = loc
    out["comparison"] = None
    if ratings is not None and len(ratings):
        out["comparison"] = comparison_accuracy([(s, a1, a2) for _, _, s, a1, a2 in rated_sets(ratings, emb)])
    return out
