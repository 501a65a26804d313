"""The training stage's config: the `training` keys a run reads (SQUID-E supplement D.1), without importing torch,
so the rules file builds a run's params from these fields (`config_fields`) and the schema keeps the defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

from squidflow.config import from_section
from squidflow.pretrained import IMAGENET_MEAN, IMAGENET_STD

# Which layers learn, per Table 1 and Table 3 method: the authors' (layer4 + head for RNModel, the head only
# for MCModel; see squidflow.training.models). The schema's training.trainable defaults are these.
AUTHORS_TRAINABLE = {**{v: "layer4" for v in ("SD", "PA", "GA", "NM", "AU", "AM", "ES")},
                     **{m: "layer4" for m in ("BL", "LS", "BM", "FL", "RS")}, "MC": "head"}


@dataclass(frozen=True)
class TrainConfig:
    """The `training` config section's model and optimisation keys (defaults: SQUID-E supplement D.1)."""

    backbone: str = "resnet50"
    weights: str = "imagenet"
    epochs: int = 5
    batch_size: int = 16
    lr: float = 1e-5
    crop: int = 256
    mean: tuple[float, ...] = IMAGENET_MEAN
    std: tuple[float, ...] = IMAGENET_STD
    num_workers: int = 0
    amp: bool = True  # mixed precision (bfloat16) on CUDA; ignored on the CPU
    eval_batch_size: int = 64
    ece_bins: int = 10
    kl_eps: float = 1e-6
    dropout: float = 0.5
    mc_samples: int = 50
    label_smoothing: float = 0.2
    bm_coeff: float = 0.003
    focal_gamma: float = 3.0
    trainable: dict = field(default_factory=lambda: dict(AUTHORS_TRAINABLE))  # method -> all | layer4 | head
    rs_scale: str = "raw"  # RS: the extra output scales the logits as is (authors) or through softplus
    rs_label_smoothing: float = 0.2  # RS: label smoothing of its loss (authors: 0.2)
    mc_average: str = "logits"  # MC: softmax of the mean logits (authors) or mean of the softmax outputs
    augment_geometry: str = "whole_frame"  # GA/AU: from the whole frame (authors) or from the centre crop
    authors_ece_bins: int = 5  # "ECE (authors' code)": torchmetrics 0.8 n_bins
    authors_ece_batch: int = 16  # ... averaged over shuffled batches of this size
    events: tuple[str, ...] = field(default=("birthday_party", "wedding", "parade", "protest"))

    def trainable_for(self, method: str) -> str:
        """Which layers learn for `method` (the configured choice, else the authors')."""
        return (self.trainable or {}).get(method) or AUTHORS_TRAINABLE.get(method, "layer4")

    @classmethod
    def from_config(cls, section: dict) -> TrainConfig:
        return from_section(cls, section)
