"""crowd-kit's GLAD and MACE, with their bookkeeping done as array operations: the same models and numbers, faster.

crowd-kit 1.4's GLAD (Whitehill et al., 2009) and MACE (Hovy et al., 2013) spend most of their time outside the
models. GLAD's E-step normalises each task's posterior with one Python call per task (`groupby(...).transform(
softmax)`); every step of its M-step's conjugate-gradient search re-aligns the skills and difficulties to the answers
by setting and resetting pandas indexes, and sums every column of the answers frame by task and by worker to take
two gradients. MACE's E-step multiplies each task's answers once per label with a grouped product over every column
of the answers frame. On the triage of a 20-rater panel these were most of `rater_triage`'s time; on a lab's dataset
of thousands of images they are minutes per fit, and the triage fits them once per consensus round.

`GLAD` and `MACE` below are crowd-kit's classes with their private steps (GLAD's `_e_step`, `_update_alphas_betas`,
`_gradient_Q` and `_m_step`'s set-up; MACE's `_e_step`) written with integer codes, grouped max and sum,
`np.multiply.reduceat` and `np.bincount`. The models, their initialisation, priors, restarts, stopping rules and
optimiser are crowd-kit's own (`fit` is not touched), and so is one quirk of MACE's: its strategy counts come back
in the sorted order of workers and labels (a pandas `groupby`), which `_m_step` then reads by order of first
appearance; that is kept, so the numbers stay crowd-kit's. Private methods may change in any release: the touch is
declared in docs/upstream.md (section 10), pyproject.toml bounds crowd-kit at the newest release it was checked on
(`squidflow.runtime.upstream.TESTED`; outside it `crowd_kit_classes` warns once and returns crowd-kit's classes as
they ship), and `tests/unit/judgments/test_crowd_models.py` checks that the fitted parameters and probabilities equal
crowd-kit's own on the same answers.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pandas as pd
import scipy.special
from crowdkit.aggregation import GLAD as CrowdKitGLAD
from crowdkit.aggregation import MACE as CrowdKitMACE


class GLAD(CrowdKitGLAD):
    """crowd-kit's GLAD (same parameters, same attributes after `fit`), computed with array operations."""

    _rows: tuple[np.ndarray, np.ndarray]  # each answer's worker and task, as positions in workers_ and tasks_

    def _e_step(self, data: pd.DataFrame) -> pd.DataFrame:
        """crowd-kit's E-step; the per-task softmax is exp(x - logsumexp(x)) with grouped max and sum."""
        alpha_beta = data["alpha"] * np.exp(data["beta"])
        log_sigma = -self._softplus(-alpha_beta)
        log_one_minus_sigma = -self._softplus(alpha_beta)
        data["posterior"] = data["delta"] * log_sigma + (1 - data["delta"]) * (
            log_one_minus_sigma - np.log(len(self.prior_labels_) - 1)
        )
        probas = data.groupby(["task", "variable"])["posterior"].sum()
        probas = probas.add(np.log(cast("pd.Series[Any]", self.priors_)), level=1)
        top = probas.groupby(level="task").transform("max")
        total = pd.Series(np.exp((probas - top).to_numpy()), index=probas.index).groupby(level="task").transform("sum")
        logsumexp = top + np.log(total.to_numpy())
        probas = pd.Series(np.exp((probas - logsumexp).to_numpy()), index=probas.index, name="posterior")
        data = pd.merge(data.drop("posterior", axis=1), probas, on=["task", "variable"])
        self.probas_ = probas.unstack()
        return data

    def _m_step(self, data: pd.DataFrame) -> pd.DataFrame:
        """crowd-kit's M-step, once each answer's worker and task are known as positions (the rows keep their order
        through the search)."""
        self._rows = (
            pd.Index(self.workers_).get_indexer(pd.Index(data["worker"])),
            pd.Index(self.tasks_).get_indexer(pd.Index(data["task"])),
        )
        return super()._m_step(data)

    def _update_alphas_betas(self, alphas: pd.Series[Any], betas: pd.Series[Any]) -> None:
        """The skills and difficulties onto the answers by position (crowd-kit re-indexes the frame twice)."""
        self.alphas_, self.betas_ = alphas, betas
        workers, tasks = self._rows
        self._current_data["alpha"] = alphas.to_numpy()[workers]
        self._current_data["beta"] = betas.to_numpy()[tasks]

    def _gradient_Q(self, data: pd.DataFrame) -> tuple[pd.Series[Any], pd.Series[Any]]:
        """crowd-kit's gradient of Q, summed by position with `np.bincount`."""
        workers, tasks = self._rows
        scale = np.exp(data["beta"].to_numpy())  # the beta -> exp(beta) reparameterisation
        alpha = data["alpha"].to_numpy()
        common = data["posterior"].to_numpy() * (data["delta"].to_numpy() - scipy.special.expit(alpha * scale)) * scale
        d_beta = pd.Series(np.bincount(tasks, weights=common * alpha, minlength=len(self.tasks_)), index=self.tasks_)
        d_beta -= self.betas_ - self.betas_priors_mean_
        d_alpha = pd.Series(np.bincount(workers, weights=common, minlength=len(self.workers_)), index=self.workers_)
        d_alpha -= self.alphas_ - self.alphas_priors_mean_
        return d_alpha, d_beta


class MACE(CrowdKitMACE):
    """crowd-kit's MACE (same parameters, same attributes after `fit`), its E-step computed with array operations."""

    def _e_step(
        self,
        annotation: pd.DataFrame,
        task_names: Any,
        worker_names: Any,
        label_names: Any,
        tasks: np.ndarray,
        workers: np.ndarray,
        labels: np.ndarray,
    ) -> tuple[float, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        """crowd-kit's E-step: the gold-label marginals as one product per task (`np.multiply.reduceat` over the
        answers sorted by task, in their order), the expected counts as sums by position (`np.bincount`)."""
        n_labels = len(label_names)
        spamming = self.spamming_[workers, 0] * self.thetas_[workers, labels]  # P(this answer | spamming)
        knowing = self.spamming_[workers, 1]
        per_label = spamming[:, None] + knowing[:, None] * (np.arange(n_labels)[None, :] == labels[:, None])
        order = np.argsort(tasks, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(tasks[order]) != 0])
        gold = np.multiply.reduceat(per_label[order], starts, axis=0) / n_labels  # rows: task codes 0, 1, ...
        instance = gold.sum(axis=1)
        # 0/0 where every label's product underflowed (hundreds of answers per task): NaN, which crowd-kit's grouped
        # sums skip (pandas' skipna), so its counts, and these, take them as 0
        strategy = _skip_nan((gold[tasks] / per_label).sum(axis=1) * spamming / instance[tasks])
        counts = np.zeros((len(worker_names), n_labels))
        np.add.at(counts, (workers, labels), strategy)
        by_worker, by_label = pd.Index(worker_names).argsort(), pd.Index(label_names).argsort()  # crowd-kit's order
        strategy_counts = pd.DataFrame(
            counts[by_worker][:, by_label],
            index=pd.Index(worker_names)[by_worker],
            columns=pd.Index(label_names)[by_label],
        )
        knows = _skip_nan(gold[tasks, labels] * knowing / (spamming + knowing) / instance[tasks])
        knowing_counts = pd.DataFrame(
            {
                "knowing_expected_count_0": np.bincount(workers, weights=strategy, minlength=len(worker_names)),
                "knowing_expected_count_1": np.bincount(workers, weights=knows, minlength=len(worker_names)),
            },
            index=worker_names,
        )
        gold_marginals = pd.DataFrame(gold, index=task_names, columns=label_names)
        return float(np.log(instance + 1e-8).sum()), gold_marginals, strategy_counts, knowing_counts


def _skip_nan(values: np.ndarray) -> np.ndarray:
    """NaN as 0 in a sum, as a pandas grouped sum skips it."""
    return np.where(np.isnan(values), 0.0, values)


def crowd_kit_classes() -> tuple[type[CrowdKitGLAD], type[CrowdKitMACE]]:
    """(GLAD, MACE): this module's on the crowd-kit releases they were checked on; crowd-kit's own, with one warning,
    outside them."""
    from squidflow.runtime.upstream import within_tested

    if within_tested("crowd-kit", "GLAD's and MACE's bookkeeping as array operations"):
        return GLAD, MACE
    return CrowdKitGLAD, CrowdKitMACE
