"""The batched D.1 augmentations: each step equals torchvision's op on the same image with the same parameters, every
image draws its own parameters, and the whole-batch path (what a GPU runs) equals the image-by-image CPU path."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from PIL import Image
from skimage import data
from torchvision.transforms import v2
from torchvision.transforms.v2 import functional as F

from squidflow.training import batch_augment as B
from squidflow.training import batch_ops as ops
from squidflow.training.augment import PerspectiveCrop
from squidflow.training.batch_augment import build_batch_augmentation

BILINEAR = F.InterpolationMode.BILINEAR


@pytest.fixture(scope="module")
def photos() -> torch.Tensor:
    """Four real photographs, 96x80 (uint8, N×3×H×W)."""
    imgs = [
        np.asarray(Image.fromarray(im).convert("RGB").resize((96, 80)))
        for im in (data.chelsea(), data.astronaut(), data.coffee(), data.rocket())
    ]
    return torch.from_numpy(np.stack(imgs)).permute(0, 3, 1, 2).contiguous()


def _diff(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    assert a.shape == b.shape and a.dtype == b.dtype == torch.uint8
    return (a.int() - b.int()).abs()


def _each(photos, fn, values):
    return torch.stack([fn(im, v) for im, v in zip(photos, values, strict=True)])


def _both_paths(photos, op, values):
    """The batch at once (the GPU path's formulas) and one image at a time (the CPU's fast paths)."""
    return op(photos, values), torch.cat([op(photos[i : i + 1], values[i : i + 1]) for i in range(len(photos))])


@pytest.mark.parametrize(
    ("name", "op", "ref", "values", "tolerance"),
    [
        ("brightness", ops.brightness, F.adjust_brightness, [0.6, 1.3, 0.9, 1.5], 0),
        ("contrast", ops.contrast, F.adjust_contrast, [0.6, 1.3, 0.9, 1.5], 0),
        ("saturation", ops.saturation, F.adjust_saturation, [0.6, 1.3, 0.0, 1.5], 1),
        ("solarize", ops.solarize, F.solarize, [220.0, 127.5, 0.0, 255.0], 0),
        ("posterize", ops.posterize, F.posterize, [4, 0, 1, 8], 0),
        ("sharpness", ops.sharpness, F.adjust_sharpness, [0.1, 1.9, 1.0, 0.5], 1),
        ("autocontrast", lambda x, v: ops.autocontrast(x), lambda im, v: F.autocontrast(im), [0] * 4, 0),
        ("equalize", lambda x, v: ops.equalize(x), lambda im, v: F.equalize(im), [0] * 4, 0),
    ],
)
def test_each_step_equals_torchvision_with_the_same_parameters(photos, name, op, ref, values, tolerance):
    want = _each(photos, ref, values)
    for got in _both_paths(photos, op, values):
        assert _diff(got, want).max() <= tolerance, name
    dim = (photos // 2 + 40).contiguous()  # a low-contrast image: autocontrast and equalize do stretch it
    assert _diff(op(dim[:1], values[:1]), _each(dim[:1], ref, values[:1])).max() <= tolerance


def test_geometric_steps_equal_torchvision_affine(photos):
    """AugMix's rotate and shears: one grid_sample per batch (GPU path) or OpenCV's warpAffine per image (CPU); its
    whole-pixel translations by slicing."""
    shear, angles, shifts = [0.3, -0.2, 0.1, -0.3], [30.0, -12.0, 3.0, -30.0], [10.0, -31.9, 0.0, 95.0]
    cases = [
        (
            "ShearX",
            shear,
            lambda im, m: F.affine(
                im,
                angle=0.0,
                translate=[0, 0],
                scale=1.0,
                shear=[math.degrees(math.atan(m)), 0.0],
                interpolation=BILINEAR,
                center=[0, 0],
            ),
        ),
        (
            "ShearY",
            shear,
            lambda im, m: F.affine(
                im,
                angle=0.0,
                translate=[0, 0],
                scale=1.0,
                shear=[0.0, math.degrees(math.atan(m))],
                interpolation=BILINEAR,
                center=[0, 0],
            ),
        ),
        ("Rotate", angles, lambda im, m: F.rotate(im, angle=m, interpolation=BILINEAR)),
        (
            "TranslateX",
            shifts,
            lambda im, m: F.affine(
                im, angle=0.0, translate=[int(m), 0], scale=1.0, shear=[0.0, 0.0], interpolation=BILINEAR
            ),
        ),
        (
            "TranslateY",
            shifts,
            lambda im, m: F.affine(
                im, angle=0.0, translate=[0, int(m)], scale=1.0, shear=[0.0, 0.0], interpolation=BILINEAR
            ),
        ),
    ]
    for name, mags, ref in cases:
        want = _each(photos, ref, mags)
        batched, single = _both_paths(photos, lambda x, m, n=name: B.BatchAugMix._op(n, x, m), mags)
        assert _diff(batched, want).max() == 0, name  # grid_sample, as torchvision
        d = _diff(single, want)
        assert d.max() <= 1 and d.float().mean() < 0.05, name  # OpenCV's fixed-point bilinear weights


def test_hue_matches_torchvision_on_a_gpu_path_and_pil_on_the_cpu(photos):
    shifts = [-0.4, 0.1, 0.25, 0.5]
    torch_path = ops.hue(photos, shifts, backend="torch")
    assert _diff(torch_path, _each(photos, F.adjust_hue, shifts)).max() <= 1
    pil = _each(photos, lambda im, h: F.pil_to_tensor(F.adjust_hue(F.to_pil_image(im), h)), shifts)
    d = _diff(ops.hue(photos, shifts), pil)  # OpenCV's uint8 HSV, as PIL's: they round differently
    assert d.max() <= 8 and d.float().mean() < 1.0
    pil_vs_torch = _diff(pil, _each(photos, F.adjust_hue, shifts)).float().mean()
    assert d.float().mean() <= pil_vs_torch  # no further from PIL than torchvision's own tensor hue is


def test_erasing_and_blur_equal_torchvision(photos):
    boxes = [(3, 4, 10, 20), (0, 0, 0, 0), (70, 80, 10, 16), (0, 0, 80, 96)]
    want = torch.stack(
        [
            F.erase(im, i, j, h, w, torch.tensor(0.0)) if h else im
            for im, (i, j, h, w) in zip(photos, boxes, strict=True)
        ]
    )
    for got in _both_paths(photos, ops.erase, boxes):
        assert _diff(got, want).max() == 0
    sigmas = [[0.1, 0.1], [2.0, 2.0], [0.7, 0.7], [1.3, 1.3]]
    want = _each(photos, lambda im, s: F.gaussian_blur(im, [5, 9], s), sigmas)
    for got in _both_paths(photos, lambda x, s: ops.gaussian_blur(x, (5, 9), s), sigmas):
        assert _diff(got, want).max() <= 1


@pytest.mark.parametrize("method", ["PA", "NM", "AM"])
def test_every_image_draws_its_own_parameters_and_the_seed_fixes_them(photos, method):
    per_image, per_batch = build_batch_augmentation(method, 64)
    assert per_image is None
    same = photos[1:2].expand(12, -1, -1, -1).contiguous()  # twelve copies of one photograph
    torch.manual_seed(5)
    out = per_batch(same)
    assert out.shape == same.shape and out.dtype == torch.uint8
    distinct = {out[i].numpy().tobytes() for i in range(len(out))}
    assert len(distinct) >= 6, f"{method}: {len(distinct)} distinct results of 12 draws"
    torch.manual_seed(5)
    assert torch.equal(per_batch(same), out)


@pytest.mark.parametrize(
    ("method", "off_by_more_than_2", "mean_diff"), [("PA", 0.05, 1.0), ("NM", 0.0, 0.01), ("AM", 0.002, 0.05)]
)
def test_whole_batch_path_equals_the_image_by_image_path(photos, method, off_by_more_than_2, mean_diff):
    """What a GPU runs (every step on the whole batch) against the CPU's image-by-image fast paths, same draws: equal
    up to the steps' one-grey-level rounding (PA: OpenCV's hue against torchvision's), which a later AugMix step can
    amplify at a few pixels (a shear off by one, then equalize)."""
    _, aug = build_batch_augmentation(method, 64)
    for seed in range(6):
        torch.manual_seed(seed)
        params = aug.draw(photos)
        batched = aug.apply_params(photos, params)
        single = torch.cat([aug.apply_params(photos[i : i + 1], params[i : i + 1]) for i in range(len(photos))])
        d = _diff(batched, single)
        assert d.float().mean() < mean_diff, (method, seed, float(d.float().mean()))
        assert (d > 2).float().mean() <= off_by_more_than_2, (method, seed, float((d > 2).float().mean()))


def test_each_method_splits_into_per_image_geometry_and_batched_rest():
    assert build_batch_augmentation("SD", 64) == (None, None) and build_batch_augmentation("ES", 64) == (None, None)
    per_image, per_batch = build_batch_augmentation("AU", 64)
    assert isinstance(per_image, PerspectiveCrop)
    assert [type(s) for s in per_batch.steps] == [v2.RandomErasing, v2.GaussianBlur]
    per_image, per_batch = build_batch_augmentation("GA", 64)
    assert per_batch is None and isinstance(per_image.transforms[0], PerspectiveCrop)
    per_image, per_batch = build_batch_augmentation("AU", 64, "center_crop")  # the former geometry: all per image
    assert per_batch is None and per_image is not None
    with pytest.raises(ValueError, match="PA"):
        build_batch_augmentation("XX", 64)


def test_batch_augmentations_keep_torch_module_apply():
    """torch.nn.Module.apply(fn) (what an init or a dtype walk over a model calls on every submodule) still works on
    the batched augmentations: their own method no longer shadows it (it was `apply(x, params)`)."""
    seen = []
    for method in ("PA", "AU", "AM"):
        _, aug = build_batch_augmentation(method, 64)
        assert aug.apply(lambda m: seen.append(type(m).__name__)) is aug
    assert {"BatchPhotometric", "BatchErasingBlur", "BatchAugMix"} <= set(seen)


def test_augmix_batch_weights_are_convex_and_identity_chains_return_the_image(photos):
    """With every chain an identity op, AugMix's mix is the image itself (its weights sum to one)."""
    _, aug = build_batch_augmentation("AM", 64)
    torch.manual_seed(0)
    params = aug.draw(photos)
    for weights, _chains in params:
        assert abs(sum(weights) - 1.0) < 1e-5 and min(weights) >= 0
    identity = [(w, [[("Posterize", 8.0)] for _ in chains]) for w, chains in params]  # 8 bits: unchanged
    for got in (aug.apply_params(photos, identity), aug.apply_params(photos[:1], identity[:1])):
        assert _diff(got, photos[: len(got)]).max() <= 1  # float mixing, truncated
