"""The pixel work of the D.1 augmentations (SQUID-E supplement D.1) on a uint8 batch, each image with its own
parameters: torchvision's functional ops, one parameter per image.

On a GPU an op runs on the whole batch at once with each image's parameter broadcast: a few kernels per step. One
image on the CPU takes faster kernels than torchvision's where they exist: lookup tables for the per-value ops
(brightness, contrast, solarize, posterize, autocontrast, equalize), OpenCV's uint8 HSV for hue (~0.4 ms for a 256-px
image against ~5 ms for torchvision's float HSV or PIL's), OpenCV's 3×3 filter for AugMix's sharpness (a grouped
conv2d costs ~6 ms), OpenCV's warpAffine for its rotations and shears, and slicing for its whole-pixel translations.

Every op equals torchvision's functional op on the same image with the same parameters up to one grey level of
rounding, except the CPU's hue, which rounds as PIL's does (a few grey levels from torchvision's tensor hue; PIL's
own differs from it more); tests/unit/training/test_batch_augment.py checks each against torchvision. Which image draws which
parameters is `squidflow.training.batch_augment`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch.nn.functional import grid_sample, pad
from torchvision.transforms.v2 import functional as F

from squidflow.training.augment import _gaussian_kernel1d


def _factors(values, like: torch.Tensor) -> torch.Tensor:
    """Per-image scalars as a (n, 1, 1, 1) float32 tensor on `like`'s device."""
    return torch.as_tensor(values, dtype=torch.float32).view(-1, 1, 1, 1).to(like.device, non_blocking=True)


def _to_uint8(x: torch.Tensor) -> torch.Tensor:
    """torchvision's float -> uint8 after a blend: clamp to 0..255, then truncate (`.to(uint8)`)."""
    return x.clamp_(0, 255).to(torch.uint8)


def _one_on_cpu(x: torch.Tensor) -> bool:
    return x.device.type == "cpu" and len(x) == 1


def _lut(x: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """One uint8 image through a 256-entry lookup table (OpenCV's LUT: one pass over the bytes)."""
    import cv2

    h, w = x.shape[-2:]
    return torch.from_numpy(cv2.LUT(x.reshape(-1, w).numpy(), table.numpy())).view(1, -1, h, w)


_VALUES = torch.arange(256, dtype=torch.uint8).view(1, 1, 1, 256)  # every uint8 value, as a tiny "image"


def _planes(x: torch.Tensor) -> list:
    """The colour planes of one image as contiguous (H, W) numpy views: OpenCV works on them without the strided
    copy a CHW -> HWC permute costs."""
    x = x.contiguous()
    return [x[0, c].numpy() for c in range(x.shape[1])]


def _from_planes(planes: Sequence) -> torch.Tensor:
    import numpy as np

    return torch.from_numpy(np.stack(planes))[None]


def _grayscale(x: torch.Tensor) -> torch.Tensor:
    """torchvision's rgb_to_grayscale of uint8 images, floored, as float (n, 1, H, W)."""
    r, g, b = x.float().unbind(dim=-3)
    return r.mul(0.2989).add_(g, alpha=0.587).add_(b, alpha=0.114).floor_().unsqueeze_(-3)


def brightness(x: torch.Tensor, f) -> torch.Tensor:
    if _one_on_cpu(x):  # a per-value function: the same arithmetic on the 256 values, then a lookup
        return _lut(x, _to_uint8(_VALUES.float().mul_(_factors(f, x))).flatten())
    return _to_uint8(x.float().mul_(_factors(f, x)))


def saturation(x: torch.Tensor, f) -> torch.Tensor:
    f = _factors(f, x)
    return _to_uint8(x.float().mul_(f).add_(_grayscale(x) * (1.0 - f)))


def contrast(x: torch.Tensor, f) -> torch.Tensor:
    f = _factors(f, x)
    mean = _grayscale(x).mean(dim=(-3, -2, -1), keepdim=True)
    if _one_on_cpu(x):  # given the image's mean, a per-value function: a lookup
        return _lut(x, _to_uint8(_VALUES.float().mul_(f).add_(mean * (1.0 - f))).flatten())
    return _to_uint8(x.float().mul_(f).add_(mean * (1.0 - f)))


def hue(x: torch.Tensor, f, *, backend: str = "auto") -> torch.Tensor:
    """Hue shift by f ∈ [-0.5, 0.5] of a turn per image: OpenCV's uint8 HSV on the CPU, torchvision's float HSV on
    a GPU (`backend` opencv or torch forces one)."""
    f = [float(v) for v in torch.as_tensor(f).flatten().tolist()]
    if backend == "opencv" or (backend == "auto" and x.device.type == "cpu"):
        return _hue_opencv(x, f)
    from torchvision.transforms.v2.functional._color import _hsv_to_rgb, _rgb_to_hsv

    hsv = _rgb_to_hsv(x.float().div_(255.0))
    hsv[:, 0].add_(_factors(f, x)[:, 0]).remainder_(1.0)
    return F.to_dtype(_hsv_to_rgb(hsv), torch.uint8, scale=True)


def _hue_opencv(x: torch.Tensor, f: list[float]) -> torch.Tensor:
    import cv2
    import numpy as np

    out = []
    for i, shift in enumerate(f):
        hsv = cv2.cvtColor(cv2.merge(_planes(x[i : i + 1])), cv2.COLOR_RGB2HSV_FULL)
        hsv[..., 0] += np.array(shift * 255).astype(np.uint8)  # PIL's rule: a uint8 shift, wrapping around
        out.append(_from_planes(cv2.split(cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB_FULL))))
    return torch.cat(out)


def solarize(x: torch.Tensor, threshold) -> torch.Tensor:
    """Invert the values >= threshold: for uint8 values, >= t is >= ceil(t), an integer comparison."""
    ceil = [min(max(math.ceil(float(t)), 0), 256) for t in torch.as_tensor(threshold).flatten().tolist()]
    if _one_on_cpu(x):
        if ceil[0] > 255:
            return x
        return _lut(x, torch.where(_VALUES >= ceil[0], _VALUES.bitwise_not(), _VALUES).flatten())
    limit = torch.tensor(ceil, dtype=torch.int16).view(-1, 1, 1, 1).to(x.device, non_blocking=True)
    return torch.where(x.to(torch.int16) >= limit, x.bitwise_not(), x)


def posterize(x: torch.Tensor, bits) -> torch.Tensor:
    masks = [(0xFF << (8 - int(b))) & 0xFF if int(b) < 8 else 0xFF for b in torch.as_tensor(bits).flatten().tolist()]
    if _one_on_cpu(x):
        return _lut(x, _VALUES.flatten() & masks[0])
    return x & torch.tensor(masks, dtype=torch.uint8).view(-1, 1, 1, 1).to(x.device, non_blocking=True)


def sharpness(x: torch.Tensor, f) -> torch.Tensor:
    """torchvision's adjust_sharpness (blend with the 3×3 smoothed image, borders kept) with per-image factors."""
    if x.shape[-1] <= 2 or x.shape[-2] <= 2:
        return x
    if _one_on_cpu(x):  # OpenCV: the 3×3 filter on the uint8 planes, rounded to uint8 as torchvision rounds it, and
        import cv2  # the blend of the inside in float32, truncated to uint8 as torchvision's
        import numpy as np

        kernel = np.full((3, 3), 1.0 / 13.0, np.float32)
        kernel[1, 1] = 5.0 / 13.0
        f0 = float(torch.as_tensor(f).flatten()[0])
        planes = []
        for p in _planes(x):
            out = p.copy()
            blend = cv2.addWeighted(p, f0, cv2.filter2D(p, -1, kernel), 1.0 - f0, 0.0, dtype=cv2.CV_32F)
            out[1:-1, 1:-1] = np.clip(blend[1:-1, 1:-1], 0, 255)
            planes.append(out)
        return _from_planes(planes)
    out = x.float()
    view = out[..., 1:-1, 1:-1]
    rows = out[..., :, :-2] + out[..., :, 1:-1] + out[..., :, 2:]  # 3-wide sums
    box = rows[..., :-2, :] + rows[..., 1:-1, :] + rows[..., 2:, :]  # 3×3 sums
    blurred = box.mul_(1.0 / 13.0).add_(view, alpha=4.0 / 13.0).round_()  # kernel: 1/13 around, 5/13 centre
    view.add_((blurred - view) * (1.0 - _factors(f, x)))
    return _to_uint8(out)


def affine(x: torch.Tensor, matrices: list[list[float]]) -> torch.Tensor:
    """torchvision's affine/rotate of uint8 images (bilinear, fill 0, rounded) with a per-image inverse matrix (in
    torchvision's coordinates: pixel centres relative to the image centre). One image on the CPU: OpenCV's
    warpAffine (fixed-point bilinear weights: within two grey levels of grid_sample's), a fifth of the time."""
    n, _, h, w = x.shape
    if x.device.type == "cpu" and n == 1:
        import cv2
        import numpy as np

        t = matrices[0]
        cx, cy = (w - 1) * 0.5, (h - 1) * 0.5  # pixel index = centred coordinate + (size - 1) / 2
        m = np.array(
            [[t[0], t[1], t[2] - t[0] * cx - t[1] * cy + cx], [t[3], t[4], t[5] - t[3] * cx - t[4] * cy + cy]],
            dtype=np.float64,
        )
        return _from_planes(
            [
                cv2.warpAffine(
                    p,
                    m,
                    (w, h),
                    flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                    borderMode=cv2.BORDER_CONSTANT,
                    borderValue=0,
                )
                for p in _planes(x)
            ]
        )
    theta = torch.tensor(matrices, dtype=torch.float32).view(n, 2, 3).to(x.device, non_blocking=True)
    xs = torch.linspace((1.0 - w) * 0.5, (w - 1.0) * 0.5, steps=w, device=x.device)
    ys = torch.linspace((1.0 - h) * 0.5, (h - 1.0) * 0.5, steps=h, device=x.device)
    base = torch.stack([xs.expand(h, w), ys[:, None].expand(h, w), torch.ones(h, w, device=x.device)], dim=-1)
    scaled = theta.transpose(1, 2) / torch.tensor([0.5 * w, 0.5 * h], device=x.device)
    grid = base.view(1, h * w, 3).expand(n, -1, -1).bmm(scaled).view(n, h, w, 2)
    out = grid_sample(x.float(), grid, mode="bilinear", padding_mode="zeros", align_corners=False)
    return out.round_().to(torch.uint8)


def autocontrast(x: torch.Tensor) -> torch.Tensor:
    """torchvision's autocontrast (each channel stretched to 0..255); one image on the CPU by a table per channel."""
    if not _one_on_cpu(x):
        return F.autocontrast(x)
    import cv2
    import numpy as np

    values = np.arange(256, dtype=np.float32)
    planes = []
    for p in _planes(x):
        lo, hi = (float(v) for v in cv2.minMaxLoc(p)[:2])
        if hi == lo:
            planes.append(p.copy())
            continue
        scale = np.float32(hi - lo) * np.float32(1.0 / 255)  # torchvision: (max - min) * (1 / bound), float32
        lut = np.clip((values - np.float32(lo)) / scale, 0, 255).astype(np.uint8)
        planes.append(cv2.LUT(p, lut))
    return _from_planes(planes)


def equalize(x: torch.Tensor) -> torch.Tensor:
    """torchvision's equalize (per image and channel); one image on the CPU by bincount and a lookup table, with
    torchvision's table arithmetic."""
    if not _one_on_cpu(x):
        return F.equalize(x)
    import cv2
    import numpy as np

    planes = []
    for p in _planes(x):
        hist = cv2.calcHist([p], [0], None, [256], [0, 256]).ravel().astype(np.int64)
        cum = hist.cumsum()
        step = (p.size - hist[int(cum.argmax())]) // 255  # pixels not of the highest value present, / 255
        if step == 0:
            planes.append(p.copy())
            continue
        lut = np.clip((cum[:-1] + step // 2) // step, 0, 255).astype(np.uint8)
        planes.append(cv2.LUT(p, np.concatenate([[0], lut]).astype(np.uint8)))
    return _from_planes(planes)


def translate(x: torch.Tensor, shifts: list[tuple[int, int]]) -> torch.Tensor:
    """Whole-pixel translations (content moves by (dx, dy), fill 0): what bilinear affine does for integer shifts."""
    out = torch.zeros_like(x)
    h, w = x.shape[-2:]
    for i, (dx, dy) in enumerate(shifts):
        if abs(dx) >= w or abs(dy) >= h:
            continue
        out[i, :, max(dy, 0) : h + min(dy, 0), max(dx, 0) : w + min(dx, 0)] = x[
            i, :, max(-dy, 0) : h + min(-dy, 0), max(-dx, 0) : w + min(-dx, 0)
        ]
    return out


def erase(x: torch.Tensor, boxes: list[tuple[int, int, int, int]]) -> torch.Tensor:
    """torchvision's erase with value 0 (D.1's default) of the box (top, left, height, width) of each image."""
    n, _, h, w = x.shape
    if _one_on_cpu(x):
        top, left, height, width = (int(v) for v in boxes[0])
        if height == 0 or width == 0:
            return x
        out = x.clone()
        out[..., top : top + height, left : left + width] = 0
        return out
    b = torch.tensor(boxes, dtype=torch.int64).view(n, 4).to(x.device, non_blocking=True)
    tops, lefts = b[:, 0].view(n, 1, 1), b[:, 1].view(n, 1, 1)
    bottoms, rights = tops + b[:, 2].view(n, 1, 1), lefts + b[:, 3].view(n, 1, 1)
    ys = torch.arange(h, device=x.device).view(1, h, 1)
    xs = torch.arange(w, device=x.device).view(1, 1, w)
    inside = (ys >= tops) & (ys < bottoms) & (xs >= lefts) & (xs < rights)
    return x.masked_fill(inside[:, None], 0)


def gaussian_blur(x: torch.Tensor, kernel_size, sigmas: list) -> torch.Tensor:
    """torchvision's gaussian_blur (reflect padding) of uint8 images with per-image (sigma_x, sigma_y), as two 1-D
    passes."""
    n, _, h, w = x.shape
    kx, ky = kernel_size
    if n == 1:  # one image (the CPU path): scalar weights, in-place multiply-adds without temporaries
        p = pad(x.float(), [kx // 2, kx // 2, ky // 2, ky // 2], mode="reflect")
        ax, ay = _gaussian_kernel1d(kx, sigmas[0][0]).tolist(), _gaussian_kernel1d(ky, sigmas[0][1]).tolist()
        rows = p[..., 0:w] * ax[0]
        for i in range(1, kx):
            rows.add_(p[..., i : i + w], alpha=ax[i])
        out = rows[..., 0:h, :] * ay[0]
        for j in range(1, ky):
            out.add_(rows[..., j : j + h, :], alpha=ay[j])
        return out.round_().clamp_(0, 255).to(torch.uint8)
    wx = torch.stack([_gaussian_kernel1d(kx, s[0]) for s in sigmas]).to(x.device, non_blocking=True)
    wy = torch.stack([_gaussian_kernel1d(ky, s[1]) for s in sigmas]).to(x.device, non_blocking=True)
    p = pad(x.float(), [kx // 2, kx // 2, ky // 2, ky // 2], mode="reflect")
    rows = p[..., 0:w] * wx[:, 0].view(n, 1, 1, 1)
    for i in range(1, kx):
        rows.add_(p[..., i : i + w] * wx[:, i].view(n, 1, 1, 1))
    out = rows[..., 0:h, :] * wy[:, 0].view(n, 1, 1, 1)
    for j in range(1, ky):
        out.add_(rows[..., j : j + h, :] * wy[:, j].view(n, 1, 1, 1))
    return out.round_().clamp_(0, 255).to(torch.uint8)
