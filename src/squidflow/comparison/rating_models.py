"""The comparison sets' 1–3 plausibility ratings (Sherlock §4.3) under crowd-kit's annotator models.

The comparison metric scores a model against each of a set's two annotators; its `oracle` baseline scores the
annotators' consensus — the leaderboard takes the mean of the two ratings. Majority vote, Dawid–Skene, GLAD and MACE
(`squidflow.judgments.crowd.fit`, calling crowd-kit) give other consensus labels; this table says how the oracle
changes with each, and how often each model's label equals the rounded mean.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl

from squidflow.comparison.metrics_sherlock.comparison import pairwise_accuracy
from squidflow.judgments.crowd import MODELS, fit
from squidflow.presentation.table_format import md_table


def plausibility_answers(ratings: pl.DataFrame) -> pd.DataFrame:
    """Comparison ratings (query_id, candidate_id, annot1, annot2) -> crowd-kit's answers (task, worker, label);
    the annotators are the columns (the Sherlock release, like `comparison.ratings`, names no annotator)."""
    task = (ratings["query_id"] + "|" + ratings["candidate_id"]).to_numpy()
    cols = [c for c in ratings.columns if c.startswith("annot")]
    return pd.concat(
        [pd.DataFrame({"task": task, "worker": c, "label": ratings[c].cast(pl.Utf8).to_numpy()}) for c in cols],
        ignore_index=True,
    )


def comparison_oracles(
    ratings: pl.DataFrame, *, n_iter: int = 20, seed: int = 0, mace_restarts: int = 2
) -> pl.DataFrame:
    """Per aggregation (`mean` = the leaderboard's, then each crowd-kit model): the comparison oracle × 100 with that
    consensus, the sets, and the skill of each annotator column."""
    answers = plausibility_answers(ratings)
    fits = {m: fit(answers, m, n_iter=n_iter, seed=seed, mace_restarts=mace_restarts) for m in MODELS}
    sets = list(ratings.group_by("query_id", maintain_order=True))
    rows = []
    for name in ("mean", *MODELS):
        accs, same = [], []
        for _, part in sets:
            a1, a2 = part["annot1"].to_numpy().astype(float), part["annot2"].to_numpy().astype(float)
            if name == "mean":
                consensus = (a1 + a2) / 2
            else:
                keys = (part["query_id"] + "|" + part["candidate_id"]).to_list()
                consensus = fits[name]["labels"].reindex(keys).astype(float).to_numpy()
                same.append(np.mean(consensus == np.round((a1 + a2) / 2 + 1e-9)))
            accs.append(np.mean([pairwise_accuracy(consensus, lab) for lab in (a1, a2)]))
        skills = fits[name]["skills"] if name != "mean" else None
        rows.append(
            {
                "aggregation": name,
                "comparison_oracle": float(np.mean(accs) * 100) if accs else None,
                "label_equals_rounded_mean": float(np.mean(same)) if same else (1.0 if name == "mean" else None),
                "annot1_skill": None if skills is None else float(skills.get("annot1", np.nan)),
                "annot2_skill": None if skills is None else float(skills.get("annot2", np.nan)),
                "comparison_sets": len(accs),
            }
        )
    return pl.DataFrame(rows)


def crowd_comparison_markdown(table: pl.DataFrame) -> str:
    """results/tables/crowd_comparison.md from the oracle per aggregation (comparison_oracles)."""

    def f(v, p=3):
        return "–" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:.{p}f}"

    lines = [
        "# Comparison sets: the oracle under crowd-kit's aggregations (Sherlock §4.3)",
        "",
        "The comparison metric's oracle scores each annotator against a consensus of the set's two ratings: "
        "`mean` is the leaderboard's; each crowd-kit row uses that model's label instead.",
        "",
        *md_table(
            ["aggregation", "comparison oracle", "label = rounded mean", "annot1 skill", "annot2 skill", "sets"],
            [
                [
                    r["aggregation"],
                    f(r["comparison_oracle"], 1),
                    f(r["label_equals_rounded_mean"]),
                    f(r["annot1_skill"]),
                    f(r["annot2_skill"]),
                    r["comparison_sets"],
                ]
                for r in table.to_dicts()
            ],
        ),
    ]
    return "\n".join(lines) + "\n"
