"""The training-time augmentations of SQUID-E supplement D.1, as torchvision transforms on uint8 image tensors.

The transform lists are the paper's, argument for argument, at the paper's 256-px input; at another input size the
geometric sizes scale with it (Resize(2·size) then RandomCrop(size)), so a 64-px demo run does what a 256-px run
does. They run on uint8 CHW tensors straight from the cache (RandomSolarize(220) and RandomPosterize(4) are
defined on 0..255 values), one image at a time so each image draws its own random parameters; normalisation comes
after, in `squidflow.training.runs`. The random draws use torch's global generator, which the run's seed fixes.

Geometry of GA and AU (`training.augment_geometry`):
- `whole_frame` (the authors', experiments/tools/train.py lines 38-44 and 62-70): Resize(512) of the whole frame,
  RandomPerspective(0.5), RandomCrop(256) — so a training crop can come from anywhere in the frame, not only from
  its centre. The Resize is done once, in the frame cache (`squidflow.training.cache.build_frame_cache`, the frame at
  a 2·size short side); the perspective warp and the crop run fused (`PerspectiveCrop`), computing only the crop's
  pixels. AU adds RandomErasing(0.5) and GaussianBlur((5, 9)) after the crop.
- `center_crop` (squidflow before this choice existed): the same lists on the cached Resize(size) + CenterCrop(size)
  image; GA then zooms into the centre crop and AU's RandomCrop(size) of a size-px image does nothing.
The unaugmented path (SD, ES and every evaluation image) is Resize(size) → CenterCrop(size) either way.
"""

from __future__ import annotations

import math

import torch
from torch.nn.functional import grid_sample, pad
from torchvision.transforms import v2

# Table 1 (SQUID-E §5.1): RN+SD ... RN+AM train on standard data, RN+ES on SQUID-E frames (no augmentation).
METHODS = ("SD", "PA", "GA", "NM", "AU", "AM", "ES")
GEOMETRIES = ("whole_frame", "center_crop")
WHOLE_FRAME_METHODS = ("GA", "AU")  # the methods whose D.1 list starts from the whole frame


def frame_short_side(method: str, size: int = 256, geometry: str = "whole_frame") -> int | None:
    """The short side of the whole frame a method starts from (2·size for GA and AU on whole frames), else None."""
    if geometry not in GEOMETRIES:
        raise ValueError(f"training.augment_geometry = {geometry!r}: expected one of {GEOMETRIES}")
    return 2 * size if geometry == "whole_frame" and method in WHOLE_FRAME_METHODS else None


def transform_list(method: str, size: int = 256, geometry: str = "whole_frame") -> list[torch.nn.Module]:
    """The D.1 transforms of `method`, in order (empty for SD and ES).

    With `whole_frame` geometry GA and AU start from the frame already resized to a 2·size short side (the cache
    does the Resize), so their lists begin with RandomPerspective.
    """
    if method in ("SD", "ES", "none"):
        return []
    if geometry not in GEOMETRIES:
        raise ValueError(f"training.augment_geometry = {geometry!r}: expected one of {GEOMETRIES}")
    if method == "PA":  # photometric
        return [v2.ColorJitter(0.5, 0.5, 0.5, 0.5), v2.RandomSolarize(220), v2.RandomPosterize(4)]
    if method == "GA":  # geometric
        resize = [] if geometry == "whole_frame" else [v2.Resize(2 * size)]
        return [*resize, v2.RandomPerspective(0.5), v2.RandomCrop(size)]
    if method == "NM":  # noise injection and masking: RandomErasing applied twice
        return [v2.RandomErasing(0.5), v2.RandomErasing(0.5), v2.GaussianBlur(kernel_size=(5, 9))]
    if method == "AU":  # a combination of the above
        return [
            v2.RandomPerspective(0.5),
            v2.RandomCrop(size),
            v2.RandomErasing(0.5),
            v2.GaussianBlur(kernel_size=(5, 9)),
        ]
    if method == "AM":
        return [v2.AugMix(5)]
    raise ValueError(f"unknown augmentation method {method!r}; expected one of {METHODS} (SQUID-E supplement D.1)")


class ThroughPIL(torch.nn.Module):
    """Run transforms on a PIL image made from a uint8 CHW tensor, and return a uint8 CHW tensor.

    torchvision's hue jitter on tensors goes through a float HSV conversion that costs ~50 ms for a 256-px image on
    one core, PIL's costs ~15 ms; the other PA steps cost about the same either way. So PA runs through PIL.
    """

    def __init__(self, transforms: list[torch.nn.Module]):
        super().__init__()
        self.transforms = v2.Compose(transforms)

    def forward(self, image):
        if not isinstance(image, torch.Tensor):  # already a PIL image: nothing to convert
            return self.transforms(image)
        return v2.functional.pil_to_tensor(self.transforms(v2.functional.to_pil_image(image)))


def perspective_window(
    image: torch.Tensor, coefficients: list[float], top: int, left: int, height: int, width: int
) -> torch.Tensor:
    """The pixels [top:top+height, left:left+width] of torchvision's perspective warp of `image` (bilinear, fill 0).

    torchvision warps the whole image (`v2.functional.perspective`) and RandomCrop then keeps a window of it; here
    the sampling grid is built for the window's pixels only, with the same formula (`_perspective_grid`: pixel
    centres, normalised by the whole image's size), and the same fill rule (a mask channel sampled alongside), so
    the result equals the warp-then-crop up to float rounding — at a fraction of the cost on a 512-px frame.
    """
    h_in, w_in = image.shape[-2:]
    dtype = torch.float32
    c = [float(x) for x in coefficients]
    xs = torch.arange(left, left + width, dtype=dtype) + 0.5  # output pixel centres, as in _perspective_grid
    ys = torch.arange(top, top + height, dtype=dtype) + 0.5
    den = (c[6] * xs)[None, :] + (c[7] * ys + 1.0)[:, None]
    x_src = ((c[0] * xs)[None, :] + (c[1] * ys + c[2])[:, None]).div_(den)  # source position, pixel-edge units
    y_src = ((c[3] * xs)[None, :] + (c[4] * ys + c[5])[:, None]).div_(den)
    # The window's source box. With a positive denominator (a linear function, so positive at the four corners means
    # positive everywhere) the map is monotone along rows and columns and the box is that of the four corners.
    corners = [(x, y) for x in (xs[0].item(), xs[-1].item()) for y in (ys[0].item(), ys[-1].item())]
    dens = [c[6] * x + c[7] * y + 1.0 for x, y in corners]
    if min(dens) > 0:
        cx = [(c[0] * x + c[1] * y + c[2]) / d for (x, y), d in zip(corners, dens, strict=True)]
        cy = [(c[3] * x + c[4] * y + c[5]) / d for (x, y), d in zip(corners, dens, strict=True)]
        x_min, x_max, y_min, y_max = min(cx), max(cx), min(cy), max(cy)
    else:
        x_min, x_max, y_min, y_max = (float(t) for t in (x_src.min(), x_src.max(), y_src.min(), y_src.max()))
    # Only the source pixels the window reads (box + one pixel) are converted and sampled. Where the box is clipped
    # by the image border, outside the box is outside the image, so the zero padding and the mask are what the
    # whole-image warp gives; inside, no sample reaches the box's edge.
    x0 = max(math.floor(x_min - 0.5) - 1, 0)
    y0 = max(math.floor(y_min - 0.5) - 1, 0)
    x1 = min(math.ceil(x_max - 0.5) + 2, w_in)
    y1 = min(math.ceil(y_max - 0.5) + 2, h_in)
    if x1 <= x0 or y1 <= y0:  # the window sees nothing of the image: all fill
        return torch.zeros((*image.shape[:-2], height, width), dtype=image.dtype)
    image = image[..., y0:y1, x0:x1]
    h_box, w_box = y1 - y0, x1 - x0
    grid = torch.stack([x_src.sub_(x0).mul_(2.0 / w_box).sub_(1.0), y_src.sub_(y0).mul_(2.0 / h_box).sub_(1.0)], dim=-1)
    # every sample's four neighbours are pixels of the image: the fill mask would be 1 everywhere
    inside = x_min >= x0 + 0.5 and x_max <= x1 - 0.5 and y_min >= y0 + 0.5 and y_max <= y1 - 0.5
    if inside:
        out = grid_sample(
            image.to(dtype)[None], grid[None], mode="bilinear", padding_mode="zeros", align_corners=False
        )[0]
    else:
        with_mask = torch.ones((1, image.shape[-3] + 1, h_box, w_box), dtype=dtype)
        with_mask[0, :-1] = image
        sampled = grid_sample(with_mask, grid[None], mode="bilinear", padding_mode="zeros", align_corners=False)[0]
        out, mask = sampled[:-1], sampled[-1:]
        out = out.mul_(mask)  # torchvision's fill rule for fill = 0: mask * (img - 0) + 0
    return out.round_().clamp_(0, 255).to(image.dtype) if not image.is_floating_point() else out


class PerspectiveCrop(torch.nn.Module):
    """RandomPerspective followed by RandomCrop, as one step that computes only the crop's pixels.

    The random draws are the two torchvision modules' own, in their order (the perspective's apply-or-not draw and
    its eight corner offsets, then the crop's top and left), so a seed gives the same parameters as
    `v2.Compose([perspective, crop])`, and the pixels agree up to rounding (tests/unit/training/test_training_fidelity.py).
    """

    def __init__(self, perspective: v2.RandomPerspective, crop: v2.RandomCrop):
        super().__init__()
        self.perspective, self.crop = perspective, crop

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        coefficients = None
        if torch.rand(1) < self.perspective.p:
            coefficients = self.perspective.make_params([image])["coefficients"]
        params = self.crop.make_params([image])
        top, left, height, width = params["top"], params["left"], params["height"], params["width"]
        if params["needs_pad"]:
            raise ValueError(
                f"PerspectiveCrop: a {tuple(image.shape[-2:])} image is smaller than the crop "
                f"{(height, width)}; the frame cache stores frames at a 2·crop short side"
            )
        if coefficients is None:
            return image[..., top : top + height, left : left + width].clone()
        return perspective_window(image, coefficients, top, left, height, width)


def _gaussian_kernel1d(size: int, sigma: float) -> torch.Tensor:
    """torchvision's 1-D Gaussian kernel (v2.functional._misc._get_gaussian_kernel1d), float32."""
    lim = (size - 1) / (2.0 * math.sqrt(2.0))
    return torch.softmax(torch.linspace(-lim, lim, steps=size).div(sigma).pow(2).neg(), dim=0)


class SeparableGaussianBlur(v2.GaussianBlur):
    """torchvision's GaussianBlur — the same random sigma draw, kernel and reflect padding — computed as two 1-D
    passes of shifted multiply-adds (5 + 9 per pixel for D.1's (5, 9) kernel instead of 45). The 2-D kernel is the
    outer product of the two 1-D ones, so the result equals torchvision's up to float rounding (at most 1 grey
    level)."""

    def transform(self, inpt, params):
        if type(inpt) is not torch.Tensor or inpt.ndim != 3:
            return super().transform(inpt, params)
        (kx, ky), (sx, sy) = self.kernel_size, params["sigma"]
        height, width = inpt.shape[-2:]
        x = pad(inpt.to(torch.float32)[None], [kx // 2, kx // 2, ky // 2, ky // 2], mode="reflect")[0]
        # shifted multiply-adds: a depthwise conv2d on the CPU costs as much for 5 taps as for 45
        wx, wy = _gaussian_kernel1d(kx, sx).tolist(), _gaussian_kernel1d(ky, sy).tolist()
        rows = x[:, :, 0:width] * wx[0]
        for i in range(1, kx):
            rows.add_(x[:, :, i : i + width], alpha=wx[i])
        out = rows[:, 0:height] * wy[0]
        for j in range(1, ky):
            out.add_(rows[:, j : j + height], alpha=wy[j])
        return out if inpt.is_floating_point() else out.round_().clamp_(0, 255).to(inpt.dtype)


def _fast(step: torch.nn.Module) -> torch.nn.Module:
    """The same transform, computed faster where squidflow has a faster equivalent (the Gaussian blur)."""
    if type(step) is v2.GaussianBlur:
        return SeparableGaussianBlur(step.kernel_size, step.sigma)
    return step


def build_augmentation(method: str, size: int = 256, geometry: str = "whole_frame") -> torch.nn.Module | None:
    """The method's transforms as one callable on uint8 CHW tensors, or None when it has none (SD, ES).

    With `whole_frame` geometry GA and AU take the whole frame at a 2·size short side (the frame cache) and return
    a size × size crop; every other method takes and returns the cached size × size image. GaussianBlur runs as
    `SeparableGaussianBlur` (same draws, same kernel).
    """
    steps = transform_list(method, size, geometry)
    if not steps:
        return None
    if method == "PA":
        return ThroughPIL(steps)
    if frame_short_side(method, size, geometry):
        perspective, crop, *rest = steps
        return v2.Compose([PerspectiveCrop(perspective, crop), *map(_fast, rest)])
    return v2.Compose([_fast(step) for step in steps])
