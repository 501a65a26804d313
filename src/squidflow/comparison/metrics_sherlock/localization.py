"""Localization (Sherlock §4.2): which region supports which inference?

With ground-truth boxes: an image has n inferences and their n (unaligned) regions; the model scores all n×n
(region, inference) pairs and the one-to-one assignment maximising the total score is computed with lapjv (the `lap`
package) on the negated scores. Accuracy = fraction of regions assigned their own inference, macro-averaged over
images. With automatic proposals: for each inference the top-scoring box is right when its IoU with the true box is
above 0.5; accuracy macro-averaged over images.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np


def assignment_accuracy(scores: np.ndarray) -> float:
    """Fraction of rows (regions) whose max-total-score assignment is their own column (inference) — S[i, i] true."""
    import lap

    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] != s.shape[1]:
        raise ValueError(f"localization needs a square region × inference score matrix, got shape {s.shape}")
    n = len(s)
    if n == 1:
        return 1.0
    _, x, _ = lap.lapjv(-s, extend_cost=False)
    return float(np.mean(np.asarray(x) == np.arange(n)))


def localization_gt(per_image_scores: Iterable[np.ndarray]) -> float:
    """Accuracy (%) with ground-truth boxes, macro-averaged over images."""
    accs = [assignment_accuracy(s) for s in per_image_scores]
    if not accs:
        raise ValueError("localization: no image with scores")
    return float(100 * np.mean(accs))


def iou(a: Sequence[float], b: Sequence[float]) -> float:
    """IoU of two boxes given as (left, top, width, height)."""
    ax2, ay2 = a[0] + a[2], a[1] + a[3]
    bx2, by2 = b[0] + b[2], b[1] + b[3]
    iw = max(0.0, min(ax2, bx2) - max(a[0], b[0]))
    ih = max(0.0, min(ay2, by2) - max(a[1], b[1]))
    inter = iw * ih
    union = a[2] * a[3] + b[2] * b[3] - inter
    return float(inter / union) if union > 0 else 0.0


def localization_proposals(per_image: Iterable[list[tuple[np.ndarray, np.ndarray]]], thresh: float = 0.5) -> float:
    """Accuracy (%) with proposals: per image a list of (scores of each proposal, IoU of each proposal with the true
    box) per inference; the top-scoring proposal is right when its IoU > `thresh`. Macro-averaged over images."""
    accs = []
    for inferences in per_image:
        hits = [float(np.asarray(ious)[int(np.argmax(scores))] > thresh) for scores, ious in inferences]
        if hits:
            accs.append(np.mean(hits))
    if not accs:
        raise ValueError("localization: no image with proposals")
    return float(100 * np.mean(accs))
