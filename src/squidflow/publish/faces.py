"""Faces blurred in the JPEGs a dataset shares (publish.blur_faces; issue 48): the people in a wedding or a protest
did not agree to be published. Only the published copy is blurred: the frames that trained the models and that
annotators rated stay as they were (annotators saw the video).

The detector is scikit-image's LBP frontal-face cascade (`skimage.data.lbp_frontal_face_cascade_filename()`, the
OpenCV-trained cascade that ships inside the scikit-image wheel: nothing is downloaded at run time). Each detected
region, widened by `MARGIN` on every side, is replaced by a strong Gaussian blur of itself; the image is written again
as JPEG only when a region was found, so an image without a face keeps its bytes. `benchmarks/face_blur.py` measures
its recall and false positives on scikit-image's `lfw_subset` faces pasted into photographs.
"""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass

import numpy as np

DETECTOR = "scikit-image LBP frontal-face cascade (lbpcascade_frontalface_opencv.xml)"
MARGIN = 0.25  # of the detected box's side, added on every side (the cascade's box is tight around eyes and mouth)
JPEG_QUALITY = 95


@dataclass(frozen=True)
class DetectorSettings:
    """The cascade's scan: each scale 1/`scale_factor` of the last, a window step of `step_ratio` × its size / 24,
    faces from `min_size` pixels, a detection kept when `min_neighbors` overlapping windows agree."""

    scale_factor: float = 1.25
    step_ratio: float = 1.5
    min_size: int = 24
    min_neighbors: int = 2
    max_side: int = 640  # larger images are scanned at this longer side (a face under min_size there is not found)


@functools.cache
def _cascade():
    from skimage.data import lbp_frontal_face_cascade_filename
    from skimage.feature import Cascade

    return Cascade(lbp_frontal_face_cascade_filename())


def detect(rgb: np.ndarray, settings: DetectorSettings = DetectorSettings()) -> list[tuple[int, int, int, int]]:
    """Faces in an RGB (or grey) image: (top, left, height, width) boxes in its pixels."""
    from skimage.color import rgb2gray
    from skimage.transform import rescale

    grey = rgb2gray(rgb) if rgb.ndim == 3 else rgb.astype(float) / (255.0 if rgb.dtype == np.uint8 else 1.0)
    scale = min(1.0, settings.max_side / max(grey.shape))
    if scale < 1.0:
        grey = rescale(grey, scale, anti_aliasing=True)
    side = min(grey.shape)
    if side < settings.min_size:
        return []
    found = _cascade().detect_multi_scale(
        img=grey, scale_factor=settings.scale_factor, step_ratio=settings.step_ratio,
        min_size=(settings.min_size, settings.min_size), max_size=(side, side),
        min_neighbor_number=settings.min_neighbors)  # fmt: skip
    return [(round(d["r"] / scale), round(d["c"] / scale), round(d["height"] / scale), round(d["width"] / scale))
            for d in found]  # fmt: skip


def blur_regions(rgb: np.ndarray, boxes: list[tuple[int, int, int, int]]) -> np.ndarray:
    """`rgb` with each box (widened by MARGIN) replaced by a Gaussian blur of itself (sigma: a quarter of its side)."""
    from PIL import Image, ImageFilter

    img = Image.fromarray(rgb)
    h, w = rgb.shape[:2]
    for top, left, bh, bw in boxes:
        pad_y, pad_x = round(bh * MARGIN), round(bw * MARGIN)
        box = (max(0, left - pad_x), max(0, top - pad_y), min(w, left + bw + pad_x), min(h, top + bh + pad_y))
        region = img.crop(box)
        img.paste(region.filter(ImageFilter.GaussianBlur(radius=max(2.0, min(bh, bw) / 4))), box[:2])
    return np.asarray(img)


def blur_faces(jpeg: bytes, settings: DetectorSettings = DetectorSettings()) -> tuple[bytes, int]:
    """A published JPEG with its faces blurred, and how many regions were blurred (the bytes unchanged when none)."""
    from PIL import Image

    with Image.open(io.BytesIO(jpeg)) as im:
        rgb = np.asarray(im.convert("RGB"))
    boxes = detect(rgb, settings)
    if not boxes:
        return jpeg, 0
    out = io.BytesIO()
    Image.fromarray(blur_regions(rgb, boxes)).save(out, format="JPEG", quality=JPEG_QUALITY)
    return out.getvalue(), len(boxes)


def blur_all(jpegs: list[bytes], settings: DetectorSettings = DetectorSettings()) -> tuple[list[bytes], list[int]]:
    """Every published JPEG through `blur_faces` (progress in the job's log): the bytes and the regions per image."""
    from squidflow.runtime.logs import progress

    out, counts = [], []
    for jpeg in progress(jpegs, desc="blur faces"):
        blurred, n = blur_faces(jpeg, settings)
        out.append(blurred)
        counts.append(n)
    return out, counts


def sensitive_note(counts: list[int] | None, *, mode: str, demo: bool) -> str | None:
    """What the card and rai:personalSensitiveInformation say about faces in the published pixels (None: no pixels,
    or the demo's synthetic frames, where there is nothing to say)."""
    if mode != "embed":
        return None
    if counts is None:
        return (
            None
            if demo
            else (
                "Faces are NOT blurred in the published JPEGs (publish.blur_faces: false): people "
                "in the frames can be recognised."
            )
        )
    blurred = sum(1 for n in counts if n)
    return (
        f"Faces blurred in the published JPEGs: {sum(counts):,} regions in {blurred:,} of {len(counts):,} images "
        f"(column `faces_blurred` of the `images` config), found by the {DETECTOR} and widened by "
        f"{MARGIN:.0%} on each side. A face the detector missed (in profile, small, turned away, occluded) is "
        "not blurred. The frames annotators rated and models trained on were not blurred."
    )


def blur_requested(setting: bool | None, *, mode: str, demo: bool) -> bool:
    """publish.blur_faces: true/false as set; null (the default) blurs the embedded images of any run but the
    demo's (its videos are synthetic: no one's face)."""
    if mode != "embed":
        return False
    return (not demo) if setting is None else bool(setting)
