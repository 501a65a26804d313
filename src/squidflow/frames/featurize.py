"""Frame featurization (SQUID-E supplement A.1): an ImageNet backbone "attached to two pooling layers".

The two pooling layers are a global average pool and a global max pool of the backbone's last feature map,
concatenated (`features.pooling`, default [avg, max]; one of them alone is allowed).

Where the images are decoded follows the device (`decode="auto"`):
* CPU: the images are decoded in the featurizing process at reduced scale (PIL draft mode: the JPEG decoder itself
  downsamples by 2/4/8, far cheaper than decoding full size and resizing), then the short side is resized and the
  centre cropped; float32, channels_last (oneDNN).
* GPU: the CPU only reads the files; nvJPEG decodes each batch, and resizing, cropping and normalising run on the
  GPU one batch ahead of the model on a side stream (`squidflow.frames.device_images`); the model runs in
  channels_last with autocast (float16), and the pooled features come back through pinned memory without stalling
  the next batch. `decode="pil"` on a GPU gives the former path (DataLoader workers decoding with PIL), which
  benchmarks/frames.py times as the baseline.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
import torch
from torch.utils.data import DataLoader, Dataset

from squidflow.config.validation import defaults_from_schema, from_section
from squidflow.encoders.pretrained import Backbone, load_backbone

log = logging.getLogger("squidflow.frames.featurize")


@dataclass(frozen=True)
@defaults_from_schema("features")
class FeaturesConfig:
    """The `features` config section."""

    backbone: str
    weights: str
    pooling: tuple[str, ...]
    image_size: int
    batch_size: int
    num_workers: int
    amp: bool

    @classmethod
    def from_config(cls, section: dict | None) -> FeaturesConfig:
        return from_section(cls, section)


def load_image(path: str, size: int) -> np.ndarray:
    """RGB uint8 (size, size, 3): short side resized to `size`, centre crop; JPEGs decoded at reduced scale."""
    from PIL import Image

    with Image.open(path) as opened:
        opened.draft("RGB", (size, size))  # a JPEG decodes at the smallest 1/2^k scale still >= size
        img = opened.convert("RGB")
        w, h = img.size
        scale = size / min(w, h)
        nw, nh = max(size, round(w * scale)), max(size, round(h * scale))
        img = img.resize((nw, nh), Image.Resampling.BILINEAR)
        left, top = (nw - size) // 2, (nh - size) // 2
        return np.array(img.crop((left, top, left + size, top + size)))  # a writable copy for torch


class FrameImages(Dataset):
    def __init__(self, paths: Sequence[str], size: int):
        self.paths, self.size = list(paths), size

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, i: int) -> torch.Tensor:
        return torch.from_numpy(load_image(self.paths[i], self.size)).permute(2, 0, 1)  # uint8 CHW


def pool(fmap: torch.Tensor, pooling: Sequence[str]) -> torch.Tensor:
    """Global pools of a (N, C, h, w) map, concatenated in the order given: (N, C * len(pooling))."""
    parts = []
    for p in pooling:
        if p == "avg":
            parts.append(fmap.mean(dim=(2, 3)))
        elif p == "max":
            parts.append(fmap.amax(dim=(2, 3)))
        else:
            raise ValueError(f"features.pooling: unknown pooling {p!r}; use avg and/or max")
    return torch.cat(parts, dim=1)


DECODE_PLACES = ("auto", "pil", "device")


@torch.inference_mode()
def embed_images(
    paths: Sequence[str],
    cfg: FeaturesConfig,
    *,
    device: str = "cpu",
    backbone: Backbone | None = None,
    decode: str = "auto",
    stats: dict | None = None,
) -> np.ndarray:
    """Features (len(paths), C * len(pooling)) float32 of the images at `paths`.

    `decode`: `auto` (PIL on the CPU, on the device on a GPU), `pil` or `device` (see the module docstring).
    `stats`, when given, receives `images`, `seconds` (wall time, decoding included) and on a GPU `busy_share`, the
    share of that time the GPU's main stream spent running the model (CUDA events around each batch's forward).
    """
    backbone = backbone or load_backbone(cfg.backbone, weights=cfg.weights)
    dev = torch.device(device)
    if decode not in DECODE_PLACES:
        raise ValueError(f"embed_images: decode={decode!r}, expected one of {DECODE_PLACES}")
    backbone.model.to(dev).to(memory_format=torch.channels_last)  # in place; faster on GPU and on CPU (oneDNN)
    width = backbone.channels * len(cfg.pooling)
    if not paths:
        return np.zeros((0, width), np.float32)
    if decode == "device" or (decode == "auto" and dev.type == "cuda"):
        return _embed_decoding_on_device(paths, cfg, dev, backbone, width, stats)
    return _embed_decoding_with_pil(paths, cfg, dev, backbone, width, stats)


def _embed_decoding_with_pil(
    paths, cfg: FeaturesConfig, dev: torch.device, backbone: Backbone, width: int, stats: dict | None
) -> np.ndarray:
    import time

    from squidflow.runtime.logs import progress

    t0 = time.perf_counter()
    on_gpu = dev.type == "cuda"
    mean = torch.tensor(backbone.mean, device=dev).view(1, 3, 1, 1) * 255
    std = torch.tensor(backbone.std, device=dev).view(1, 3, 1, 1) * 255
    loader = DataLoader(
        FrameImages(paths, cfg.image_size),
        batch_size=cfg.batch_size,
        # on the CPU, workers would compete with inference for the same cores; reduced-scale JPEG decoding is cheap
        num_workers=cfg.num_workers if on_gpu else 0,
        pin_memory=on_gpu,
        persistent_workers=False,
    )
    out = np.empty((len(paths), width), np.float32)
    i = 0
    for batch in progress(loader, desc=f"featurize {cfg.backbone}", unit="batch"):
        x = batch.to(dev, non_blocking=True).float().sub_(mean).div_(std).contiguous(memory_format=torch.channels_last)
        with torch.autocast(device_type=dev.type, dtype=torch.float16, enabled=on_gpu and cfg.amp):
            fmap = backbone.feature_map(x)
        feats = pool(fmap.float(), cfg.pooling)
        out[i : i + len(feats)] = feats.cpu().numpy()
        i += len(feats)
    if stats is not None:
        stats.update(images=len(paths), seconds=time.perf_counter() - t0)
    return out


def _embed_decoding_on_device(
    paths, cfg: FeaturesConfig, dev: torch.device, backbone: Backbone, width: int, stats: dict | None
) -> np.ndarray:
    """The GPU path (module docstring); on the CPU the same steps run inline (tests, and `decode="device"`)."""
    import time

    from squidflow.frames.device_images import DeviceImageBatches
    from squidflow.runtime.logs import progress

    on_gpu = dev.type == "cuda"
    t0 = time.perf_counter()
    batches = DeviceImageBatches(
        paths,
        size=cfg.image_size,
        batch_size=cfg.batch_size,
        device=dev,
        mean=backbone.mean,
        std=backbone.std,
        read_workers=max(1, cfg.num_workers),
    )
    out = np.empty((len(paths), width), np.float32)
    in_flight: list[
        tuple[int, torch.Tensor, torch.cuda.Event | None]
    ] = []  # (first row, pinned host copy, copy-done event)
    spans: list[tuple[torch.cuda.Event, torch.cuda.Event]] = []  # CUDA events around each forward

    def drain(keep: int) -> None:
        while len(in_flight) > keep:
            start, host, done = in_flight.pop(0)
            if done is not None:
                done.synchronize()
            out[start : start + len(host)] = host.numpy()

    for start, x in progress(batches, desc=f"featurize {cfg.backbone}", unit="batch", total=len(batches)):
        if on_gpu:
            begin = torch.cuda.Event(enable_timing=True)
            begin.record()
        with torch.autocast(device_type=dev.type, dtype=torch.float16, enabled=on_gpu and cfg.amp):
            fmap = backbone.feature_map(x)
        feats = pool(fmap.float(), cfg.pooling)
        if on_gpu:
            end = torch.cuda.Event(enable_timing=True)
            end.record()
            spans.append((begin, end))
            host = torch.empty(feats.shape, dtype=feats.dtype, pin_memory=True)
            host.copy_(feats, non_blocking=True)
            done = torch.cuda.Event()
            done.record()
            in_flight.append((start, host, done))
            drain(keep=2)  # a few batches of features in flight: the copy never stalls the next forward
        else:
            in_flight.append((start, feats, None))
            drain(keep=0)
    drain(keep=0)
    if stats is not None:
        _device_stats(stats, len(paths), time.perf_counter() - t0, spans, dev)
    return out


def _device_stats(
    stats: dict, images: int, seconds: float, spans: list[tuple[torch.cuda.Event, torch.cuda.Event]], dev: torch.device
) -> None:
    """Images and seconds into `stats`; on a GPU also `busy_share`, the share of the span from the first forward's
    start to the last one's end that the forwards took (the CUDA events around each)."""
    stats.update(images=images, seconds=seconds)
    if spans:
        torch.cuda.synchronize(dev)
        busy = sum(b.elapsed_time(e) for b, e in spans) / 1000
        stats["busy_share"] = busy / max(spans[0][0].elapsed_time(spans[-1][1]) / 1000, 1e-9)


def featurize_frames(frames: pl.DataFrame, cfg: FeaturesConfig, *, device: str = "cpu") -> pl.DataFrame:
    """schemas.EXTRACTED_FRAMES rows -> schemas.FEATURES rows (video_id, frame_index, pts_s, feature)."""
    from squidflow.contracts.paths import job_file

    feats = embed_images([job_file(p) for p in frames["image_path"].to_list()], cfg, device=device)
    log.info("featurized %d frames with %s -> %d dims on %s", len(frames), cfg.backbone, feats.shape[1], device)
    return frames.select("video_id", "frame_index", "pts_s").with_columns(
        pl.Series("feature", feats, dtype=pl.Array(pl.Float32, feats.shape[1]))
    )
