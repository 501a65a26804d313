"""How well a classifier's confidence matches ground truth and human judgments (SQUID-E §5.1, §5.3; SQUID-E supplement D.4).

Every metric takes numpy arrays and returns a float, so it can be checked by hand on a few numbers:
- `expected_calibration_error`: top-label ECE against ground-truth labels, equal-width confidence bins (the paper
  does not state its bin count; squidflow uses `training.ece_bins`, 10 by default, and writes it into every
  table's caption).
- `huj_mse`: the model's target-class probability against the mean human judgment / 100 (Table 3 "HUJ MSE").
- `bernoulli_kl`: KL(human ‖ model) between Bernoulli(mean judgment / 100) and Bernoulli(target-class
  probability), both clipped to [eps, 1 - eps] so that a unanimous 0 or 100 judgment stays finite (Table 9).
- `binned_accuracy`: accuracy per certainty bin of the mean human judgment (Table 1: 0-20 ... 80-100).
- `authors_calibration_error`: the quantity the SQUID-E authors' code reports as ECE, and so the paper's .42–.61
  (see its docstring); Tables 3 and 9 show it beside the top-label ECE.
"""

from __future__ import annotations

import numpy as np

from squidflow.statistics.certainty import CERTAINTY_BINS, bernoulli_kl, certainty_bins, huj_mse
from squidflow.statistics.ece import binned_gap


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
    return binned_gap(confidence, correct, n_bins)


def binary_calibration_error(confidence: np.ndarray, target: np.ndarray, n_bins: int = 5) -> float:
    """torchmetrics 0.8's `calibration_error` in binary mode (norm l1): the confidence is taken as the probability
    that the target is 1, so each bin compares the share of 1 targets with the mean confidence.

    Bins are (0, 1/n], ..., ((n-1)/n, 1] (torch.bucketize as torchmetrics 0.8 uses it); a confidence of exactly 0,
    which torchmetrics 0.8 cannot place, is counted in the first bin.
    """
    confidence, target = np.asarray(confidence, dtype=float).ravel(), np.asarray(target, dtype=float).ravel()
    if len(target) == 0:
        return float("nan")
    return binned_gap(confidence, target, n_bins)


def authors_calibration_error(
    probs: np.ndarray, labels: np.ndarray, *, n_bins: int = 5, batch_size: int = 16, seed: int = 0
) -> float:
    """The "ECE" of the SQUID-E authors' code: `torchmetrics.functional.calibration_error(confidence, y, n_bins=5)`
    (torchmetrics 0.8.2, experiments/setup_alt.py) with confidence = softmax probability of class 0
    (models/rn_model.py lines 57 and 71, conf_index 0 from train_uq.py line 157) against the 0/1 label, averaged over
    the batches of 16 of a shuffled loader (train_uq.py lines 123-131, DataLoader shuffle=True, batch 16).

    In binary mode torchmetrics reads the confidence as P(label = 1), so P(class 0) is compared with the frequency
    of class 1: a perfect confident classifier scores near 1 and a constant 0.5 scores 0. The value does not change
    when the two classes swap names. Batches come from a permutation drawn with `seed` (the run's seed); the last
    batch may be smaller and counts as one batch, as in the authors' mean over batches.
    """
    probs, labels = np.asarray(probs, dtype=float), np.asarray(labels)
    if len(labels) == 0:
        return float("nan")
    order = np.random.default_rng(seed).permutation(len(labels))
    values = [
        binary_calibration_error(probs[idx, 0], labels[idx], n_bins)
        for idx in (order[i : i + batch_size] for i in range(0, len(order), batch_size))
    ]
    return float(np.mean(values))


def binned_accuracy(probs: np.ndarray, labels: np.ndarray, human_mean: np.ndarray) -> dict[str, float]:
    """Accuracy within each certainty bin of the mean human judgment (nan for an empty bin)."""
    probs, labels, human_mean = np.asarray(probs, dtype=float), np.asarray(labels), np.asarray(human_mean, dtype=float)
    bins = certainty_bins(human_mean)
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
    authors_ece_bins: int = 5,
    authors_ece_batch: int = 16,
    seed: int = 0,
) -> dict[str, float]:
    """The metrics.json of one run, from its predictions.

    classification (§5.1): acc_<bin> for the five certainty bins and avg_acc on judged SE images, sd_acc on SD
    validation images. calibration (§5.3): sd_acc, se_acc, and on SE images huj_mse, kl (class 1 = target event
    against mean judgment / 100), ece (top-label, ground-truth labels, `ece_bins` bins) and ece_authors (the
    authors' code's quantity, `authors_calibration_error`, batches shuffled with `seed`).
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
    out["ece_authors"] = authors_calibration_error(
        probs[se], labels[se], n_bins=authors_ece_bins, batch_size=authors_ece_batch, seed=seed
    )
    out["kl"] = bernoulli_kl(probs[judged, 1], human_mean[judged], kl_eps)
    return out
