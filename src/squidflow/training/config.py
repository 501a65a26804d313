"""The training stage's config: the `training` keys a run reads (SQUID-E supplement D.1), without importing torch,
so the rules file builds a run's params from these fields (`config_fields`) and the schema keeps the defaults."""

from __future__ import annotations

from dataclasses import dataclass

from squidflow.config.validation import defaults_from_schema, from_section, schema_default
from squidflow.encoders.pretrained import IMAGENET_MEAN, IMAGENET_STD

# Which layers learn, per Table 1 and Table 3 method, when the config names none: the authors' (layer4 + head for
# RNModel, the head only for MCModel; see squidflow.training.models): the schema's training.trainable defaults.
AUTHORS_TRAINABLE = schema_default("training.trainable")


@dataclass(frozen=True)
@defaults_from_schema("training", events="training.classification.events")
class TrainConfig:
    """The `training` config section's model and optimisation keys (defaults: SQUID-E supplement D.1)."""

    backbone: str
    weights: str
    epochs: int
    batch_size: int
    lr: float
    crop: int
    num_workers: int
    amp: bool  # mixed precision (bfloat16) on CUDA; ignored on the CPU
    eval_batch_size: int
    ece_bins: int
    kl_eps: float
    dropout: float
    mc_samples: int
    label_smoothing: float
    bm_coeff: float
    focal_gamma: float
    trainable: dict  # method -> all | layer4 | head
    rs_scale: str  # RS: the extra output scales the logits as is (authors) or through softplus
    rs_label_smoothing: float  # RS: label smoothing of its loss (authors: 0.2)
    mc_average: str  # MC: softmax of the mean logits (authors) or mean of the softmax outputs
    augment_geometry: str  # GA/AU: from the whole frame (authors) or from the centre crop
    authors_ece_bins: int  # "ECE (authors' code)": torchmetrics 0.8 n_bins
    authors_ece_batch: int  # ... averaged over shuffled batches of this size
    events: tuple[str, ...]
    # The library's constants (no config keys), after the schema's keys: a field with a default in the class body
    # cannot come before the ones whose default the schema gives (mypy reads those as having none).
    mean: tuple[float, ...] = IMAGENET_MEAN
    std: tuple[float, ...] = IMAGENET_STD

    def trainable_for(self, method: str) -> str:
        """Which layers learn for `method` (the configured choice, else the authors')."""
        return (self.trainable or {}).get(method) or AUTHORS_TRAINABLE.get(method, "layer4")

    @classmethod
    def from_config(cls, section: dict) -> TrainConfig:
        return from_section(cls, section)
