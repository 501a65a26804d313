"""The GPU figures in one table (`make bench-gpu`): what only a machine with CUDA can measure.

    .venv/bin/python -m benchmarks.gpu [--images 4096] [--steps 60] [--points 363000] [--no-pytest]

1. Featurization: ResNet50 (224 px, AMP, channels_last, batch 256) over 1280x720 JPEGs, decoding included —
   squidflow's path (nvJPEG decode on the GPU) against a DataLoader of PIL workers in the same run; images/s and the
   share of the wall time the GPU ran the model (goals: >= 2,000 images/s on one H100, busy > 90%).
2. Training input: resnet50 256 px AMP training steps from the uint8 cache with the batched augmentation on the GPU,
   per variant; images/s and the share of step time spent waiting for input (goal: < 10%).
3. faiss k-means at Sherlock's scale: the soft dedup's partition of `--points` (Sherlock's 363K training
   inferences) 384-d SBERT-like vectors into parts of at most 8,000, on the GPU (faiss-gpu) against the CPU in the
   same run, with the Rand index between the two partitions (tests/unit/comparison/test_faiss_device.py states the tolerance).
4. `pytest -m gpu`: the tests that need a CUDA device, passed / failed / skipped.

Without CUDA it prints one line saying so and measures nothing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def featurization(folder: Path, n: int) -> list[tuple[str, str, str]]:
    import os

    from benchmarks.frames import backbone_or_random
    from benchmarks.training import make_jpegs
    from squidflow.frames.featurize import FeaturesConfig, embed_images

    paths = [str(p) for p in make_jpegs(folder, 64, width=1280, height=720)]
    paths = (paths * (n // len(paths) + 1))[:n]
    bb = backbone_or_random("resnet50")
    workers = max(1, len(os.sched_getaffinity(0)) - 2)
    cfg = FeaturesConfig(backbone="resnet50", batch_size=256, num_workers=workers)
    embed_images(paths[:512], cfg, device="cuda", backbone=bb)  # warm-up: cuDNN autotuning, nvJPEG handles
    embed_images(paths[:512], cfg, device="cuda", backbone=bb, decode="pil")
    ours: dict = {}
    embed_images(paths, cfg, device="cuda", backbone=bb, stats=ours)
    base: dict = {}
    embed_images(paths, cfg, device="cuda", backbone=bb, decode="pil", stats=base)
    rate, base_rate = ours["images"] / ours["seconds"], base["images"] / base["seconds"]
    busy = ours.get("busy_share", 0.0)
    return [
        (
            "featurize resnet50, images/s incl. JPEG decode",
            f"{rate:,.0f} ({rate / base_rate:.2f}x PIL workers)",
            f">= 2,000: {'met' if rate >= 2000 else 'NOT met'}",
        ),
        ("featurize resnet50, GPU busy share", f"{100 * busy:.0f}%", f"> 90%: {'met' if busy > 0.9 else 'NOT met'}"),
    ]


def training_input(folder: Path, steps: int) -> list[tuple[str, str, str]]:
    import polars as pl

    from benchmarks.training import gpu_step_benchmark, make_jpegs
    from squidflow.training.cache import build_cache, build_frame_cache, open_cache, open_frame_cache

    paths = make_jpegs(folder, 256)
    images = pl.DataFrame({"image_id": [p.stem for p in paths], "source_path": [str(p) for p in paths],
                           "frame_index": [None] * len(paths)}, schema_overrides={"frame_index": pl.Int64})  # fmt: skip
    build_cache(images, folder / "cache.npy", 256, 256)
    index = build_frame_cache(images.with_row_index("row").with_columns(pl.col("row").cast(pl.Int64)),
                              folder / "frames.npy", 512)  # fmt: skip
    cache, frames = open_cache(folder / "cache.npy"), open_frame_cache(folder / "frames.npy", index)
    figures = gpu_step_benchmark(cache, frames, 256, ["SD", "PA", "GA", "NM", "AU", "AM"], steps=steps)
    return [
        (
            f"training step {v}, input wait share",
            f"{100 * wait:.1f}% at {rate:,.0f} images/s",
            f"< 10%: {'met' if wait < 0.1 else 'NOT met'}",
        )
        for v, (rate, wait) in figures.items()
    ]


def faiss_kmeans(points: int) -> list[tuple[str, str, str]]:
    import faiss
    import numpy as np

    from squidflow.comparison import dedup
    from tests.unit.comparison.test_faiss_device import GPU_CPU_RAND_INDEX, _blobs, _rand_index

    if not (hasattr(faiss, "StandardGpuResources") and faiss.get_num_gpus() > 0):
        return [("faiss k-means, Sherlock scale", "not measured", "faiss has no CUDA here: make setup FAISS=gpu")]
    x = _blobs(points, dim=384, centres=400)
    labels, seconds = {}, {}
    for device in ("cuda:0", "cpu"):
        t0 = time.perf_counter()
        parts = dedup.kmeans_partition(x, 8000, seed=0, device=device)
        seconds[device] = time.perf_counter() - t0
        lab = np.empty(len(x), dtype=np.int64)
        for k, p in enumerate(parts):
            lab[p] = k
        labels[device] = lab
    agree = _rand_index(labels["cpu"], labels["cuda:0"])
    return [
        (
            f"faiss k-means partition, {points:,} x 384",
            f"{seconds['cuda:0']:.1f} s on the GPU "
            f"({seconds['cpu'] / seconds['cuda:0']:.1f}x the CPU's {seconds['cpu']:.1f} s)",
            f"faster than the CPU: {'met' if seconds['cuda:0'] < seconds['cpu'] else 'NOT met'}",
        ),
        (
            "faiss k-means, GPU vs CPU partition",
            f"Rand index {agree:.4f}",
            f">= {GPU_CPU_RAND_INDEX}: {'met' if agree >= GPU_CPU_RAND_INDEX else 'NOT met'}",
        ),
    ]


def gpu_tests() -> list[tuple[str, str, str]]:
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-m", "gpu", "-p", "no:cacheprovider"], cwd=ROOT,
                         capture_output=True, text=True)  # fmt: skip
    last = (res.stdout.strip().splitlines() or ["no output"])[-1]
    return [("pytest -m gpu", last.strip("= "), "all pass: " + ("met" if res.returncode == 0 else "NOT met"))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--images", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--points", type=int, default=363_000)
    ap.add_argument("--no-pytest", action="store_true")
    args = ap.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("make bench-gpu: no CUDA device on this machine (torch.cuda.is_available() is False); nothing measured")
        return
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "f").mkdir()
        (Path(tmp) / "t").mkdir()
        rows += featurization(Path(tmp) / "f", args.images)
        rows += training_input(Path(tmp) / "t", args.steps)
    rows += faiss_kmeans(args.points)
    if not args.no_pytest:
        rows += gpu_tests()
    name = torch.cuda.get_device_name(0)
    width = max(len(r[0]) for r in rows)
    vwidth = max(len(r[1]) for r in rows)
    print(f"\nGPU figures on {name} (torch {torch.__version__}, CUDA {torch.version.cuda})")
    print(f"| {'figure':{width}s} | {'measured':{vwidth}s} | goal |")
    print(f"|{'-' * (width + 2)}|{'-' * (vwidth + 2)}|------|")
    for figure, value, goal in rows:
        print(f"| {figure:{width}s} | {value:{vwidth}s} | {goal} |")


if __name__ == "__main__":
    main()
