"""Frame images decoded, resized and normalised on the featurization device, overlapped with the model.

On a GPU the CPU only reads file bytes: nvJPEG decodes a whole batch in one call (`torchcodec.decoders.decode_jpeg`
with a CUDA device), the short side is resized with an antialiased bilinear filter and centre-cropped on the GPU,
then normalised — all on a side CUDA stream, one batch ahead, while the model runs the previous batch on the main
stream. A CPU decoding pipeline (PIL, DataLoader workers) tops out at a few hundred 720p JPEGs per second per core,
far below what ResNet50 with AMP consumes on one H100; decoding where the model runs removes that ceiling.

The geometry is the CPU path's (`squidflow.frames.featurize.load_image`: short side to `size`, centre crop) and the
filter the same bilinear, antialiased when it shrinks, as PIL's; the CPU path additionally lets the JPEG decoder
shrink by 1/2^k first (draft mode), so the two paths agree closely but not bit for bit (tests/unit/frames/test_featurize.py
bounds the difference of the resulting features). The same code runs with `device="cpu"` (libjpeg-turbo instead of
nvJPEG, no side stream), which is how it is tested on machines without a GPU.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import cast

import torch
from torch.nn.functional import interpolate

JPEG_MAGIC = b"\xff\xd8"


def read_encoded(path: str | Path) -> torch.Tensor:
    """A file's bytes as a 1-D uint8 tensor (what the decoders take; it must live on the CPU)."""
    data = Path(path).read_bytes()
    if not data:
        raise ValueError(f"{path}: the image file is empty; rerun extract_frames for its video")
    return torch.frombuffer(bytearray(data), dtype=torch.uint8)


def decode_images(
    encoded: Sequence[torch.Tensor], device: torch.device | str, paths: Sequence[str] = ()
) -> list[torch.Tensor]:
    """RGB uint8 CHW tensors on `device`: the JPEGs in one batched decode (nvJPEG on CUDA), other formats (PNG)
    decoded on the CPU and moved."""
    from torchcodec.decoders import decode_image, decode_jpeg

    device = torch.device(device)
    out: list[torch.Tensor | None] = [None] * len(encoded)
    jpeg = [i for i, e in enumerate(encoded) if bytes(e[:2].tolist()) == JPEG_MAGIC]
    try:
        if jpeg:
            if device.type == "cuda":
                decoded = decode_jpeg([encoded[i] for i in jpeg], mode="RGB", device=device)
            else:
                decoded = [cast(torch.Tensor, decode_jpeg(encoded[i], mode="RGB")) for i in jpeg]  # one in, one out
            for i, img in zip(jpeg, decoded, strict=True):
                out[i] = img
        for i, e in enumerate(encoded):
            if out[i] is None:
                out[i] = decode_image(e, mode="RGB").to(device, non_blocking=True)
    except RuntimeError as exc:
        names = ", ".join(str(p) for p in list(paths)[:3]) + (" ..." if len(paths) > 3 else "")
        raise ValueError(
            f"cannot decode the image(s) of this batch ({names}): {exc}; rerun extract_frames for their videos"
        ) from exc
    return out  # type: ignore[return-value]


def resize_center_crop(images: Sequence[torch.Tensor], size: int) -> torch.Tensor:
    """(N, 3, size, size) float32 on the images' device, values 0..255: each image's short side resized to `size`
    (bilinear, antialiased), then the centre `size` × `size` crop — `load_image`'s geometry. Images of one shape
    (the frames of one video) are resized as one batch."""
    n = len(images)
    if n == 0:
        raise ValueError("resize_center_crop: no images")
    out = torch.empty((n, 3, size, size), dtype=torch.float32, device=images[0].device)
    by_shape: dict[tuple[int, int], list[int]] = {}
    for i, img in enumerate(images):
        by_shape.setdefault((int(img.shape[-2]), int(img.shape[-1])), []).append(i)
    for (h, w), idx in by_shape.items():
        scale = size / min(w, h)
        nw, nh = max(size, round(w * scale)), max(size, round(h * scale))
        x = torch.stack([images[i] for i in idx]).float()
        if (nh, nw) != (h, w):
            x = interpolate(x, size=(nh, nw), mode="bilinear", antialias=True, align_corners=False)
        left, top = (nw - size) // 2, (nh - size) // 2
        out[idx] = x[:, :, top : top + size, left : left + size].round_().clamp_(0, 255)  # as the uint8 CPU path
    return out


def normalise(x: torch.Tensor, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
    """(x − 255·mean) / (255·std), channels_last (the layout cuDNN and oneDNN convolutions prefer)."""
    return x.sub_(mean).div_(std).contiguous(memory_format=torch.channels_last)


class DeviceImageBatches:
    """Batches (first row, normalised (N, 3, size, size) tensor) of the images at `paths`, made on `device`.

    Files are read by `read_workers` threads ahead of use. On CUDA a producer thread decodes and preprocesses on a
    side stream, `prefetch` batches ahead; each batch comes with an event the consumer's stream waits on, and is
    marked as used by that stream, so the caching allocator never hands its memory out while the model reads it.
    On the CPU the same steps run in the caller's thread.
    """

    def __init__(
        self,
        paths: Sequence[str],
        *,
        size: int,
        batch_size: int,
        device: torch.device | str,
        mean: Sequence[float],
        std: Sequence[float],
        read_workers: int = 4,
        prefetch: int = 2,
    ):
        self.paths = [str(p) for p in paths]
        self.size, self.batch_size = size, max(1, batch_size)
        self.device = torch.device(device)
        self.mean = torch.tensor(mean, device=self.device).view(1, 3, 1, 1) * 255
        self.std = torch.tensor(std, device=self.device).view(1, 3, 1, 1) * 255
        self.read_workers, self.prefetch = max(1, read_workers), max(1, prefetch)

    def __len__(self) -> int:
        return -(-len(self.paths) // self.batch_size)

    def _encoded_batches(self, pool: ThreadPoolExecutor) -> Iterator[tuple[int, list[str], list[torch.Tensor]]]:
        starts = list(range(0, len(self.paths), self.batch_size))
        futures = {}
        ahead = self.prefetch + 1
        for j, start in enumerate(starts[:ahead]):
            futures[j] = pool.map(read_encoded, self.paths[start : start + self.batch_size])
        for j, start in enumerate(starts):
            if j + ahead < len(starts):
                s = starts[j + ahead]
                futures[j + ahead] = pool.map(read_encoded, self.paths[s : s + self.batch_size])
            yield start, self.paths[start : start + self.batch_size], list(futures.pop(j))

    def _make(self, paths: list[str], encoded: list[torch.Tensor]) -> torch.Tensor:
        images = decode_images(encoded, self.device, paths)
        return normalise(resize_center_crop(images, self.size), self.mean, self.std)

    def __iter__(self) -> Iterator[tuple[int, torch.Tensor]]:
        with ThreadPoolExecutor(max_workers=self.read_workers) as pool:
            if self.device.type != "cuda":
                for start, paths, encoded in self._encoded_batches(pool):
                    yield start, self._make(paths, encoded)
                return
            yield from self._overlapped(pool)

    def _overlapped(self, pool: ThreadPoolExecutor) -> Iterator[tuple[int, torch.Tensor]]:
        side = torch.cuda.Stream(device=self.device)
        ready: queue.Queue = queue.Queue(maxsize=self.prefetch)
        stop = threading.Event()

        def produce() -> None:
            try:
                with torch.cuda.device(self.device), torch.cuda.stream(side):
                    for start, paths, encoded in self._encoded_batches(pool):
                        if stop.is_set():
                            return
                        x = self._make(paths, encoded)
                        event = torch.cuda.Event()
                        event.record(side)
                        ready.put((start, x, event))
                ready.put(None)
            except BaseException as exc:  # handed to the consumer, which raises it
                ready.put(exc)

        producer = threading.Thread(target=produce, name="device-images", daemon=True)
        producer.start()
        main = torch.cuda.current_stream(self.device)
        try:
            while True:
                item = ready.get()
                if item is None:
                    break
                if isinstance(item, BaseException):
                    raise item
                start, x, event = item
                main.wait_event(event)
                x.record_stream(main)
                yield start, x
        finally:
            stop.set()
            while producer.is_alive():  # unblock a producer waiting on a full queue
                try:
                    ready.get_nowait()
                except queue.Empty:
                    producer.join(timeout=0.05)
