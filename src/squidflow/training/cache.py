"""Decode and resize every training image once, into a memory-mapped uint8 tensor file that all runs share.

The authors' scripts open and decode each JPEG on every epoch of every run; with 7 variants × 10 seeds × 5 epochs
that is 350 decodes of each image, and decoding, not the model, sets the pace on a GPU. Here the pool is decoded
once (`build_cache`), resized the way the model wants it (Resize(resize) then CenterCrop(crop), the paper's
preprocessing), and stored as an (N, 3, crop, crop) uint8 `.npy` file; runs open it with `np.load(mmap_mode="r")`,
so the OS page cache shares it between concurrent jobs and a run reads only the rows it uses.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import polars as pl
from PIL import Image
from torchvision.transforms.v2 import functional as TF
from tqdm import tqdm

from squidflow.io import atomic_path

log = logging.getLogger(__name__)


def preprocess(image: Image.Image, resize: int, crop: int) -> np.ndarray:
    """Resize the shorter side to `resize`, center-crop `crop` × `crop`; returns a (3, crop, crop) uint8 array."""
    image = TF.center_crop(TF.resize(image.convert("RGB"), resize), [crop, crop])
    return np.asarray(image, dtype=np.uint8).transpose(2, 0, 1)


def _decode_video_frames(path: str, frame_indices: list[int]) -> list[np.ndarray]:
    try:
        from squidflow.frames.extract import decode_frames
    except ImportError as exc:  # pragma: no cover - only before the frames stage exists
        raise ImportError(
            f"{path}: decoding video frames needs squidflow.frames.extract.decode_frames (the frames stage)"
        ) from exc
    return decode_frames(path, frame_indices)


def iter_images(images: pl.DataFrame) -> Iterator[tuple[int, Image.Image]]:
    """Yield (position in `images`, PIL image) for rows that name a JPEG (`frame_index` null) or a video frame.

    Video frames are decoded with one pass per video, in the order the rows list them.
    """
    has_frame = "frame_index" in images.columns
    by_video: dict[str, list[tuple[int, int]]] = {}
    for pos, row in enumerate(images.iter_rows(named=True)):
        frame = row.get("frame_index") if has_frame else None
        if frame is None:
            try:
                with Image.open(row["source_path"]) as im:
                    im.load()
                    yield pos, im
            except OSError as exc:
                raise OSError(f"{row['source_path']}: cannot read image {row['image_id']!r}: {exc}") from exc
        else:
            by_video.setdefault(row["source_path"], []).append((pos, int(frame)))
    for path, wanted in by_video.items():
        frames = _decode_video_frames(path, [f for _, f in wanted])
        if len(frames) != len(wanted):
            raise ValueError(f"{path}: asked for {len(wanted)} frames, the decoder returned {len(frames)}")
        for (pos, _), frame in zip(wanted, frames, strict=True):
            yield pos, Image.fromarray(frame)


def build_cache(images: pl.DataFrame, npy_path: str | os.PathLike, resize: int, crop: int) -> pl.DataFrame:
    """Decode every row of `images` into `npy_path` ((N, 3, crop, crop) uint8); return `images` with a `row` column."""
    n = len(images)
    with atomic_path(npy_path) as tmp:
        array = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.uint8, shape=(n, 3, crop, crop))
        for pos, image in tqdm(iter_images(images), total=n, desc=f"cache {Path(npy_path).name}", mininterval=5):
            array[pos] = preprocess(image, resize, crop)
        array.flush()
        del array
    log.info("cached %d images at %dx%d into %s", n, crop, crop, npy_path)
    return images.with_columns(pl.int_range(0, n, dtype=pl.Int64).alias("row"))


def open_cache(npy_path: str | os.PathLike) -> np.ndarray:
    """The cache as a read-only memory map of shape (N, 3, H, W)."""
    array = np.load(npy_path, mmap_mode="r")
    if array.ndim != 4 or array.shape[1] != 3 or array.dtype != np.uint8:
        raise ValueError(f"{npy_path}: expected an (N, 3, H, W) uint8 image cache, found {array.shape} {array.dtype}; "
                         "delete it and rerun snakemake (rule make_training_cache)")
    return array
