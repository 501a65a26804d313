"""The calibration methods of SQUID-E §5.3 as training losses and prediction rules.

Each method is a `Method`: what the head needs (dropout, an extra logit), the training loss on the head's raw
outputs, and how raw outputs become class probabilities at test time.

- BL  baseline: softmax + cross-entropy.
- MC  Monte-Carlo dropout (Gal & Ghahramani 2016): dropout 0.5 before the linear head, kept on at test time, 50
      samples (squidflow.training.runs samples the head only, on features computed once: the backbone has no dropout,
      so this is the same distribution at 1/50 of the cost). `mc_average`: `logits` (the authors',
      models/mc_model.py lines 38-42: the mean of the 50 passes' logits, then softmax) or `probs` (the mean of the
      50 softmax outputs, the usual predictive distribution).
- LS  label smoothing (Müller et al. 2019), ε = 0.2.
- BM  belief matching (Joo, Chung & Seo 2020, "Being Bayesian about Categorical Probability"): the outputs are the
      log concentrations of a Dirichlet belief α = exp(z) over the class probabilities; the loss is the negative
      ELBO  −E_Dir(α)[log π_y] + λ·KL(Dir(α) ‖ Dir(β)) with a uniform prior β = 1 and λ = 0.003; the prediction is the
      Dirichlet mean α/α₀ (= softmax(z)).
- FL  focal loss (Lin et al. 2017, as used for calibration by Mukhoti et al. 2020): −(1 − p_y)^γ log p_y, γ = 3.
- RS  relaxed softmax (Neumann, Zisserman & Vedaldi 2018): one extra output s scales the class logits z and the
      prediction is softmax(a·z), so the network can lower its own confidence on hard images. `rs_scale`: `raw`
      (the authors', models/rn_model.py lines 51-53: a = s as it comes out of the linear layer, any sign) or
      `softplus` (a = softplus(s) > 0, a proper inverse temperature); trained with cross-entropy with label
      smoothing `rs_label_smoothing` on a·z (the authors': LabelSmoothing(0.2), rn_model.py lines 34-35; 0 gives
      plain cross-entropy).

The authors' LabelSmoothing (JSL's verbModel.py: (1 − ε)·NLL + ε·mean(−log p)) is PyTorch's
`cross_entropy(label_smoothing=ε)`, so LS and RS use the latter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

CALIBRATION_METHODS = ("BL", "MC", "LS", "BM", "FL", "RS")


def cross_entropy(outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(outputs, targets)


def label_smoothing_loss(outputs: torch.Tensor, targets: torch.Tensor, smoothing: float = 0.2) -> torch.Tensor:
    """Cross-entropy against (1 − ε)·onehot + ε/K."""
    return F.cross_entropy(outputs, targets, label_smoothing=smoothing)


def focal_loss(outputs: torch.Tensor, targets: torch.Tensor, gamma: float = 3.0) -> torch.Tensor:
    """Mean of −(1 − p_y)^γ · log p_y."""
    log_p = F.log_softmax(outputs, dim=1).gather(1, targets[:, None]).squeeze(1)
    return (-((1 - log_p.exp()) ** gamma) * log_p).mean()


def belief_matching_loss(
    outputs: torch.Tensor, targets: torch.Tensor, coeff: float = 0.003, prior: float = 1.0
) -> torch.Tensor:
    """Negative ELBO of Dirichlet belief matching (Joo et al. 2020, eq. 8), averaged over the batch.

    E_Dir(α)[log π_y] = ψ(α_y) − ψ(α₀);  KL(Dir(α) ‖ Dir(β)) = log Γ(α₀) − Σ log Γ(α_k) − log Γ(β₀) + Σ log Γ(β_k)
    + Σ (α_k − β_k)(ψ(α_k) − ψ(α₀)).  z is clamped to [−18, 18] before exp so that α stays finite.
    """
    alpha = outputs.clamp(-18.0, 18.0).exp()
    alpha0 = alpha.sum(dim=1)
    beta = torch.full_like(alpha, prior)
    beta0 = beta.sum(dim=1)
    expected_ll = torch.digamma(alpha.gather(1, targets[:, None]).squeeze(1)) - torch.digamma(alpha0)
    kl = (
        torch.lgamma(alpha0)
        - torch.lgamma(alpha).sum(dim=1)
        - torch.lgamma(beta0)
        + torch.lgamma(beta).sum(dim=1)
        + ((alpha - beta) * (torch.digamma(alpha) - torch.digamma(alpha0)[:, None])).sum(dim=1)
    )
    return (-expected_ll + coeff * kl).mean()


RS_SCALES = ("raw", "softplus")
MC_AVERAGES = ("logits", "probs")


def relaxed_softmax_logits(outputs: torch.Tensor, scale: str = "raw") -> torch.Tensor:
    """Class logits a·z from K + 1 outputs: z = outputs[:, :K], a = outputs[:, K] (`raw`) or its softplus."""
    if scale not in RS_SCALES:
        raise ValueError(f"training.rs_scale = {scale!r}: expected one of {RS_SCALES}")
    extra = outputs[:, -1:]
    return outputs[:, :-1] * (extra if scale == "raw" else F.softplus(extra))


def relaxed_softmax_loss(
    outputs: torch.Tensor, targets: torch.Tensor, scale: str = "raw", smoothing: float = 0.2
) -> torch.Tensor:
    return F.cross_entropy(relaxed_softmax_logits(outputs, scale), targets, label_smoothing=smoothing)


def softmax_probs(outputs: torch.Tensor) -> torch.Tensor:
    return F.softmax(outputs, dim=1)


def relaxed_softmax_probs(outputs: torch.Tensor, scale: str = "raw") -> torch.Tensor:
    return F.softmax(relaxed_softmax_logits(outputs, scale), dim=1)


def mc_dropout_probs(samples: torch.Tensor, average: str = "logits") -> torch.Tensor:
    """Class probabilities from stacked dropout passes' logits (S, N, K): softmax of the mean logits (`logits`, the
    authors') or the mean of the passes' softmax (`probs`)."""
    if average not in MC_AVERAGES:
        raise ValueError(f"training.mc_average = {average!r}: expected one of {MC_AVERAGES}")
    if average == "logits":
        return F.softmax(samples.mean(0), dim=-1)
    return F.softmax(samples, dim=-1).mean(0)


@dataclass(frozen=True)
class Method:
    """A calibration method: head shape, training loss on the head's outputs, test-time probabilities."""

    name: str
    loss: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    probs: Callable[[torch.Tensor], torch.Tensor] = softmax_probs
    dropout: float = 0.0
    extra_outputs: int = 0  # RS: one inverse-temperature output
    mc_samples: int = 0  # MC: stochastic passes at test time (0 = deterministic)
    mc_average: str = "logits"  # MC: average the passes' logits (then softmax) or their probabilities
    rs_scale: str = "raw"  # RS: how the extra output scales the logits (raw | softplus)


def get_method(name: str, cfg) -> Method:
    """The Method called `name` (BL, MC, LS, BM, FL, RS); any other name (the Table 1 methods of §5.1, augmentations) trains with BL.

    `cfg` is the run's `squidflow.training.runs.TrainConfig` (its dropout, mc_samples, mc_average, label_smoothing,
    bm_coeff, focal_gamma, rs_scale, rs_label_smoothing): the values, and their defaults, come from the config.
    """
    dropout, mc_samples, mc_average = cfg.dropout, cfg.mc_samples, cfg.mc_average
    rs_scale, rs_label_smoothing = cfg.rs_scale, cfg.rs_label_smoothing
    if name == "MC":
        if mc_average not in MC_AVERAGES:
            raise ValueError(f"training.mc_average = {mc_average!r}: expected one of {MC_AVERAGES}")
        return Method(name, cross_entropy, dropout=dropout, mc_samples=mc_samples, mc_average=mc_average)
    if name == "LS":
        return Method(name, lambda o, t: label_smoothing_loss(o, t, cfg.label_smoothing))
    if name == "BM":
        return Method(name, lambda o, t: belief_matching_loss(o, t, cfg.bm_coeff))
    if name == "FL":
        return Method(name, lambda o, t: focal_loss(o, t, cfg.focal_gamma))
    if name == "RS":
        if rs_scale not in RS_SCALES:
            raise ValueError(f"training.rs_scale = {rs_scale!r}: expected one of {RS_SCALES}")
        return Method(
            name,
            lambda o, t: relaxed_softmax_loss(o, t, rs_scale, rs_label_smoothing),
            probs=lambda o: relaxed_softmax_probs(o, rs_scale),
            extra_outputs=1,
            rs_scale=rs_scale,
        )
    return Method(name, cross_entropy)
