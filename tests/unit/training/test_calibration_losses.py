"""Each calibration loss of SQUID-E §5.3 on a worked example: logits z = (0, ln 3), so softmax = (1/4, 3/4)."""

from __future__ import annotations

import math

import pytest
import torch

from squidflow.training.config import TrainConfig
from squidflow.training.losses import (
    belief_matching_loss,
    cross_entropy,
    focal_loss,
    get_method,
    label_smoothing_loss,
    relaxed_softmax_loss,
    relaxed_softmax_probs,
)

Z = torch.tensor([[0.0, math.log(3.0)]], dtype=torch.float64)
Y = torch.tensor([1])


def test_cross_entropy_baseline():
    assert cross_entropy(Z, Y).item() == pytest.approx(-math.log(0.75))


def test_focal_loss_gamma_3():
    # −(1 − 3/4)^3 · ln(3/4)
    assert focal_loss(Z, Y, gamma=3.0).item() == pytest.approx(-(0.25**3) * math.log(0.75))
    assert focal_loss(Z, Y, gamma=0.0).item() == pytest.approx(-math.log(0.75))  # γ = 0 is cross-entropy


def test_label_smoothing_0_2():
    # target (ε/2, 1 − ε + ε/2) = (.1, .9): −(.1 ln 1/4 + .9 ln 3/4)
    assert label_smoothing_loss(Z, Y, 0.2).item() == pytest.approx(-(0.1 * math.log(0.25) + 0.9 * math.log(0.75)))


def test_belief_matching_coefficient_0_003():
    # α = exp(z) = (1, 3), α₀ = 4. −E[log π_1] = −(ψ(3) − ψ(4)) = 1/3.
    # KL(Dir(1,3) ‖ Dir(1,1)) = ln Γ(4) − ln Γ(1) − ln Γ(3) − ln Γ(2) + ln Γ(1) + ln Γ(1) + 2(ψ(3) − ψ(4)) = ln 3 − 2/3
    expected = 1 / 3 + 0.003 * (math.log(3) - 2 / 3)
    assert belief_matching_loss(Z, Y, coeff=0.003).item() == pytest.approx(expected)


def test_relaxed_softmax_extra_logit_is_inverse_temperature():
    # rs_scale softplus: extra output s with softplus(s) = 2: prediction softmax(2z) = (1/10, 9/10)
    s = math.log(math.exp(2.0) - 1.0)
    outputs = torch.tensor([[0.0, math.log(3.0), s]], dtype=torch.float64)
    assert relaxed_softmax_probs(outputs, "softplus")[0].tolist() == pytest.approx([0.1, 0.9])
    assert relaxed_softmax_loss(outputs, Y, "softplus", 0.0).item() == pytest.approx(-math.log(0.9))


def test_losses_average_over_the_batch_and_have_gradients():
    z = torch.tensor([[0.0, math.log(3.0)], [math.log(3.0), 0.0]], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([1, 1])  # second row: p_y = 1/4
    loss = focal_loss(z, y, gamma=3.0)
    expected = (-(0.25**3) * math.log(0.75) - (0.75**3) * math.log(0.25)) / 2
    assert loss.item() == pytest.approx(expected)
    loss.backward()
    assert torch.isfinite(z.grad).all()


def test_methods_carry_the_paper_settings():
    assert get_method("MC", TrainConfig()).dropout == 0.5 and get_method("MC", TrainConfig()).mc_samples == 50
    assert get_method("RS", TrainConfig()).extra_outputs == 1
    assert get_method("BL", TrainConfig()).dropout == 0 and get_method("BL", TrainConfig()).mc_samples == 0
    assert get_method("LS", TrainConfig()).loss(Z, Y).item() == pytest.approx(label_smoothing_loss(Z, Y, 0.2).item())
    assert get_method("BM", TrainConfig()).loss(Z, Y).item() == pytest.approx(belief_matching_loss(Z, Y, 0.003).item())
    assert get_method("FL", TrainConfig()).loss(Z, Y).item() == pytest.approx(focal_loss(Z, Y, 3.0).item())
