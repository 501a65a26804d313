"""The D.1 augmentations applied to a whole batch at once, every image with its own random parameters.

`squidflow.training.augment` transforms one image at a time, the way torchvision's modules are written: the
parameters an image draws (ColorJitter's factors and order, an erased rectangle, a blur's sigma, AugMix's chains) and
the pixel work go together. Here every image still draws its own parameters — from the same torchvision modules'
`make_params` and AugMix's sampling, so from the same distributions, with torch's global generator that the run's
seed fixes — and the pixel work (`squidflow.training.batch_ops`) then runs where the batch is:

* on a GPU, on the whole batch at once with each image's parameters broadcast (images that drew the same op are
  processed together): a few kernels per step, so the augmentations keep up with the model;
* on the CPU, image by image (a 256-px image's working set stays in the core's cache, a batch's does not) with the
  ops' faster CPU kernels, and OpenCV's running weighted average to mix AugMix's chains (a tenth of torch's uint8 ×
  float scalar arithmetic).

tests/unit/training/test_batch_augment.py checks the whole-batch path against the image-by-image one. The geometry of GA and AU
(perspective + crop from whole frames of different sizes) stays per image (`PerspectiveCrop`, in the DataLoader);
what follows it in AU runs here.
"""

from __future__ import annotations

import math

import torch
from torchvision.transforms import v2

from squidflow.training.augment import frame_short_side, transform_list
from squidflow.training.batch_ops import (
    _one_on_cpu,
    affine,
    autocontrast,
    brightness,
    contrast,
    equalize,
    erase,
    gaussian_blur,
    hue,
    posterize,
    saturation,
    sharpness,
    solarize,
    translate,
)


def _apply_grouped(x: torch.Tensor, ops: list[str | None], params: list, apply) -> torch.Tensor:
    """Apply, for each distinct op, `apply(op, images, their params)` to the images that drew it (None: unchanged)."""
    kinds = {o for o in ops if o is not None}
    if not kinds:
        return x
    if len(kinds) == 1 and None not in ops:  # one op for every image (always so for one image)
        op = ops[0]
        return apply(op, x, list(params))
    out = x.clone()
    for op in sorted(kinds):
        idx = [i for i, o in enumerate(ops) if o == op]
        sel = torch.tensor(idx, device=x.device)
        out[sel] = apply(op, x[sel], [params[i] for i in idx])
    return out


# --- the methods -------------------------------------------------------------------------------------------------
class _PerImageParameters(torch.nn.Module):
    """Draw every image's parameters (`draw`), then apply them (`apply_params`; `apply` is torch.nn.Module's own): to
    the whole batch at once on a GPU, image by image on the CPU, where one 256-px image's working set stays in the
    core's cache and a batch's does not."""

    def draw(self, x: torch.Tensor) -> list:
        raise NotImplementedError

    def apply_params(self, x: torch.Tensor, params: list) -> torch.Tensor:
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        params = self.draw(x)
        if x.device.type != "cpu":
            return self.apply_params(x, params)
        return torch.cat([self.apply_params(x[i : i + 1], params[i : i + 1]) for i in range(len(x))])


class BatchPhotometric(_PerImageParameters):
    """PA: ColorJitter(0.5, 0.5, 0.5, 0.5) in each image's own random order, RandomSolarize(220), RandomPosterize(4)."""

    OPS = ("brightness", "contrast", "saturation", "hue")
    FUNCS = {"brightness": brightness, "contrast": contrast, "saturation": saturation, "hue": hue}

    def __init__(self, jitter: v2.ColorJitter, solarize_: v2.RandomSolarize, posterize_: v2.RandomPosterize):
        super().__init__()
        self.jitter, self.solarize, self.posterize = jitter, solarize_, posterize_

    def draw(self, x: torch.Tensor) -> list:
        out = []
        for i in range(len(x)):
            d = self.jitter.make_params([x[i]])
            out.append(
                {
                    "jitter": [(self.OPS[int(k)], d[f"{self.OPS[int(k)]}_factor"]) for k in d["fn_idx"]],
                    "solarize": bool(torch.rand(1) < self.solarize.p),
                    "posterize": bool(torch.rand(1) < self.posterize.p),
                }
            )
        return out

    def apply_params(self, x: torch.Tensor, params: list) -> torch.Tensor:
        n = len(x)
        for step in range(4):
            ops = [p["jitter"][step][0] for p in params]
            x = _apply_grouped(
                x, ops, [p["jitter"][step][1] for p in params], lambda op, imgs, fs: self.FUNCS[op](imgs, fs)
            )
        x = _apply_grouped(
            x,
            ["s" if p["solarize"] else None for p in params],
            [self.solarize.threshold] * n,
            lambda op, imgs, ts: solarize(imgs, ts),
        )
        return _apply_grouped(
            x,
            ["p" if p["posterize"] else None for p in params],
            [self.posterize.bits] * n,
            lambda op, imgs, bs: posterize(imgs, bs),
        )


class BatchErasingBlur(_PerImageParameters):
    """NM (RandomErasing(0.5) twice, GaussianBlur((5, 9))) and AU's steps after its crop (RandomErasing, blur)."""

    def __init__(self, steps: list[torch.nn.Module]):
        super().__init__()
        for s in steps:
            if not isinstance(s, (v2.RandomErasing, v2.GaussianBlur)):
                raise ValueError(f"BatchErasingBlur: no batched version of {type(s).__name__}")
        self.steps = torch.nn.ModuleList(steps)

    def draw(self, x: torch.Tensor) -> list:
        out = []
        for i in range(len(x)):
            image = []
            for step in self.steps:
                if isinstance(step, v2.RandomErasing):
                    p = step.make_params([x[i]]) if torch.rand(1) < step.p else {"v": None}
                    image.append((p["i"], p["j"], p["h"], p["w"]) if p["v"] is not None else (0, 0, 0, 0))
                elif isinstance(step, v2.GaussianBlur):  # the only other step the constructor lets in
                    image.append(step.make_params([x[i]])["sigma"])
            out.append(image)
        return out

    def apply_params(self, x: torch.Tensor, params: list) -> torch.Tensor:
        for k, step in enumerate(self.steps):
            drawn = [p[k] for p in params]
            x = erase(x, drawn) if isinstance(step, v2.RandomErasing) else gaussian_blur(x, step.kernel_size, drawn)
        return x


class BatchAugMix(_PerImageParameters):
    """AugMix (torchvision's, all ops, bilinear, fill 0) with each image's own mixing weights, chain depths, ops and
    magnitudes — torchvision's module given a batch draws one chain for the whole batch."""

    def __init__(self, augmix: v2.AugMix):
        super().__init__()
        self.augmix = augmix
        space = augmix._AUGMENTATION_SPACE if augmix.all_ops else augmix._PARTIAL_AUGMENTATION_SPACE
        self.space = list(space.items())

    def _draw_op(self, h: int, w: int) -> tuple[str, float]:
        a = self.augmix
        name, (magnitudes_fn, signed) = self.space[int(torch.randint(len(self.space), ()))]
        magnitudes = magnitudes_fn(a._PARAMETER_MAX, h, w)
        if magnitudes is None:
            return name, 0.0
        magnitude = float(magnitudes[int(torch.randint(a.severity, ()))])
        if signed and torch.rand(()) <= 0.5:
            magnitude *= -1
        return name, magnitude

    def draw(self, x: torch.Tensor) -> list:
        a = self.augmix
        h, w = x.shape[-2:]
        out = []
        for _ in range(len(x)):
            m = a._sample_dirichlet(torch.tensor([[a.alpha, a.alpha]]))[0]
            mix = a._sample_dirichlet(torch.tensor([[a.alpha] * a.mixture_width]))[0] * m[1]
            chains = []
            for _c in range(a.mixture_width):
                depth = a.chain_depth if a.chain_depth > 0 else int(torch.randint(low=1, high=4, size=(1,)).item())
                chains.append([self._draw_op(h, w) for _ in range(depth)])
            out.append(([float(m[0]), *mix.tolist()], chains))
        return out

    def apply_params(self, x: torch.Tensor, params: list) -> torch.Tensor:
        n = len(x)
        if _one_on_cpu(x):
            return self._apply_one_cpu(x, params[0])
        if n == 1:  # one image elsewhere: scalar weights, no weight tensor
            mix = torch.mul(x, params[0][0][0])
        else:
            wts = torch.tensor([p[0] for p in params], dtype=torch.float32).to(x.device, non_blocking=True)
            mix = x.float().mul_(wts[:, 0].view(n, 1, 1, 1))
        for c in range(self.augmix.mixture_width):
            chains = [p[1][c] for p in params]
            aug = x
            for step in range(max(len(ch) for ch in chains)):
                if n == 1:
                    aug = self._op(chains[0][step][0], aug, [chains[0][step][1]])
                    continue
                drawn = [ch[step] if step < len(ch) else (None, 0.0) for ch in chains]
                aug = _apply_grouped(aug, [d[0] for d in drawn], [d[1] for d in drawn], self._op)
            if n == 1:  # the uint8 chain added with a scalar weight, converted on the fly
                mix.add_(aug, alpha=params[0][0][1 + c])
            else:
                mix.add_(aug.float().mul_(wts[:, 1 + c].view(n, 1, 1, 1)))
        return mix.to(torch.uint8)

    def _apply_one_cpu(self, x: torch.Tensor, params: tuple) -> torch.Tensor:
        """One image on the CPU: each chain's uint8 result is mixed in as it comes by OpenCV's running weighted
        average (float32, one pass over the bytes; torch's uint8 × float scalar costs ten times as much). After chain
        c the accumulator holds the mix so far divided by the weights so far, so its weight is w_c / (w_0 + … + w_c);
        the weights sum to one, so the last average is the mix, truncated to uint8 as torchvision's is."""
        import cv2
        import numpy as np

        weights, chains = params
        w = x.shape[-1]
        acc = x.contiguous().view(-1, w).numpy().astype(np.float32)
        total = float(weights[0])
        for c, chain in enumerate(chains):
            aug = x
            for name, magnitude in chain:
                aug = self._op(name, aug, [magnitude])
            total += float(weights[1 + c])
            if total > 0:
                cv2.accumulateWeighted(aug.contiguous().view(-1, w).numpy(), acc, float(weights[1 + c]) / total)
        if total > 0 and abs(total - 1.0) > 1e-6:
            acc *= np.float32(total)
        return torch.from_numpy(np.clip(acc, 0, 255, out=acc).astype(np.uint8)).view(x.shape)

    @staticmethod
    def _op(name: str, x: torch.Tensor, mags: list[float]) -> torch.Tensor:
        h, w = x.shape[-2:]
        if name in ("ShearX", "ShearY"):
            from torchvision.transforms.v2.functional._geometry import _get_inverse_affine_matrix

            shear = [
                [math.degrees(math.atan(m)), 0.0] if name == "ShearX" else [0.0, math.degrees(math.atan(m))]
                for m in mags
            ]
            centre = [-w * 0.5, -h * 0.5]  # torchvision's center=[0, 0] relative to the image centre
            return affine(x, [_get_inverse_affine_matrix(centre, 0.0, [0.0, 0.0], 1.0, s) for s in shear])
        if name == "Rotate":
            from torchvision.transforms.v2.functional._geometry import _get_inverse_affine_matrix

            return affine(x, [_get_inverse_affine_matrix([0.0, 0.0], -m, [0.0, 0.0], 1.0, [0.0, 0.0]) for m in mags])
        if name == "TranslateX":
            return translate(x, [(int(m), 0) for m in mags])
        if name == "TranslateY":
            return translate(x, [(0, int(m)) for m in mags])
        if name == "Brightness":
            return brightness(x, [1.0 + m for m in mags])
        if name == "Color":
            return saturation(x, [1.0 + m for m in mags])
        if name == "Contrast":
            return contrast(x, [1.0 + m for m in mags])
        if name == "Sharpness":
            return sharpness(x, [1.0 + m for m in mags])
        if name == "Posterize":
            return posterize(x, [int(m) for m in mags])
        if name == "Solarize":
            return solarize(x, [255.0 * m for m in mags])
        if name == "AutoContrast":
            return autocontrast(x)
        if name == "Equalize":
            return equalize(x)
        raise ValueError(f"AugMix op {name!r} has no batched version")


def build_batch_augmentation(
    method: str, size: int = 256, geometry: str = "whole_frame"
) -> tuple[torch.nn.Module | None, torch.nn.Module | None]:
    """(per-image part, per-batch part) of the method's D.1 augmentation.

    The per-image part runs in the DataLoader on each cached image (only GA's and AU's perspective + crop from the
    whole frame, and every step of the `center_crop` geometry's GA and AU); the per-batch part runs on the uint8 batch
    on the training device, before normalisation. Either may be None.
    """
    from squidflow.training.augment import build_augmentation

    steps = transform_list(method, size, geometry)
    if not steps:
        return None, None
    if method == "PA":
        return None, BatchPhotometric(*steps)
    if method == "NM":
        return None, BatchErasingBlur(steps)
    if method == "AM":
        return None, BatchAugMix(steps[0])
    if method == "AU" and frame_short_side(method, size, geometry):
        from squidflow.training.augment import PerspectiveCrop

        perspective, crop, *rest = steps
        return PerspectiveCrop(perspective, crop), BatchErasingBlur(rest)
    return build_augmentation(method, size, geometry), None  # GA, and the centre-crop geometry's GA and AU
