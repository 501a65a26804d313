"""The calibration methods of SQUID-E §5.3 as training losses and prediction rules.

Each method is a `Method`: what the head needs (dropout, an extra logit), the training loss on the head's raw
outputs, and how raw outputs become class probabilities at test time.

- BL  baseline: softmax + cross-entropy.
- MC  Monte-Carlo dropout (Gal & Ghahramani 2016): dropout 0.5 before the linear head, kept on at test time and
      averaged over 50 samples (squidflow.training.runs samples the head only, on features computed once: the backbone has
      no dropout, so this is the same distribution at 1/50 of the cost).
- LS  label smoothing (Müller et al. 2019), ε = 0.2.
- BM  belief matching (Joo, Chung & Seo 2020, "Being Bayesian about Categorical Probability"): the outputs are the
      log concentrations of a Dirichlet belief α = exp(z) over the class probabilities; the loss is the negative
      ELBO  −E_Dir(α)[log π_y] + λ·KL(Dir(α) ‖ Dir(β)) with a uniform prior β = 1 and λ = 0.003; the prediction is the
      Dirichlet mean α/α₀ (= softmax(z)).
- FL  focal loss (Lin et al. 2017, as used for calibration by Mukhoti et al. 2020): −(1 − p_y)^γ log p_y, γ = 3.
- RS  relaxed softmax (Neumann, Zisserman & Vedaldi 2018): one extra output s gives an inverse temperature
      a = softplus(s) > 0 and the prediction is softmax(a·z); trained with cross-entropy on that prediction, so the
      network learns to lower its own confidence on hard images.
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


def relaxed_softmax_logits(outputs: torch.Tensor) -> torch.Tensor:
    """Class logits a·z from K + 1 outputs: z = outputs[:, :K], a = softplus(outputs[:, K])."""
    return outputs[:, :-1] * F.softplus(outputs[:, -1:])


def relaxed_softmax_loss(outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(relaxed_softmax_logits(outputs), targets)


def softmax_probs(outputs: torch.Tensor) -> torch.Tensor:
    return F.softmax(outputs, dim=1)


def relaxed_softmax_probs(outputs: torch.Tensor) -> torch.Tensor:
    return F.softmax(relaxed_softmax_logits(outputs), dim=1)


@dataclass(frozen=True)
class Method:
    """A calibration method: head shape, training loss on the head's outputs, test-time probabilities."""

    name: str
    loss: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    probs: Callable[[torch.Tensor], torch.Tensor] = softmax_probs
    dropout: float = 0.0
    extra_outputs: int = 0  # RS: one inverse-temperature output
    mc_samples: int = 0  # MC: stochastic passes at test time (0 = deterministic)


def get_method(
    name: str,
    *,
    dropout: float = 0.5,
    mc_samples: int = 50,
    label_smoothing: float = 0.2,
    bm_coeff: float = 0.003,
    focal_gamma: float = 3.0,
) -> Method:
    """The Method called `name` (BL, MC, LS, BM, FL, RS); any other name (the 5.1 variants) trains with BL."""
    if name == "MC":
        return Method(name, cross_entropy, dropout=dropout, mc_samples=mc_samples)
    if name == "LS":
        return Method(name, lambda o, t: label_smoothing_loss(o, t, label_smoothing))
    if name == "BM":
        return Method(name, lambda o, t: belief_matching_loss(o, t, bm_coeff))
    if name == "FL":
        return Method(name, lambda o, t: focal_loss(o, t, focal_gamma))
    if name == "RS":
        return Method(name, relaxed_softmax_loss, probs=relaxed_softmax_probs, extra_outputs=1)
    return Method(name, cross_entropy)
