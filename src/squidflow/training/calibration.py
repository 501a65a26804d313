"""How well a classifier's confidence matches ground truth and human judgments (SQUID-E §5.1, §5.3; SQUID-E supplement D.4).

Every metric takes numpy arrays and returns a float, so it can be checked by hand on a few numbers:
- `expected_calibration_error`: top-label ECE against ground-truth labels, equal-width confidence bins (the paper
  does not state its bin count; squidflow uses `training.ece_bins`, 10 by default, and writes it into every
  table's caption).
- `huj_mse`: the model's target-class probability against the mean human judgment / 100 (Table 3 "HUJ MSE").
- `bernoulli_kl`: KL(human ‖ model) between Bernoulli(mean judgment / 100) and Bernoulli(target-class
  probability), both clipped to [eps, 1 - eps] so that a unanimous 0 or 100 judgment stays finite (Table 9).
- `binned_accuracy`: accuracy per certainty bin of the mean human judgment (Table 1: 0-20 ... 80-100).
"""

from __future__ import annotations

import numpy as np

CERTAINTY_BINS = ("0-20", "20-40", "40-60", "60-80", "80-100")


def certainty_bin(human_mean: float) -> str:
    """The certainty bin of a mean judgment in 0..100: [0,20) -> "0-20", ..., [80,100] -> "80-100"."""
    if not 0 <= human_mean <= 100:
        raise ValueError(f"mean human judgment {human_mean!r} is outside 0..100")
    return CERTAINTY_BINS[min(int(human_mean // 20), len(CERTAINTY_BINS) - 1)]


def accuracy(probs: np.ndarray, labels: np.ndarray) -> float:
    """Share of rows whose most probable class is the label (nan for no rows)."""
    probs, labels = np.asarray(probs, dtype=float), np.asarray(labels)
    if len(labels) == 0:
        return float("nan")
    return float(np.mean(probs.argmax(axis=1) == labels))


def expected_calibration_error(probs: np.ndarray, labels: np.ndarray, n_bins: int = 10) -> float:
    """Top-label ECE: sum over equal-width confidence bins of |accuracy - mean confidence| weighted by bin size.

    Bins are (0, 1/n], (1/n, 2/n], ..., right-closed as in Guo et al. 2017, so a confidence of exactly 1 falls in the
    last bin.
    """
    probs, labels = np.asarray(probs, dtype=float), np.asarray(labels)
    if len(labels) == 0:
        return float("nan")
    confidence = probs.max(axis=1)
    correct = (probs.argmax(axis=1) == labels).astype(float)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    bin_of = np.clip(np.searchsorted(edges, confidence, side="left") - 1, 0, n_bins - 1)
    ece = 0.0
    for b in range(n_bins):
        member = bin_of == b
        if member.any():
            ece += member.mean() * abs(correct[member].mean() - confidence[member].mean())
    return float(ece)


def huj_mse(target_prob: np.ndarray, human_mean: np.ndarray) -> float:
    """Mean squared error between the model's target-class probability and mean human judgment / 100."""
    p, h = np.asarray(target_prob, dtype=float), np.asarray(human_mean, dtype=float) / 100.0
    if len(p) == 0:
        return float("nan")
    return float(np.mean((p - h) ** 2))


def bernoulli_kl(target_prob: np.ndarray, human_mean: np.ndarray, eps: float = 1e-6) -> float:
    """Mean over images of KL(Bernoulli(human) ‖ Bernoulli(model)), probabilities clipped to [eps, 1 - eps]."""
    q = np.clip(np.asarray(target_prob, dtype=float), eps, 1 - eps)
    h = np.clip(np.asarray(human_mean, dtype=float) / 100.0, eps, 1 - eps)
    if len(q) == 0:
        return float("nan")
    kl = h * np.log(h / q) + (1 - h) * np.log((1 - h) / (1 - q))
    return float(np.mean(kl))


def binned_accuracy(probs: np.ndarray, labels: np.ndarray, human_mean: np.ndarray) -> dict[str, float]:
    """Accuracy within each certainty bin of the mean human judgment (nan for an empty bin)."""
    probs, labels, human_mean = np.asarray(probs, dtype=float), np.asarray(labels), np.asarray(human_mean, dtype=float)
    bins = np.array([certainty_bin(h) for h in human_mean]) if len(human_mean) else np.array([], dtype=str)
    return {b: accuracy(probs[bins == b], labels[bins == b]) for b in CERTAINTY_BINS}


def run_metrics(
    experiment: str,
    eval_set: np.ndarray,
    labels: np.ndarray,
    probs: np.ndarray,
    human_mean: np.ndarray,
    *,
    ece_bins: int = 10,
    kl_eps: float = 1e-6,
) -> dict[str, float]:
    """The metrics.json of one run, from its predictions.

    classification (§5.1): acc_<bin> for the five certainty bins and avg_acc on judged SE images, sd_acc on SD
    validation images. calibration (§5.3): sd_acc, se_acc, and on SE images huj_mse, kl (class 1 = target event
    against mean judgment / 100) and ece (ground-truth labels, `ece_bins` bins).
    """
    eval_set, labels, probs = np.asarray(eval_set), np.asarray(labels), np.asarray(probs, dtype=float)
    human_mean = np.asarray(human_mean, dtype=float)
    sd, se = eval_set == "SD", eval_set == "SE"
    out = {"sd_acc": accuracy(probs[sd], labels[sd])}
    judged = se & ~np.isnan(human_mean)
    if experiment == "classification":
        for b, acc in binned_accuracy(probs[judged], labels[judged], human_mean[judged]).items():
            out[f"acc_{b}"] = acc
        out["avg_acc"] = accuracy(probs[judged], labels[judged])
        return out
    out["se_acc"] = accuracy(probs[se], labels[se])
    out["huj_mse"] = huj_mse(probs[judged, 1], human_mean[judged])
    out["ece"] = expected_calibration_error(probs[se], labels[se], ece_bins)
    out["kl"] = bernoulli_kl(probs[judged, 1], human_mean[judged], kl_eps)
    return out
