"""Soft and hard text deduplication of the comparison-set pool (Sherlock Appendix E).

Soft dedup: hierarchical (agglomerative) clustering of the SBERT embeddings of the inferences into round(0.8 × N)
clusters, keeping one inference per cluster — semantically repeated inferences ("it is daytime", "it is during the
day") are thinned out while every region of meaning stays represented. Hard dedup: no verbatim string more than
three times.

Exact agglomerative clustering needs all n(n−1)/2 distances: 19K inferences (the Sherlock validation set) is
1.5 GB of float64 and 363K (the whole corpus) would be 527 GB. So up to `exact_max` points we cluster exactly, and
beyond it a faiss k-means first partitions the points into parts of at most `exact_max`, each part is clustered
exactly, and the cluster budget is shared between parts in proportion to their sizes (largest remainders), so the
total is still exactly round(0.8 × N) and memory stays bounded by one part's distance matrix. Near neighbours land in
the same k-means part, so the agglomerative merges inside parts are mostly the merges exact clustering would make
(benchmarks/comparison.py measures the agreement). The k-means runs on a GPU (faiss-gpu) when the caller holds one
(`device` cuda), the installed faiss was built with CUDA, and the points are many (`FAISS_GPU_MIN_POINTS`, Sherlock's
training-scale corpus); otherwise on the CPU.
"""

from __future__ import annotations

import logging
import math

import numpy as np
import polars as pl
from tqdm import tqdm

log = logging.getLogger(__name__)

LINKAGES = ("ward", "average", "complete", "single")
FAISS_GPU_MIN_POINTS = 50_000  # below this the CPU k-means is done before the points would have reached a GPU


def faiss_uses_gpu(n_points: int, device: str = "cpu") -> bool:
    """k-means of `n_points` on the GPU: only for a caller holding a CUDA device (a GPU slot), with a faiss built
    with CUDA (faiss-gpu; faiss-cpu has no GPU) that sees a GPU, and with enough points to repay the transfer."""
    if not str(device).startswith("cuda") or n_points < FAISS_GPU_MIN_POINTS:
        return False
    import faiss

    return hasattr(faiss, "StandardGpuResources") and faiss.get_num_gpus() > 0


def n_soft_clusters(n: int, ratio: float = 0.8) -> int:
    """round(ratio × n), at least 1 for a non-empty set (Sherlock: 80% of the inferences survive)."""
    return max(1, int(round(ratio * n))) if n else 0


def _condensed_distances(x: np.ndarray) -> np.ndarray:
    """Condensed Euclidean distances via one matrix product (BLAS), much faster than pdist for 384-d vectors."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    sq = np.einsum("ij,ij->i", x, x)
    d = x @ x.T
    np.multiply(d, -2.0, out=d)
    d += sq[:, None]
    d += sq[None, :]
    np.maximum(d, 0.0, out=d)
    np.sqrt(d, out=d)
    np.fill_diagonal(d, 0.0)
    from scipy.spatial.distance import squareform  # here, not at the top: the workflow imports this module to parse

    d = np.maximum(d, d.T)  # exact symmetry, which squareform expects
    return squareform(d, checks=False).astype(np.float64)


def cut_tree_labels(z: np.ndarray, n: int, k: int) -> np.ndarray:
    """Labels 0..k-1 for the partition after the first n−k merges of linkage `z` (exactly k clusters, ties or not).

    `fcluster(criterion="maxclust")` cuts at a distance and can return fewer clusters when merge heights tie
    (verbatim duplicates merge at height 0); applying the merges one by one always gives exactly k.
    """
    parent = np.arange(2 * n - 1)

    def find(i: int) -> int:
        root = i
        while parent[root] != root:
            root = parent[root]
        while parent[i] != root:
            parent[i], i = root, parent[i]
        return root

    for step in range(n - k):
        a, b = int(z[step, 0]), int(z[step, 1])
        parent[find(a)] = n + step
        parent[find(b)] = n + step
    roots = np.array([find(i) for i in range(n)])
    _, labels = np.unique(roots, return_inverse=True)
    return labels.astype(np.int64)


def agglomerative_labels(x: np.ndarray, k: int, method: str = "ward") -> np.ndarray:
    """Exact agglomerative clustering of the rows of `x` into exactly `k` clusters."""
    n = len(x)
    if method not in LINKAGES:
        raise ValueError(f"comparison.soft_dedup.linkage = {method!r}: must be one of {LINKAGES}")
    if not 1 <= k <= max(n, 1):
        raise ValueError(f"cannot cut {n} points into {k} clusters")
    if n <= 1 or k == n:
        return np.arange(n, dtype=np.int64)
    from scipy.cluster.hierarchy import linkage  # as above: scipy costs every Snakemake start-up 0.2-0.4 s

    z = linkage(_condensed_distances(x), method=method)
    return cut_tree_labels(z, n, k)


def _split_budget(sizes: list[int], k: int) -> list[int]:
    """Share k clusters among parts in proportion to their sizes (largest remainders), each part 1..size."""
    n = sum(sizes)
    raw = [k * s / n for s in sizes]
    alloc = [min(s, max(1, math.floor(r))) for s, r in zip(sizes, raw, strict=True)]
    diff = k - sum(alloc)
    order = sorted(range(len(sizes)), key=lambda i: raw[i] - math.floor(raw[i]), reverse=diff > 0)
    while diff != 0:
        moved = False
        for i in order:
            if diff > 0 and alloc[i] < sizes[i]:
                alloc[i] += 1
                diff -= 1
                moved = True
            elif diff < 0 and alloc[i] > 1:
                alloc[i] -= 1
                diff += 1
                moved = True
            if diff == 0:
                break
        if not moved:
            raise ValueError(f"cannot share {k} clusters among parts of sizes {sizes}")
    return alloc


def kmeans_partition(
    x: np.ndarray, max_part: int, *, seed: int = 0, niter: int = 20, device: str = "cpu"
) -> list[np.ndarray]:
    """Index arrays partitioning the rows of `x` into parts of at most `max_part` rows (faiss k-means, recursive;
    on the GPU where `faiss_uses_gpu` says so)."""
    import faiss

    x = np.ascontiguousarray(x, dtype=np.float32)
    todo = [np.arange(len(x))]
    parts: list[np.ndarray] = []
    while todo:
        idx = todo.pop()
        if len(idx) <= max_part:
            parts.append(idx)
            continue
        n_parts = math.ceil(len(idx) / (max_part / 2))
        km = faiss.Kmeans(
            x.shape[1],
            n_parts,
            niter=niter,
            seed=seed,
            verbose=False,
            min_points_per_centroid=1,
            max_points_per_centroid=max(256, math.ceil(200_000 / n_parts)),
            gpu=faiss_uses_gpu(len(idx), device),
        )
        km.train(x[idx])
        _, assign = km.index.search(x[idx], 1)
        assign = assign[:, 0]
        groups = [idx[assign == c] for c in range(n_parts) if np.any(assign == c)]
        if len(groups) == 1:  # k-means could not split (identical points): cut into chunks instead
            groups = list(np.array_split(idx, n_parts))
        todo.extend(groups)
    return sorted(parts, key=lambda p: int(p[0]))


def soft_dedup_labels(
    x: np.ndarray,
    k: int,
    *,
    exact_max: int = 8000,
    method: str = "ward",
    seed: int = 0,
    progress: bool = True,
    device: str = "cpu",
) -> np.ndarray:
    """Cluster labels (0..k-1, exactly k distinct) for the rows of `x`: exact up to `exact_max` rows, else k-means
    parts of at most `exact_max` rows each clustered exactly with a size-proportional share of the k clusters."""
    n = len(x)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if n <= exact_max:
        return agglomerative_labels(x, k, method)
    parts = kmeans_partition(x, exact_max, seed=seed, device=device)
    budget = _split_budget([len(p) for p in parts], k)
    log.info(
        "soft dedup: %d points > exact_max=%d, %d k-means parts of %d..%d points",
        n,
        exact_max,
        len(parts),
        min(map(len, parts)),
        max(map(len, parts)),
    )
    labels = np.empty(n, dtype=np.int64)
    offset = 0
    for idx, kp in tqdm(list(zip(parts, budget, strict=True)), desc="soft dedup parts", disable=not progress):
        labels[idx] = agglomerative_labels(x[idx], kp, method) + offset
        offset += kp
    return labels


def pick_one_per_cluster(labels: np.ndarray, *, seed: int = 0) -> np.ndarray:
    """Indices of one member per cluster, sampled uniformly with a fixed seed (Sherlock samples one per cluster)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(labels))
    _, first = np.unique(labels[order], return_index=True)
    return np.sort(order[first])


def hard_dedup(df: pl.DataFrame, *, column: str = "inference", max_copies: int = 3, seed: int = 0) -> pl.DataFrame:
    """Keep at most `max_copies` rows per verbatim value of `column` (a seeded random choice among the copies)."""
    if df.is_empty():
        return df
    rng = np.random.default_rng(seed)
    return (
        df.with_columns(pl.Series("_r", rng.permutation(len(df))))
        .with_columns(pl.col("_r").rank("ordinal").over(column).alias("_k"))
        .filter(pl.col("_k") <= max_copies)
        .drop("_r", "_k")
    )


def adjusted_rand_index(a: np.ndarray, b: np.ndarray) -> float:
    """Adjusted Rand index of two labelings (1 = identical partitions, ~0 = chance), for the agreement benchmark."""
    a = np.unique(np.asarray(a), return_inverse=True)[1]
    b = np.unique(np.asarray(b), return_inverse=True)[1]
    n = len(a)
    pairs = a.astype(np.int64) * (b.max() + 1) + b
    nij = np.unique(pairs, return_counts=True)[1].astype(np.float64)
    ai = np.bincount(a).astype(np.float64)
    bj = np.bincount(b).astype(np.float64)

    def comb2(v):
        return v * (v - 1) / 2

    index = comb2(nij).sum()
    ea = comb2(ai).sum()
    eb = comb2(bj).sum()
    expected = ea * eb / comb2(n)
    maximum = (ea + eb) / 2
    return float((index - expected) / (maximum - expected)) if maximum != expected else 1.0
