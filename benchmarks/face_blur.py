"""Benchmark of the face detector that blurs published JPEGs (squidflow.publish.faces, publish.blur_faces): recall,
false positives and cost per image, against scikit-image's own example settings of the same cascade, in the same run.

    .venv/bin/python -m benchmarks.face_blur [--faces 100] [--sizes 32,64,128] [--seed 0]

The labelled set ships in a package: scikit-image's `lfw_subset` (100 faces and 100 non-faces, 25x25 grey crops of
Labeled Faces in the Wild). Each crop is pasted, at each of --sizes pixels, at a random place into a real photograph
without a face (scikit-image's coffee, rocket, chelsea, hubble_deep_field, immunohistochemistry and motorcycle images,
resized to 640x360, the frame size squidflow downloads at most), one frame per paste.

- recall: pasted faces with a detection whose centre lies inside the pasted square;
- false positives: pasted non-faces with such a detection (the rate over the 100 × sizes non-face pastes), and
  detections elsewhere in the frame, per frame (the photographs have no face, so each one is false);
- ms per image: detect + blur + JPEG encode of one 640x360 frame (`blur_faces`), median over every frame, in this
  process (one core of the 2-core machine; the cascade is single-threaded).

Baseline: the same cascade with scikit-image's gallery settings (scale_factor 1.2, step_ratio 1, faces of 60-123
pixels, 4 neighbours: "Face detection using a cascade classifier"). Printed: one row per detector and size, the
totals, and the ratios squidflow / baseline.

Measured 2026-11-28 on the 2-core machine under heavy load (load average ~20; ms are inflated accordingly):

    detector    size  recall  FP rate  stray/frame
    squidflow     32    0.87     0.01        0.035
    baseline      32    0.00     0.00        0.000
    squidflow     64    0.84     0.02        0.075
    baseline      64    0.92     0.00        0.000
    squidflow    128    0.91     0.02        0.090
    baseline     128    0.73     0.00        0.005
    squidflow    all    0.87     0.02        0.067   detect 635 ms per 640x360 frame (median)
    baseline     all    0.55     0.00        0.002   detect 1533 ms per 640x360 frame (median)
    recall ratio squidflow / baseline: 1.59x; detect time ratio: 0.41x
    blur_faces (detect + blur + JPEG encode), 640x360: 910 ms per image (median, one core)
"""

from __future__ import annotations

import argparse
import io
import statistics
import time

import numpy as np

from squidflow.publish.faces import blur_faces, detect

FRAME = (360, 640)  # height, width


def photographs() -> list[np.ndarray]:
    from skimage import data
    from skimage.color import gray2rgb
    from skimage.transform import resize

    pics = [
        data.coffee(),
        data.rocket(),
        data.chelsea(),
        data.hubble_deep_field(),
        data.immunohistochemistry(),
        data.stereo_motorcycle()[0],
    ]
    out = []
    for p in pics:
        p = gray2rgb(p) if p.ndim == 2 else p[..., :3]
        out.append((resize(p, FRAME, anti_aliasing=True) * 255).astype(np.uint8))
    return out


def pasted(background: np.ndarray, crop: np.ndarray, size: int, rng) -> tuple[np.ndarray, tuple[int, int]]:
    from skimage.transform import resize

    top = int(rng.integers(0, FRAME[0] - size))
    left = int(rng.integers(0, FRAME[1] - size))
    out = background.copy()
    out[top : top + size, left : left + size] = (resize(crop, (size, size)) * 255).astype(np.uint8)[..., None]
    return out, (top, left)


def inside(box, at, size) -> bool:
    t, lf, h, w = box
    cy, cx = t + h / 2, lf + w / 2
    return at[0] <= cy < at[0] + size and at[1] <= cx < at[1] + size


def detect_baseline(rgb: np.ndarray) -> list[tuple[int, int, int, int]]:
    """scikit-image's gallery call: faces of 60 to 123 pixels."""
    from skimage.color import rgb2gray

    from squidflow.publish.faces import _cascade

    found = _cascade().detect_multi_scale(img=rgb2gray(rgb), scale_factor=1.2, step_ratio=1, min_size=(60, 60),
                                          max_size=(123, 123))  # fmt: skip
    return [(d["r"], d["c"], d["height"], d["width"]) for d in found]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--faces", type=int, default=100, help="faces and non-faces each (lfw_subset has 100 of each)")
    ap.add_argument("--sizes", default="32,64,128")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    from PIL import Image
    from skimage import data

    crops = data.lfw_subset()
    faces, others = crops[:100][: args.faces], crops[100:][: args.faces]
    sizes = [int(s) for s in args.sizes.split(",")]
    backgrounds = photographs()
    detectors = {"squidflow": lambda rgb: detect(rgb), "baseline": detect_baseline}
    totals = {name: {"hits": 0, "faces": 0, "fp": 0, "others": 0, "stray": 0, "frames": 0} for name in detectors}
    times = {name: [] for name in detectors}
    print(f"{'detector':10} {'size':>5} {'recall':>7} {'FP rate':>8} {'stray/frame':>12}")
    for size in sizes:
        rng = np.random.default_rng(args.seed + size)
        frames = []
        for k, crop in enumerate([*faces, *others]):
            img, at = pasted(backgrounds[k % len(backgrounds)], crop, size, rng)
            frames.append((img, at, k < len(faces)))
        for name, det in detectors.items():
            t = totals[name]
            row = {"hits": 0, "faces": 0, "fp": 0, "others": 0, "stray": 0}
            for img, at, is_face in frames:
                started = time.perf_counter()
                boxes = det(img)
                times[name].append(time.perf_counter() - started)
                on = any(inside(b, at, size) for b in boxes)
                row["stray"] += sum(not inside(b, at, size) for b in boxes)
                if is_face:
                    row["faces"] += 1
                    row["hits"] += on
                else:
                    row["others"] += 1
                    row["fp"] += on
            for key, v in row.items():
                t[key] += v
            t["frames"] += len(frames)
            print(
                f"{name:10} {size:5d} {row['hits'] / row['faces']:7.2f} {row['fp'] / row['others']:8.2f} "
                f"{row['stray'] / len(frames):12.3f}",
                flush=True,
            )
    # the whole published-image step (detect + blur + encode) on one frame per background
    jpegs = []
    for bg in backgrounds:
        buf = io.BytesIO()
        Image.fromarray(bg).save(buf, format="JPEG", quality=92)
        jpegs.append(buf.getvalue())
    step = []
    for jpeg in jpegs * 3:
        started = time.perf_counter()
        blur_faces(jpeg)
        step.append(time.perf_counter() - started)
    print()
    for name, t in totals.items():
        print(
            f"{name:10}   all {t['hits'] / t['faces']:7.2f} {t['fp'] / t['others']:8.2f} {t['stray'] / t['frames']:12.3f}"
            f"   detect {1000 * statistics.median(times[name]):.0f} ms per 640x360 frame (median)"
        )
    s, b = totals["squidflow"], totals["baseline"]
    ratio = (s["hits"] / s["faces"]) / max(b["hits"] / b["faces"], 1e-9)
    print(
        f"\nrecall ratio squidflow / baseline: {ratio:.2f}x; detect time ratio: "
        f"{statistics.median(times['squidflow']) / statistics.median(times['baseline']):.2f}x"
    )
    print(
        f"blur_faces (detect + blur + JPEG encode), 640x360: {1000 * statistics.median(step):.0f} ms per image "
        "(median, one core)"
    )


if __name__ == "__main__":
    main()
