"""The image backbones' names: which exist, and how tables and figures name a model trained on one.

Apart from `squidflow.encoders.pretrained` (which loads them, with torch, timm and torchvision) so that a table or a figure can
name a model without importing what trains it.
"""

from __future__ import annotations

BACKBONES = ("efficientnet_lite0", "resnet50")
# How tables and figures name a model trained on a backbone: the paper's "RN+SD" is ResNet50 + SD (SQUID-E §5.1);
# the offline demo trains EfficientNet-Lite0, whose models read "ENL0+SD".
BACKBONE_PREFIX = {"resnet50": "RN", "efficientnet_lite0": "ENL0"}
BACKBONE_NAME = {"resnet50": "ResNet50", "efficientnet_lite0": "EfficientNet-Lite0"}


def model_label(backbone: str | None, method: str) -> str:
    """A trained model's name in tables and figures: `<backbone prefix>+<method>` (`RN+SD`, `ENL0+ES`)."""
    return f"{BACKBONE_PREFIX.get(backbone or 'resnet50', backbone)}+{method}"
