"""Input-pipeline throughput of training: the memory-mapped uint8 cache and batched augmentation against decoding and
augmenting each JPEG per item.

Baseline (what the authors' scripts do, experiments/tools/train.py): a Dataset that opens and decodes the JPEG with
PIL on every item, applies Resize(256) + CenterCrop(256) and the method's D.1 augmentation — for GA and AU
Resize(512) of the whole frame, RandomPerspective(0.5), RandomCrop(256) (+ RandomErasing, GaussianBlur) — then
ToTensor and Normalize, in the training process (no workers). squidflow: rows of the cache (`squidflow.training.cache`,
decoded once, timed separately) — GA and AU from the whole-frame cache at a 512 short side with the fused perspective
crop per item — then the method's batched augmentation (`squidflow.training.batch_augment`: each image its own
parameters, the pixel work on the batch's device) and the same scaling and normalisation. Both deliver normalised
float batches of 16 on one CPU thread (torch's and OpenCV's); the model is excluded. Both are measured in this run and the ratio is printed
(goal: >= 5x for every method), by wall time (the goal's measure) and by the process's CPU time (what each pipeline
costs, steadier than wall time on a machine that runs other work). A third column times squidflow's former pipeline (the same cache, the augmentation
per item with torchvision's modules, `squidflow.training.augment`).

On a machine with CUDA it also trains resnet50 at 256 px with AMP from the cache, per method, with the batched
augmentation on the GPU and 4 DataLoader workers reading the cache, and prints images/s per training step and the
share of step time spent waiting for input (goal: < 10% on one H100); without CUDA that part says it was not measured.

    .venv/bin/python -m benchmarks.training [--images 160] [--methods SD PA AM] [--size 256]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision.transforms import v2

from squidflow.encoders.pretrained import IMAGENET_MEAN, IMAGENET_STD
from squidflow.training.augment import build_augmentation, frame_short_side
from squidflow.training.batch_augment import build_batch_augmentation
from squidflow.training.cache import build_cache, build_frame_cache, open_cache, open_frame_cache
from squidflow.training.runs import CachedImages, normalize


def make_jpegs(folder: Path, n: int, width: int = 640, height: int = 480, seed: int = 0) -> list[Path]:
    """Photo-sized JPEGs with smooth structure and noise (so they compress and decode like photos)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width]
    paths = []
    for i in range(n):
        base = np.stack([np.sin(xx / rng.uniform(20, 90) + c) * np.cos(yy / rng.uniform(20, 90)) for c in range(3)], -1)
        image = np.clip(127 + 90 * base + rng.normal(0, 12, base.shape), 0, 255).astype(np.uint8)
        path = folder / f"{i:04d}.jpg"
        Image.fromarray(image).save(path, quality=90)
        paths.append(path)
    return paths


class DecodeEachItem(Dataset):
    """The baseline: PIL open + decode per item, then the torchvision pipeline on the PIL image."""

    def __init__(self, paths: list[Path], method: str, size: int):
        if frame_short_side(method, size):  # GA/AU: the authors' list on the whole decoded frame
            geometry = [v2.Resize(2 * size), v2.RandomPerspective(0.5), v2.RandomCrop(size)]
            rest = [v2.RandomErasing(0.5), v2.GaussianBlur(kernel_size=(5, 9))] if method == "AU" else []
            pil_steps, tensor_steps = geometry, rest
        else:
            aug = build_augmentation(method, size)
            pil_steps, tensor_steps = [v2.Resize(size), v2.CenterCrop(size), *([aug] if aug else [])], []
        self.transform = v2.Compose(
            [
                *pil_steps,
                v2.ToImage(),
                v2.ToDtype(torch.float32, scale=True),
                *tensor_steps,
                v2.Normalize(IMAGENET_MEAN, IMAGENET_STD),
            ]
        )
        self.paths = paths

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, i: int):
        with Image.open(self.paths[i]) as im:
            return self.transform(im.convert("RGB")), 0


def throughput(loader: DataLoader, to_float=None, epochs: int = 1, per_batch=None) -> tuple[float, float]:
    """Images per second delivered as normalised float batches: per second of wall time, and per second of this
    process's CPU time (what the pipeline costs, whatever else the machine runs)."""
    n, start, cpu = 0, time.perf_counter(), time.process_time()
    for _ in range(epochs):
        for images, _labels in loader:
            if per_batch is not None:
                images = per_batch(images)
            if to_float is not None:
                images = to_float(images)
            n += len(images)
    return n / (time.perf_counter() - start), n / max(time.process_time() - cpu, 1e-9)


def gpu_step_benchmark(
    cache: np.ndarray, frames, size: int, methods: list[str], steps: int = 60, batch: int = 64
) -> dict[str, tuple[float, float]]:
    """Per method: (images/s per training step, share of step time spent waiting for input); printed too."""
    if not torch.cuda.is_available():
        print(
            "GPU step benchmark: not measured — no CUDA device on this machine (goal: input wait < 10% of step "
            "time on one H100, every method)"
        )
        return {}
    figures = {}
    from squidflow.training.models import Classifier, load_backbone

    device = "cuda:0"
    backbone, width = load_backbone("resnet50", "none")  # speed does not depend on the weights' values
    model = Classifier(backbone, width, 4).to(device).to(memory_format=torch.channels_last)
    opt = torch.optim.Adam(model.parameters(), lr=1e-5)
    mean = torch.tensor(IMAGENET_MEAN, device=device).view(1, 3, 1, 1)
    std = torch.tensor(IMAGENET_STD, device=device).view(1, 3, 1, 1)
    rows = np.arange(len(cache))
    workers = 4
    for method in methods:
        per_item, per_batch = build_batch_augmentation(method, size)
        source = frames if frame_short_side(method, size) else cache
        ds = CachedImages(source, rows, np.zeros(len(rows)), per_item)
        loader = DataLoader(
            ds,
            batch_size=batch,
            shuffle=True,
            num_workers=workers,
            pin_memory=True,
            persistent_workers=workers > 0,
            drop_last=True,
        )
        wait = total = 0.0
        n = done = 0
        while done < steps:
            it = iter(loader)
            while done < steps:
                t0 = time.perf_counter()
                try:
                    images, labels = next(it)
                except StopIteration:
                    break
                images = images.to(device, non_blocking=True)
                if per_batch is not None:
                    images = per_batch(images)
                images = normalize(images, mean, std).contiguous(memory_format=torch.channels_last)
                labels = labels.to(device).long()
                torch.cuda.synchronize()
                t1 = time.perf_counter()
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = torch.nn.functional.cross_entropy(model(images).float(), labels)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                torch.cuda.synchronize()
                t2 = time.perf_counter()
                if done >= 5:  # warm-up steps excluded
                    wait += t1 - t0
                    total += t2 - t0
                    n += len(images)
                done += 1
        print(
            f"GPU {torch.cuda.get_device_name(0)} resnet50 {size}px AMP bf16, batch {batch}, {workers} workers, {method} "
            f"augmented on the GPU: {n / total:.0f} images/s per training step, input wait {100 * wait / total:.1f}% "
            "of step time (goal < 10%)"
        )
        figures[method] = (n / total, wait / total)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=160)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--methods", nargs="+", default=["SD", "PA", "GA", "NM", "AU", "AM"])
    parser.add_argument("--threads", type=int, default=1, help="torch and OpenCV CPU threads (both pipelines)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved timing rounds per method (the best counts)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    # OpenCV (hue, AugMix's warps and filters) would spread a 256-px image over every core: AM then measured 6.4x by
    # wall time on 2 idle cores but 4.3x by CPU time; on one thread it is 6.2x by both, so threads bought nothing
    import cv2

    cv2.setNumThreads(args.threads)

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        paths = make_jpegs(tmp, args.images)
        images = pl.DataFrame(
            {
                "image_id": [p.stem for p in paths],
                "source_path": [str(p) for p in paths],
                "frame_index": [None] * len(paths),
            },
            schema_overrides={"frame_index": pl.Int64},
        )
        t0 = time.perf_counter()
        build_cache(images, tmp / "cache.npy", args.size, args.size)
        print(
            f"{args.images} JPEGs 640x480 -> cache at {args.size}px in {time.perf_counter() - t0:.2f}s (once per pool)"
        )
        cache = open_cache(tmp / "cache.npy")
        frames = None
        if any(frame_short_side(v, args.size) for v in args.methods):
            t0 = time.perf_counter()
            index = build_frame_cache(
                images.with_row_index("row").with_columns(pl.col("row").cast(pl.Int64)),
                tmp / "frames.npy",
                2 * args.size,
            )
            print(
                f"{args.images} JPEGs -> whole-frame cache at a {2 * args.size}px short side in "
                f"{time.perf_counter() - t0:.2f}s (once per pool, GA/AU only)"
            )
            frames = open_frame_cache(tmp / "frames.npy", index)
        mean, std = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1), torch.tensor(IMAGENET_STD).view(1, 3, 1, 1)
        rows, labels = np.arange(len(paths)), np.zeros(len(paths), dtype=int)
        to_float = lambda b: normalize(b, mean, std)  # noqa: E731

        print(
            f"{'method':8s} {'decode per item':>16s} {'squidflow':>14s} {'ratio':>6s}  {'per-item augmentation':>22s}"
            "   ratio by CPU time"
        )
        for method in args.methods:
            source = frames if frame_short_side(method, args.size) else cache
            per_item, per_batch = build_batch_augmentation(method, args.size)
            base = fast = old_rate = base_cpu = fast_cpu = 0.0
            for _ in range(args.rounds):  # interleaved rounds, the best of each counts (a shared machine is noisy)
                torch.manual_seed(0)
                wall, cpu = throughput(DataLoader(DecodeEachItem(paths, method, args.size), batch_size=16))
                base, base_cpu = max(base, wall), max(base_cpu, cpu)
                torch.manual_seed(0)
                ds = CachedImages(source, rows, labels, per_item)
                wall, cpu = throughput(DataLoader(ds, batch_size=16), to_float, per_batch=per_batch)
                fast, fast_cpu = max(fast, wall), max(fast_cpu, cpu)
                torch.manual_seed(0)
                old = CachedImages(source, rows, labels, build_augmentation(method, args.size))
                old_rate = max(old_rate, throughput(DataLoader(old, batch_size=16), to_float)[0])
            print(
                f"{method:8s} {base:11.0f} im/s {fast:9.0f} im/s {fast / base:5.1f}x  {old_rate:9.0f} im/s "
                f"(squidflow {fast / old_rate:.1f}x)  {fast_cpu / base_cpu:5.1f}x  "
                f"goal >= 5x: {'met' if fast / base >= 5 else 'NOT met'}"
            )
        gpu_step_benchmark(cache, frames, args.size, args.methods)


if __name__ == "__main__":
    main()
