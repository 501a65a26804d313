"""squidflow's GLAD and MACE (`squidflow.judgments.crowd_models`) are crowd-kit's: the same parameters and probabilities
on the same answers. These are the tests docs/upstream.md names for the override of crowd-kit's private steps."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from crowdkit.aggregation import GLAD as CrowdKitGLAD
from crowdkit.aggregation import MACE as CrowdKitMACE

from squidflow.judgments.crowd_models import GLAD, MACE, crowd_kit_classes


def _answers(seed: int, tasks: int, workers: int, per_task: int, labels: int, careless: int) -> pd.DataFrame:
    """Answers in `labels` categories: honest workers right 60% of the time, `careless` ones always answer 0."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(tasks):
        truth = int(rng.integers(labels))
        for w in rng.choice(workers, per_task, replace=False):
            careless_worker = (w * 7) % workers < careless
            right = not careless_worker and rng.random() < 0.6
            label = truth if right else (0 if careless_worker else int(rng.integers(labels)))
            rows.append((f"task {t}", f"worker {(w * 7) % workers:02d}", label))  # not in sorted order
    return pd.DataFrame(rows, columns=["task", "worker", "label"]).sample(frac=1, random_state=seed)


@pytest.mark.parametrize(
    ("seed", "tasks", "workers", "per_task", "labels", "careless", "n_iter"),
    [(0, 40, 8, 4, 5, 2, 20), (1, 24, 6, 3, 3, 0, 100), (2, 40, 12, 5, 2, 3, 7)],
)
def test_the_same_numbers_as_crowd_kits_glad(seed, tasks, workers, per_task, labels, careless, n_iter):
    """Equal within the conjugate-gradient search's rounding (its tolerance is crowd-kit's, 1e-2): 1e-6 relative."""
    answers = _answers(seed, tasks, workers, per_task, labels, careless)
    theirs = CrowdKitGLAD(n_iter=n_iter).fit(answers)
    ours = GLAD(n_iter=n_iter).fit(answers)
    assert len(ours.loss_history_) == len(theirs.loss_history_)
    assert ours.loss_history_ == pytest.approx(theirs.loss_history_, rel=1e-6)
    pd.testing.assert_series_equal(ours.alphas_.sort_index(), theirs.alphas_.sort_index(), rtol=1e-6, atol=1e-9)
    pd.testing.assert_series_equal(ours.betas_.sort_index(), theirs.betas_.sort_index(), rtol=1e-6, atol=1e-9)
    pd.testing.assert_frame_equal(ours.probas_.sort_index(), theirs.probas_.sort_index(), rtol=1e-6, atol=1e-9)
    assert (ours.labels_.sort_index() == theirs.labels_.sort_index()).all()
    # the careless workers are the least skilled in both
    assert set(ours.alphas_.nsmallest(careless).index) == set(theirs.alphas_.nsmallest(careless).index)


@pytest.mark.parametrize(
    ("seed", "tasks", "workers", "per_task", "labels", "careless", "restarts"),
    [(0, 300, 12, 5, 5, 2, 2), (1, 100, 8, 3, 3, 0, 1), (2, 300, 30, 6, 2, 5, 3)],
)
def test_the_same_numbers_as_crowd_kits_mace(seed, tasks, workers, per_task, labels, careless, restarts):
    answers = _answers(seed, tasks, workers, per_task, labels, careless)
    theirs = CrowdKitMACE(n_iter=20, n_restarts=restarts, random_state=seed).fit(answers)
    ours = MACE(n_iter=20, n_restarts=restarts, random_state=seed).fit(answers)
    np.testing.assert_allclose(ours.spamming_, theirs.spamming_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.thetas_, theirs.thetas_, rtol=1e-9, atol=1e-12)
    pd.testing.assert_frame_equal(ours.probas_.sort_index(), theirs.probas_.sort_index(), rtol=1e-9, atol=1e-12)
    assert (ours.labels_.sort_index() == theirs.labels_.sort_index()).all()


def test_outside_the_tested_crowd_kit_releases_the_models_are_crowd_kits_own_with_one_warning(monkeypatch):
    from squidflow.runtime import upstream

    assert crowd_kit_classes() == (GLAD, MACE)  # the installed crowd-kit is the one pyproject.toml bounds
    monkeypatch.setattr(upstream, "_warned", set())
    monkeypatch.setattr(upstream, "installed_version", lambda dist: "1.5.0" if dist == "crowd-kit" else None)
    said: list[str] = []
    monkeypatch.setattr(upstream.log, "warning", said.append)
    assert crowd_kit_classes() == (CrowdKitGLAD, CrowdKitMACE) == crowd_kit_classes()
    assert len(said) == 1 and "crowd-kit 1.5.0 is outside" in said[0] and "1.4.2" in said[0]


def test_on_hundreds_of_answers_per_task_mace_fails_as_crowd_kits_does():
    """Every label's product underflows: crowd-kit skips the NaN in its sums and fails at the end with pandas' words;
    so does this MACE (squidflow.judgments.crowd.fit_or_skip then leaves MACE out, naming them)."""
    rng = np.random.default_rng(0)
    answers = pd.DataFrame({"task": np.repeat(["t1", "t2"], 400), "worker": np.tile([f"w{i}" for i in range(400)], 2),
                            "label": rng.integers(0, 5, 800).astype(str)})  # fmt: skip
    for model in (CrowdKitMACE, MACE):
        with pytest.raises(ValueError, match="Encountered all NA values"):
            model(n_iter=5, n_restarts=1, random_state=0).fit(answers)
