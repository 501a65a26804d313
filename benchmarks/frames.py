"""Benchmarks of the frames stage; each figure is a ratio against a baseline measured in the same run.

    .venv/bin/python benchmarks/frames.py [--cache-dir results/benchmark_cache] [--images 64] [--threads 1]

1. 36 evenly spaced frames of a 10-minute 1280x720 H.264 video (GOP 250, B-frames; generated once into the cache
   dir): the default even mode, and the `exact_times` option, against decoding every frame with OpenCV as the SQUID-E
   release script does (goals: >= 10x and >= 2.5x).
2. Exact mode, 6 scattered frame numbers, against OpenCV reading sequentially up to the last of them (goal >= 5x),
   checking that the frames are the same (PSNR >= 40 dB, closer to frame k than to k-1 and k+1).
3. Featurization images/s on CPU for both backbones, batched DataLoader vs one image at a time (decode included).
   On a GPU (when one is present) resnet50 images/s end to end (goal >= 2,000 on one H100).
ResNet50 timings use random weights when the ImageNet weights are not cached (speed does not depend on them).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from squidflow.backbones import Backbone, WeightsError, load_backbone  # noqa: E402
from squidflow.frames.extract import decode_ranks, even_targets, frame_table, save_image  # noqa: E402
from squidflow.frames.featurize import FeaturesConfig, embed_images, load_image  # noqa: E402


def make_video(cache: Path) -> Path:
    path = cache / "bench_10min_1280x720_gop250_bf2.mp4"
    if not path.exists():
        print(f"generating {path} (once; about a minute)...", flush=True)
        tmp = path.with_suffix(".tmp.mp4")
        subprocess.run(
            ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25", "-t", "600",
             "-c:v", "libx264", "-preset", "ultrafast", "-g", "250", "-keyint_min", "250", "-sc_threshold", "0",
             "-bf", "2", "-pix_fmt", "yuv420p", str(tmp)],
            check=True,
        )
        tmp.rename(path)
    return path


def opencv_read(path: Path, upto: int | None = None) -> tuple[float, dict[int, np.ndarray]]:
    """Seconds to read frames with OpenCV's sequential reader (all, or up to `upto`), keeping none but asked ones."""
    t0 = time.perf_counter()
    cap = cv2.VideoCapture(str(path))
    k, n = 0, 0
    while upto is None or k <= upto:
        ok, _ = cap.read()
        if not ok:
            break
        k += 1
        n += 1
    cap.release()
    return time.perf_counter() - t0, n


def opencv_frames(path: Path, wanted: set[int]) -> dict[int, np.ndarray]:
    cap = cv2.VideoCapture(str(path))
    out, k = {}, 0
    while k <= max(wanted):
        ok, frame = cap.read()
        if not ok:
            break
        if k in wanted:
            out[k] = cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)
        k += 1
    return out


def psnr(a, b) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return 99.0 if mse == 0 else 10 * np.log10(255.0**2 / mse)


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def backbone_or_random(name: str) -> Backbone:
    try:
        return load_backbone(name)
    except WeightsError:
        from torchvision.models import resnet50

        from squidflow.backbones import IMAGENET_MEAN, IMAGENET_STD

        print(f"  ({name}: ImageNet weights not cached, timing random weights)")
        return Backbone(name, resnet50().eval(), IMAGENET_MEAN, IMAGENET_STD)


def one_at_a_time(paths, backbone: Backbone, size: int) -> None:
    mean = torch.tensor(backbone.mean).view(1, 3, 1, 1) * 255
    std = torch.tensor(backbone.std).view(1, 3, 1, 1) * 255
    with torch.inference_mode():
        for p in paths:
            x = (torch.from_numpy(load_image(p, size)).permute(2, 0, 1)[None].float() - mean) / std
            backbone.feature_map(x)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache-dir", default="results/benchmark_cache", help="where the test video is kept")
    ap.add_argument("--images", type=int, default=64, help="images for the CPU featurization figures")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument("--cpu-batch", type=int, default=4, help="batch size on CPU (small batches keep activations in cache)")
    args = ap.parse_args()
    cache = Path(args.cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(args.threads)
    video = make_video(cache)

    table = frame_table(video)
    print(f"video: {video} — {table.n_frames} frames, {len(table.keyframe_ranks)} keyframes, "
          f"{table.width}x{table.height}")
    base_s, n_read = opencv_read(video)
    print(f"baseline  OpenCV decodes every frame ({n_read}): {base_s:.2f} s")

    even_s, frames = timed(lambda: decode_ranks(table, even_targets(frame_table(video), 36)))
    ranks = even_targets(table, 36)
    print(f"even      36 frames ({int(table.is_key[ranks].sum())} keyframes), probe included: {even_s:.2f} s "
          f"-> {base_s / even_s:.1f}x faster (goal >= 10x)")
    exact_s, _ = timed(lambda: decode_ranks(table, even_targets(frame_table(video), 36, exact_times=True)))
    print(f"exact_times 36 frames, probe included: {exact_s:.2f} s -> {base_s / exact_s:.1f}x faster (goal >= 2.5x)")

    rng = np.random.default_rng(0)
    wanted = [int(k) for k in rng.choice(table.n_frames, 6, replace=False)]
    seq_s, _ = opencv_read(video, upto=max(wanted))
    ex_s, got = timed(lambda: decode_ranks(frame_table(video), wanted))
    ref = opencv_frames(video, {k + d for k in wanted for d in (-1, 0, 1)})
    same = all(
        psnr(g, ref[k]) >= 40 and all(psnr(g, ref[k]) > psnr(g, ref[j]) for j in (k - 1, k + 1) if j in ref)
        for k, g in zip(wanted, got, strict=True)
    )
    print(f"exact     frames {sorted(wanted)}: {ex_s:.2f} s vs OpenCV sequential to frame {max(wanted)}: "
          f"{seq_s:.2f} s -> {seq_s / ex_s:.1f}x faster (goal >= 5x); same frames as OpenCV: {same}")

    img_dir = cache / "frames_1280x720"
    paths = []
    for r, f in zip(ranks, frames, strict=True):
        p = img_dir / f"{r}.jpg"
        if not p.exists():
            save_image(f, p)
        paths.append(str(p))
    paths = (paths * (args.images // len(paths) + 1))[: args.images]
    for name in ("efficientnet_lite0", "resnet50"):
        bb = backbone_or_random(name)
        cfg = FeaturesConfig(backbone=name, batch_size=args.cpu_batch)
        embed_images(paths[:4], cfg, backbone=bb)  # warm-up
        b_s, _ = timed(lambda: embed_images(paths, cfg, backbone=bb))  # noqa: B023
        l_s, _ = timed(lambda: one_at_a_time(paths, bb, cfg.image_size))  # noqa: B023
        print(f"featurize {name} CPU ({args.threads} thread, batch {args.cpu_batch}): DataLoader {len(paths) / b_s:.1f} "
              f"images/s vs one at a "
              f"time {len(paths) / l_s:.1f} images/s -> {l_s / b_s:.2f}x (1280x720 JPEG decode included)")
    if torch.cuda.is_available():
        bb = backbone_or_random("resnet50")
        gpaths = (paths * (4096 // len(paths) + 1))[:4096]
        cfg = FeaturesConfig(backbone="resnet50", batch_size=256, num_workers=14)
        embed_images(gpaths[:512], cfg, device="cuda", backbone=bb)
        g_s, _ = timed(lambda: embed_images(gpaths, cfg, device="cuda", backbone=bb))
        print(f"featurize resnet50 GPU {torch.cuda.get_device_name(0)}: {len(gpaths) / g_s:.0f} images/s end to end "
              "(JPEG decode included; goal >= 2,000 on one H100)")
    else:
        print("featurize resnet50 GPU: skipped — no CUDA device here (goal >= 2,000 images/s on one H100)")


if __name__ == "__main__":
    main()
