"""The three Sherlock metrics of a plausibility scorer over a comparison corpus (the `comparison_metrics` rule).

Prediction files here are the scorer's embeddings (`schemas.COMPARISON_EMBEDDINGS`): every score the metrics need is
a dot product of a region vector and an inference vector, so retrieval chunks and per-image localization matrices
are computed on the fly. The comparison metric needs human ratings: a CSV with query_id, candidate_id, annot1,
annot2 (Likert 1–3), e.g. the results of the comparison HITs.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from squidflow.comparison.metrics_sherlock.comparison import comparison_accuracy
from squidflow.comparison.metrics_sherlock.localization import localization_gt
from squidflow.comparison.metrics_sherlock.retrieval import retrieval_metrics
from squidflow.comparison.plausibility import DualEmbeddings

RATING_COLUMNS = ("query_id", "candidate_id", "annot1", "annot2")


def evaluate(corpus: pl.DataFrame, emb: DualEmbeddings, ratings: pl.DataFrame | None = None) -> dict:
    """{"retrieval": {...}, "localization": {...}, "comparison": {...} | None} for the scorer's embeddings."""
    pos = {iid: i for i, iid in enumerate(emb.instance_id)}
    idx = np.array([pos[i] for i in corpus["instance_id"].to_list()])
    region, inference = emb.region[idx], emb.inference[idx]
    out: dict = {"n_instances": len(corpus)}
    chunks = corpus["chunk"].fill_null(0).to_numpy()
    out["retrieval"] = retrieval_metrics(region, inference, chunks)
    # localization with ground-truth boxes: per image, its regions × its inferences — images with 2+ instances
    # whose regions all differ (identical regions, e.g. whole frames, make the assignment meaningless)
    per_image = []
    for (_,), part in corpus.with_row_index("_row").group_by("image_id", maintain_order=True):
        rows = part["_row"].to_numpy()
        boxes = {str(b) for b in part["bboxes"].to_list()}
        if len(rows) >= 2 and len(boxes) == len(rows):
            per_image.append(region[rows] @ inference[rows].T)
    out["localization"] = {"gt_boxes": localization_gt(per_image), "n_images": len(per_image)} if per_image else None
    out["comparison"] = None
    if ratings is not None and len(ratings):
        missing = [c for c in RATING_COLUMNS if c not in ratings.columns]
        if missing:
            raise ValueError(f"comparison ratings: missing column(s) {missing}; expected {RATING_COLUMNS}")
        sets = []
        for (qid,), part in ratings.group_by("query_id", maintain_order=True):
            q = pos.get(qid)
            cands = [pos.get(c) for c in part["candidate_id"].to_list()]
            if q is None or any(c is None for c in cands):
                raise ValueError(f"comparison ratings: query {qid} or one of its candidates is not in the corpus")
            scores = emb.inference[cands] @ emb.region[q]
            sets.append((scores, part["annot1"].to_numpy(), part["annot2"].to_numpy()))
        out["comparison"] = comparison_accuracy(sets)
    return out
