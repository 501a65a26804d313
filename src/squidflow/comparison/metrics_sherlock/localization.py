"""Localization (Sherlock §4.2): which region supports which inference?

With ground-truth boxes: an image has n inferences and their n (unaligned) regions, one per instance — two instances
whose annotators drew the same box still count as two regions, as on the leaderboard. The model scores all n×n
(region, inference) pairs and the one-to-one assignment maximising the total score is solved by the `lapjv` package
on the negated scores, exactly as allenai/sherlock's `leaderboard_eval/score_localization.py` does: lapjv casts the
matrix to float32, so scores equal in float32 tie, and ties are broken the way lapjv breaks them (a constant scorer
gets 0, not chance). Accuracy = fraction of regions assigned their own inference, macro-averaged over images.

With automatic proposals: for each inference the top-scoring proposal (the first one on ties) is right when its IoU
with one of the instance's true boxes is above 0.5; accuracy macro-averaged over images. The oracle picks the
proposal of highest IoU instead: the share of inferences that the proposals can localize at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np


def assignment(scores: np.ndarray) -> np.ndarray:
    """For each row (region), the column (inference) of the max-total-score assignment, as the leaderboard solves it:
    lapjv on the negated scores, in float32."""
    import lapjv

    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] != s.shape[1] or s.shape[0] == 0:
        raise ValueError(f"localization needs a non-empty square region × inference score matrix, got shape {s.shape}")
    row_to_col, _, _ = lapjv.lapjv(-s)
    return np.asarray(row_to_col)


def assignment_accuracy(scores: np.ndarray) -> float:
    """Fraction of rows (regions) whose max-total-score assignment is their own column (inference) — S[i, i] true."""
    cols = assignment(scores)
    return float(np.mean(np.arange(len(cols)) == cols))


def localization_gt(per_image_scores: Iterable[np.ndarray]) -> float:
    """Accuracy (%) with ground-truth boxes, macro-averaged over images."""
    accs = [assignment_accuracy(s) for s in per_image_scores]
    if not accs:
        raise ValueError("localization: no image with scores")
    return float(np.mean(accs) * 100)


def iou(a: Sequence[float], b: Sequence[float]) -> float:
    """IoU of two boxes given as (left, top, width, height)."""
    ax2, ay2 = a[0] + a[2], a[1] + a[3]
    bx2, by2 = b[0] + b[2], b[1] + b[3]
    iw = max(0.0, min(ax2, bx2) - max(a[0], b[0]))
    ih = max(0.0, min(ay2, by2) - max(a[1], b[1]))
    inter = iw * ih
    union = a[2] * a[3] + b[2] * b[3] - inter
    return float(inter / union) if union > 0 else 0.0


def region_iou(proposal: Sequence[float], boxes: Iterable[Sequence[float]]) -> float:
    """IoU of a proposal with an instance's region: the best over its boxes (annotators could draw several, and the
    paper counts "a match to any of the labeled bounding boxes")."""
    return max((iou(proposal, b) for b in boxes), default=0.0)


def localization_proposals(
    per_image: Iterable[list[tuple[np.ndarray, np.ndarray]]], thresh: float = 0.5, *, oracle: bool = False
) -> float:
    """Accuracy (%) with proposals: per image a list of (scores of each proposal, IoU of each proposal with the true
    region) per inference; the top-scoring proposal (with `oracle`, the one of highest IoU) is right when its
    IoU > `thresh`. Macro-averaged over images."""
    accs = []
    for inferences in per_image:
        hits = [
            float(np.asarray(ious)[int(np.argmax(ious if oracle else scores))] > thresh) for scores, ious in inferences
        ]
        if hits:
            accs.append(np.mean(hits))
    if not accs:
        raise ValueError("localization: no image with proposals")
    return float(np.mean(accs) * 100)
