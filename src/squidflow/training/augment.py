"""The training-time augmentations of SQUID-E supplement D.1, as torchvision transforms on uint8 image tensors.

The transform lists are the paper's, argument for argument, at the paper's 256-px input; at another input size the
two geometric sizes scale with it (GA: Resize(2·size) then RandomCrop(size)), so a 64-px demo run does what a 256-px
run does. They run on uint8 CHW tensors straight from the cache (RandomSolarize(220) and RandomPosterize(4) are
defined on 0..255 values), one image at a time so each image draws its own random parameters; normalisation comes
after, in `squidflow.training.runs`. The random draws use torch's global generator, which the run's seed fixes.
"""

from __future__ import annotations

import torch
from torchvision.transforms import v2

# Seed 000 Table 1: RN+SD ... RN+AM train on standard data, RN+ES on SQUID-E frames (no augmentation).
VARIANTS = ("SD", "PA", "GA", "NM", "AU", "AM", "ES")


def transform_list(variant: str, size: int = 256) -> list[torch.nn.Module]:
    """The D.1 transforms of `variant`, in order (empty for SD and ES)."""
    if variant in ("SD", "ES", "none"):
        return []
    if variant == "PA":  # photometric
        return [v2.ColorJitter(0.5, 0.5, 0.5, 0.5), v2.RandomSolarize(220), v2.RandomPosterize(4)]
    if variant == "GA":  # geometric
        return [v2.Resize(2 * size), v2.RandomPerspective(0.5), v2.RandomCrop(size)]
    if variant == "NM":  # noise injection and masking: RandomErasing applied twice
        return [v2.RandomErasing(0.5), v2.RandomErasing(0.5), v2.GaussianBlur(kernel_size=(5, 9))]
    if variant == "AU":  # a combination of the above
        return [v2.RandomPerspective(0.5), v2.RandomCrop(size), v2.RandomErasing(0.5), v2.GaussianBlur(kernel_size=(5, 9))]
    if variant == "AM":
        return [v2.AugMix(5)]
    raise ValueError(f"unknown augmentation variant {variant!r}; expected one of {VARIANTS} (SQUID-E supplement D.1)")


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


def build_augmentation(variant: str, size: int = 256) -> torch.nn.Module | None:
    """The variant's transforms as one callable on uint8 CHW tensors, or None when it has none (SD, ES)."""
    steps = transform_list(variant, size)
    if not steps:
        return None
    return ThroughPIL(steps) if variant == "PA" else v2.Compose(steps)
