"""Retrieval (Sherlock §4.1): given a chunk of ~1K (image+region, inference) pairs, rank the true inference.

In a chunk's score matrix S (rows: image+regions, columns: inferences, S[i, i] the true pair), image→text rank of
row i is the rank of S[i, i] in its row (1 = best), text→image rank that of S[i, i] in its column. Ties get the
average rank (scipy.stats.rankdata), so a constant scorer gets (n+1)/2, not 1. P@1 = % of rows whose true inference
ranks 1. The paper reports each averaged over the 23 chunks of the validation/test set.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata


def retrieval_chunk(scores: np.ndarray) -> dict[str, float]:
    """im2txt and txt2im mean rank (lower is better) and P@1 (%) of one square score matrix."""
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] != s.shape[1] or s.shape[0] == 0:
        raise ValueError(f"retrieval needs a non-empty square score matrix, got shape {s.shape}")
    im2txt = np.diagonal(rankdata(-s, axis=1))
    txt2im = np.diagonal(rankdata(-s, axis=0))
    return {"im2txt": float(im2txt.mean()), "txt2im": float(txt2im.mean()), "p_at_1": float(100 * np.mean(im2txt == 1.0))}


def retrieval_metrics(region: np.ndarray, inference: np.ndarray, chunks: np.ndarray) -> dict[str, float]:
    """Dual-encoder retrieval: per chunk the score matrix region[c] @ inference[c].T, metrics averaged over chunks."""
    chunks = np.asarray(chunks)
    per = [retrieval_chunk(region[chunks == c] @ inference[chunks == c].T) for c in np.unique(chunks)]
    out = {k: float(np.mean([p[k] for p in per])) for k in ("im2txt", "txt2im", "p_at_1")}
    out["n_chunks"] = len(per)
    return out
