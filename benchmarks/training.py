"""Input-pipeline throughput of training: the memory-mapped uint8 cache against decoding each JPEG per item.

Baseline (what the authors' scripts do): a Dataset that opens and decodes the JPEG with PIL on every item, applies
Resize(256) + CenterCrop(256), the variant's D.1 augmentation, ToTensor and Normalize, in the training process
(no workers). squidflow: rows of the cache (`squidflow.training.cache`, decoded once, timed separately) through the same
augmentation on uint8 tensors, then the same scaling and normalisation. Both deliver normalised float batches of 16;
the model is excluded. Both are measured in this run and the ratio is printed.

On a machine with CUDA it also trains resnet50 at 256 px with AMP from the cache, and prints images/s per training
step and the share of step time spent waiting for input; without CUDA that part says it was skipped.

    .venv/bin/python benchmarks/training.py [--images 160] [--variants SD PA AM] [--size 256]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision.transforms import v2

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from squidflow.training.augment import build_augmentation  # noqa: E402
from squidflow.training.cache import build_cache, open_cache  # noqa: E402
from squidflow.training.runs import IMAGENET_MEAN, IMAGENET_STD, CachedImages, normalize  # noqa: E402


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

    def __init__(self, paths: list[Path], variant: str, size: int):
        aug = build_augmentation(variant, size)
        self.transform = v2.Compose([
            v2.Resize(size), v2.CenterCrop(size), *([aug] if aug else []),
            v2.ToImage(), v2.ToDtype(torch.float32, scale=True), v2.Normalize(IMAGENET_MEAN, IMAGENET_STD),
        ])
        self.paths = paths

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, i: int):
        with Image.open(self.paths[i]) as im:
            return self.transform(im.convert("RGB")), 0


def throughput(loader: DataLoader, to_float=None, epochs: int = 1) -> float:
    """Images per second delivered as normalised float batches."""
    n, start = 0, time.perf_counter()
    for _ in range(epochs):
        for images, _labels in loader:
            if to_float is not None:
                images = to_float(images)
            n += len(images)
    return n / (time.perf_counter() - start)


def gpu_step_benchmark(cache: np.ndarray, size: int, steps: int = 60, batch: int = 64) -> None:
    if not torch.cuda.is_available():
        print("GPU step benchmark: skipped (no CUDA device on this machine)")
        return
    from squidflow.training.models import Classifier, load_backbone

    device = "cuda:0"
    backbone, width = load_backbone("resnet50", "none")  # speed does not depend on the weights' values
    model = Classifier(backbone, width, 4).to(device).to(memory_format=torch.channels_last)
    opt = torch.optim.Adam(model.parameters(), lr=1e-5)
    mean = torch.tensor(IMAGENET_MEAN, device=device).view(1, 3, 1, 1)
    std = torch.tensor(IMAGENET_STD, device=device).view(1, 3, 1, 1)
    rows = np.arange(len(cache))
    for workers in (0, 4):
        ds = CachedImages(cache, rows, np.zeros(len(rows)), build_augmentation("SD", size))
        loader = DataLoader(ds, batch_size=batch, shuffle=True, num_workers=workers, pin_memory=True,
                            persistent_workers=workers > 0, drop_last=True)
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
                images = normalize(images.to(device, non_blocking=True), mean, std).contiguous(memory_format=torch.channels_last)
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
        print(f"GPU resnet50 {size}px AMP bf16, batch {batch}, {workers} workers: {n / total:.0f} images/s per training "
              f"step, input wait {100 * wait / total:.1f}% of step time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=160)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--variants", nargs="+", default=["SD", "PA", "NM", "AM"])
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (both pipelines)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        paths = make_jpegs(tmp, args.images)
        images = pl.DataFrame({"image_id": [p.stem for p in paths], "source_path": [str(p) for p in paths],
                               "frame_index": [None] * len(paths)}, schema_overrides={"frame_index": pl.Int64})
        t0 = time.perf_counter()
        build_cache(images, tmp / "cache.npy", args.size, args.size)
        print(f"{args.images} JPEGs 640x480 -> cache at {args.size}px in {time.perf_counter() - t0:.2f}s (once per pool)")
        cache = open_cache(tmp / "cache.npy")
        mean, std = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1), torch.tensor(IMAGENET_STD).view(1, 3, 1, 1)

        print(f"{'variant':8s} {'decode per item':>18s} {'cached tensors':>16s} {'ratio':>7s}")
        for variant in args.variants:
            torch.manual_seed(0)
            base = throughput(DataLoader(DecodeEachItem(paths, variant, args.size), batch_size=16, num_workers=0))
            torch.manual_seed(0)
            ds = CachedImages(cache, np.arange(len(paths)), np.zeros(len(paths), dtype=int),
                              build_augmentation(variant, args.size))
            fast = throughput(DataLoader(ds, batch_size=16, num_workers=0), lambda b: normalize(b, mean, std))
            print(f"{variant:8s} {base:14.0f} im/s {fast:12.0f} im/s {fast / base:6.1f}x")
        gpu_step_benchmark(cache, args.size)


if __name__ == "__main__":
    main()
