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
