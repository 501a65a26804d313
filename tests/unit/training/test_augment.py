"""Each Table 1 method builds the torchvision transforms SQUID-E supplement D.1 names, with the paper's arguments."""

from __future__ import annotations

import pytest
import torch

from squidflow.training.augment import METHODS, build_augmentation, transform_list


def _names(method, size=256, geometry="whole_frame"):
    return [type(t).__name__ for t in transform_list(method, size, geometry)]


def test_methods_build_the_d1_lists():
    assert _names("SD") == [] and _names("ES") == []
    assert _names("PA") == ["ColorJitter", "RandomSolarize", "RandomPosterize"]
    # whole frames (the default): the frame cache has done D.1's Resize(512), the list continues from there
    assert _names("GA") == ["RandomPerspective", "RandomCrop"]
    assert _names("GA", geometry="center_crop") == ["Resize", "RandomPerspective", "RandomCrop"]
    assert _names("NM") == ["RandomErasing", "RandomErasing", "GaussianBlur"]
    assert _names("AU") == ["RandomPerspective", "RandomCrop", "RandomErasing", "GaussianBlur"]
    assert _names("AM") == ["AugMix"]


def test_d1_arguments_at_256_px():
    jitter, solarize, posterize = transform_list("PA")
    assert jitter.brightness == jitter.contrast == jitter.saturation == (0.5, 1.5) and jitter.hue == (-0.5, 0.5)
    assert solarize.threshold == 220 and posterize.bits == 4
    resize, perspective, crop = transform_list("GA", geometry="center_crop")
    assert resize.size == [512] and perspective.distortion_scale == 0.5 and crop.size == (256, 256)
    erase1, erase2, blur = transform_list("NM")
    assert erase1.p == erase2.p == 0.5 and blur.kernel_size == (5, 9)
    perspective, crop, erase, blur = transform_list("AU")
    assert (
        perspective.distortion_scale == 0.5
        and crop.size == (256, 256)
        and erase.p == 0.5
        and blur.kernel_size == (5, 9)
    )
    (augmix,) = transform_list("AM")
    assert augmix.severity == 5


def test_geometric_sizes_follow_the_input_size():
    resize, _, crop = transform_list("GA", 64, "center_crop")
    assert resize.size == [128] and crop.size == (64, 64)


@pytest.mark.parametrize("method", METHODS)
def test_augmentations_run_on_uint8_tensors_and_follow_the_seed(method):
    image = torch.randint(0, 256, (3, 64, 64), dtype=torch.uint8, generator=torch.Generator().manual_seed(1))
    augment = build_augmentation(method, 64)
    if augment is None:
        assert method in ("SD", "ES")
        return
    assert isinstance(augment, torch.nn.Module)
    torch.manual_seed(7)
    a = augment(image)
    torch.manual_seed(7)
    b = augment(image)
    assert a.dtype == torch.uint8 and a.shape == (3, 64, 64)
    assert torch.equal(a, b)


def test_unknown_method_names_the_choices():
    with pytest.raises(ValueError, match="PA"):
        transform_list("XX")
