"""Decode and resize every training image once, into a memory-mapped uint8 tensor file that all runs share.

The authors' scripts open and decode each JPEG on every epoch of every run; with 7 methods × 10 seeds × 5 epochs
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
from typing import cast

import numpy as np
import polars as pl
from PIL import Image
from tqdm import tqdm

from squidflow.contracts.io import atomic_path
from squidflow.contracts.paths import job_file

log = logging.getLogger(__name__)


def preprocess(image: Image.Image, resize: int, crop: int) -> np.ndarray:
    """Resize the shorter side to `resize`, center-crop `crop` × `crop`; returns a (3, crop, crop) uint8 array."""
    from torchvision.transforms.v2 import functional as TF  # here: its import pulls in torch's compiler stack

    image = TF.center_crop(TF.resize(image.convert("RGB"), resize), [crop, crop])
    return np.asarray(image, dtype=np.uint8).transpose(2, 0, 1)


def _decode_video_frames(path: str, frame_indices: list[int]) -> list[np.ndarray]:
    try:
        from squidflow.frames.decode import decode_frames
    except ImportError as exc:  # pragma: no cover - only before the frames stage exists
        raise ImportError(
            f"{path}: decoding video frames needs squidflow.frames.decode.decode_frames (the frames stage)"
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
                with Image.open(job_file(row["source_path"])) as im:
                    im.load()
                    yield pos, im
            except OSError as exc:
                raise OSError(f"{row['source_path']}: cannot read image {row['image_id']!r}: {exc}") from exc
        else:
            by_video.setdefault(row["source_path"], []).append((pos, int(frame)))
    for path, wanted in by_video.items():
        frames = _decode_video_frames(job_file(path), [f for _, f in wanted])
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
        raise ValueError(
            f"{npy_path}: expected an (N, 3, H, W) uint8 image cache, found {array.shape} {array.dtype}; "
            "delete it and rerun snakemake (rule make_training_cache)"
        )
    return array


# --- whole frames for the geometric augmentations ---------------------------------------------------------------
# GA and AU (SQUID-E supplement D.1, the authors' experiments/tools/train.py) start from the whole frame resized to a
# 512 short side, not from the 256 centre crop. Frames differ in shape, so they are stored back to back in one flat
# uint8 `.npy` (each as C×H×W bytes) with an index of offsets: one memory map shared by every run, holding only the
# images those methods train on (the SD training split).


def resize_short_side(image: Image.Image, short: int) -> np.ndarray:
    """The whole image with its shorter side resized to `short` (torchvision's Resize(short)); (3, H, W) uint8."""
    from torchvision.transforms.v2 import functional as TF

    return np.asarray(TF.resize(image.convert("RGB"), short), dtype=np.uint8).transpose(2, 0, 1)


def build_frame_cache(images: pl.DataFrame, npy_path: str | os.PathLike, short: int) -> pl.DataFrame:
    """Decode every row of `images` (which carry the pool cache's `row`) at a `short` short side into one flat uint8
    `.npy`; returns the index: row, offset, height, width (schemas.TRAINING_FRAMES)."""
    npy_path = Path(npy_path)
    index, offset = [], 0
    raw = npy_path.with_name(npy_path.name + ".part")
    try:
        with open(raw, "wb") as fh:
            for pos, image in tqdm(
                iter_images(images), total=len(images), desc=f"frames {npy_path.name}", mininterval=5
            ):
                frame = np.ascontiguousarray(resize_short_side(image, short))
                fh.write(frame.tobytes())
                index.append(
                    {
                        "row": int(images["row"][pos]),
                        "offset": offset,
                        "height": frame.shape[1],
                        "width": frame.shape[2],
                    }
                )
                offset += frame.size
        with atomic_path(npy_path) as tmp:
            array = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.uint8, shape=(offset,))
            if offset:
                source = np.memmap(raw, dtype=np.uint8, mode="r")
                for start in range(0, offset, 1 << 28):  # copy in 256 MB pieces, never the whole file in memory
                    array[start : start + (1 << 28)] = source[start : start + (1 << 28)]
                del source
            array.flush()
            del array
    finally:
        raw.unlink(missing_ok=True)
    log.info(
        "cached %d whole frames at a %d-px short side (%.1f MB) into %s", len(index), short, offset / 1e6, npy_path
    )
    return pl.DataFrame(index, schema={"row": pl.Int64, "offset": pl.Int64, "height": pl.Int64, "width": pl.Int64})


class FrameCache:
    """Whole frames by pool row: `cache[row]` is a (3, H, W) uint8 view into the flat memory map."""

    def __init__(self, buffer: np.ndarray, index: pl.DataFrame, where: str = "frame cache"):
        self.buffer, self.where = buffer, where
        size = int(cast(int, index["row"].max())) + 1 if len(index) else 0
        self.offset = np.full(size, -1, dtype=np.int64)
        self.shape = np.zeros((size, 2), dtype=np.int64)
        rows = index["row"].to_numpy()
        self.offset[rows] = index["offset"].to_numpy()
        self.shape[rows] = index.select("height", "width").to_numpy()

    def __len__(self) -> int:
        return int((self.offset >= 0).sum())

    def __getitem__(self, row: int) -> np.ndarray:
        if not 0 <= row < len(self.offset) or self.offset[row] < 0:
            raise KeyError(
                f"{self.where}: pool row {row} has no whole frame (only the SD training split is cached "
                "for GA and AU); delete the frame cache and rerun snakemake (rule make_training_frames)"
            )
        h, w = self.shape[row]
        start = self.offset[row]
        return self.buffer[start : start + 3 * h * w].reshape(3, h, w)


def open_frame_cache(npy_path: str | os.PathLike, index: pl.DataFrame) -> FrameCache:
    """The whole-frame cache as a read-only memory map with its index (from build_frame_cache)."""
    buffer = np.load(npy_path, mmap_mode="r")
    need = int(cast(int, (index["offset"] + 3 * index["height"] * index["width"]).max())) if len(index) else 0
    if buffer.ndim != 1 or buffer.dtype != np.uint8 or len(buffer) < need:
        raise ValueError(
            f"{npy_path}: expected a flat uint8 frame cache of at least {need} bytes, found {buffer.shape} "
            f"{buffer.dtype}; delete it and rerun snakemake (rule make_training_frames)"
        )
    return FrameCache(buffer, index, str(npy_path))
