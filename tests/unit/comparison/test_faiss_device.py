"""faiss k-means of the comparison-set dedup on the GPU only where one is held, faiss has CUDA and the points are many."""

from __future__ import annotations

import faiss
import numpy as np
import pytest

from squidflow.comparison import dedup


def test_small_sets_and_cpu_jobs_stay_on_the_cpu():
    assert not dedup.faiss_uses_gpu(10**6, "cpu")  # no GPU slot: never
    assert not dedup.faiss_uses_gpu(dedup.FAISS_GPU_MIN_POINTS - 1, "cuda:0")  # too few points to repay the copy
    has_gpu_faiss = hasattr(faiss, "StandardGpuResources") and faiss.get_num_gpus() > 0
    assert dedup.faiss_uses_gpu(dedup.FAISS_GPU_MIN_POINTS, "cuda:0") == has_gpu_faiss


def test_partition_asked_for_on_a_gpu_falls_back_to_the_same_cpu_result_without_gpu_faiss(monkeypatch):
    """A job holding a GPU slot with faiss-cpu installed: the same parts as on the CPU, not an error from faiss."""
    if hasattr(faiss, "StandardGpuResources") and faiss.get_num_gpus() > 0:
        pytest.skip("faiss here has GPU support; this checks the fallback of faiss-cpu")
    monkeypatch.setattr(dedup, "FAISS_GPU_MIN_POINTS", 100)  # make the set 'large'
    x = np.random.default_rng(0).normal(size=(3000, 16)).astype(np.float32)
    on_cpu = dedup.kmeans_partition(x, 800, seed=1)
    asked_gpu = dedup.kmeans_partition(x, 800, seed=1, device="cuda:0")
    assert [p.tolist() for p in on_cpu] == [p.tolist() for p in asked_gpu]
    assert max(len(p) for p in on_cpu) <= 800 and sum(len(p) for p in on_cpu) == 3000


def _rand_index(a: np.ndarray, b: np.ndarray) -> float:
    """Share of point pairs that both labelings put together or both apart (1: the same clusters, up to names)."""
    _, ai = np.unique(a, return_inverse=True)
    _, bi = np.unique(b, return_inverse=True)
    table = np.zeros((ai.max() + 1, bi.max() + 1), dtype=np.int64)
    np.add.at(table, (ai, bi), 1)
    pairs = lambda v: float((v * (v - 1) // 2).sum())  # noqa: E731
    n = len(a)
    total = n * (n - 1) / 2
    together_both = pairs(table)
    return (total + 2 * together_both - pairs(table.sum(1)) - pairs(table.sum(0))) / total


# Stated tolerance between the CPU and the GPU k-means of faiss on the same seed: they draw the same initial
# centroids but sum in different orders, so a few points on a border may change side; on clustered data at least
# 99% of point pairs are grouped alike, and every part respects the size bound on both.
GPU_CPU_RAND_INDEX = 0.99


def _blobs(n: int, dim: int = 32, centres: int = 40, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    c = rng.normal(scale=6.0, size=(centres, dim))
    return (c[rng.integers(centres, size=n)] + rng.normal(size=(n, dim))).astype(np.float32)


def test_cpu_partition_is_the_same_on_the_same_seed_and_bounded():
    x = _blobs(20_000)
    a = dedup.kmeans_partition(x, 2000, seed=3)
    b = dedup.kmeans_partition(x, 2000, seed=3)
    assert [p.tolist() for p in a] == [p.tolist() for p in b]
    assert max(len(p) for p in a) <= 2000 and sorted(np.concatenate(a).tolist()) == list(range(len(x)))


@pytest.mark.gpu
def test_gpu_and_cpu_partitions_agree_within_the_stated_tolerance():
    if not (hasattr(faiss, "StandardGpuResources") and faiss.get_num_gpus() > 0):
        pytest.skip("no faiss with CUDA and a GPU here (make setup FAISS=gpu on a machine with one)")
    x = _blobs(dedup.FAISS_GPU_MIN_POINTS + 10_000)
    assert dedup.faiss_uses_gpu(len(x), "cuda:0")
    labels = {}
    for device in ("cpu", "cuda:0"):
        parts = dedup.kmeans_partition(x, 8000, seed=1, device=device)
        assert max(len(p) for p in parts) <= 8000
        lab = np.empty(len(x), dtype=np.int64)
        for k, p in enumerate(parts):
            lab[p] = k
        labels[device] = lab
    assert _rand_index(labels["cpu"], labels["cuda:0"]) >= GPU_CPU_RAND_INDEX
