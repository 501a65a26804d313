"""Retrieval (Sherlock §4.1): given a chunk of ~1K (image+region, inference) pairs, rank the true inference.

In a chunk's score matrix S (rows: image+regions, columns: inferences, S[i, i] the true pair), image→text rank of
row i is the rank of S[i, i] in its row (1 = best), text→image rank that of S[i, i] in its column. Ties get the
average rank (as scipy.stats.rankdata gives them; counted here without sorting the matrix), so a constant scorer
gets (n+1)/2, not 1. P@1 = % of rows whose true inference ranks 1. This is allenai/sherlock's
`leaderboard_eval/score_retrieval.py`, which scores one chunk per call; the paper reports each number averaged over
the 23 chunks of the validation/test set, and squidflow reports both.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

METRICS = ("im2txt", "txt2im", "p_at_1")


def diagonal_ranks(scores: np.ndarray, axis: int) -> np.ndarray:
    """The rank of each S[i, i] among its row (axis=1) or column (axis=0), highest = 1, ties averaged: exactly
    np.diagonal(scipy.stats.rankdata(-S, axis=axis)) (entries above + (entries equal + 1) / 2, all halves, exact),
    without sorting the whole matrix."""
    s = np.asarray(scores, dtype=np.float64)
    diag = np.diagonal(s)
    other = s if axis == 1 else s.T
    above = (other > diag[:, None]).sum(axis=1)
    equal = (other == diag[:, None]).sum(axis=1)
    return above + (equal + 1) / 2


def retrieval_chunk(scores: np.ndarray) -> dict[str, float]:
    """im2txt and txt2im mean rank (lower is better) and P@1 (%) of one square score matrix."""
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] != s.shape[1] or s.shape[0] == 0:
        raise ValueError(f"retrieval needs a non-empty square score matrix, got shape {s.shape}")
    if np.isnan(s).any():
        raise ValueError(
            f"retrieval: the score matrix has {int(np.isnan(s).sum())} NaN score(s); the scorer's "
            "embeddings must be finite"
        )
    im2txt = diagonal_ranks(s, axis=1)
    txt2im = diagonal_ranks(s, axis=0)
    p_at_1 = float(100 * np.mean(im2txt == 1.0))
    return {"im2txt": float(im2txt.mean()), "txt2im": float(txt2im.mean()), "p_at_1": p_at_1}


def chunk_scores(
    region: np.ndarray, inference: np.ndarray, chunks: np.ndarray
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Per chunk (ascending): its chunk id, its rows (indices into region/inference, in order) and its dual-encoder
    score matrix region[rows] @ inference[rows].T — one chunk at a time, a 1K chunk is 4 MB."""
    chunks = np.asarray(chunks)
    for c in np.unique(chunks):
        rows = np.flatnonzero(chunks == c)
        yield int(c), rows, region[rows] @ inference[rows].T


def retrieval_metrics(region: np.ndarray, inference: np.ndarray, chunks: np.ndarray) -> dict:
    """Dual-encoder retrieval: the metrics of every chunk (`per_chunk`, with its id and size `n`) and their mean over
    chunks (`im2txt`, `txt2im`, `p_at_1`, the paper's numbers)."""
    per = [{"chunk": c, "n": len(rows), **retrieval_chunk(s)} for c, rows, s in chunk_scores(region, inference, chunks)]
    if not per:
        raise ValueError("retrieval: no chunk (the corpus is empty)")
    out: dict = {k: float(np.mean([p[k] for p in per])) for k in METRICS}
    out["n_chunks"] = len(per)
    out["per_chunk"] = per
    return out
