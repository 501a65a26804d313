"""The litmus metrics (litmus test §4.2): does a guesser's distribution over the candidates mirror the soft labels?

Per model, question type (category, spatial) and answer (yes, no, and both together):

- task accuracy: the target has the highest probability (a tie for the highest counts 1/k, the chance that breaking
  the tie at random picks the target);
- Pearson's r between the model's probabilities and the rule soft labels, over every (QA pair, candidate) together;
- well-grounded against the reference set at τ: every object of the reference set gets a probability *above* τ;
  well-grounded against the complement set at τ: every object of the complement set gets one *below* τ (both strict,
  as in the paper: a probability equal to τ grounds neither); a QA pair whose set is empty is not counted for that
  set (`n` says how many are);
- the complement set's probability: per QA pair the mean probability of its complement-set objects, then the mean and
  the standard deviation (population, ddof 0) of those over the QA pairs.

Reference-set membership is the category's set, or for spatial questions "in the reference set of at least one rule".
Only QA pairs with a soft label count. Pearson's r is a general statistic but the project has no shared one yet, so
it lives here.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import polars as pl

LABELLED_TYPES = ("category", "spatial")
ANSWER_GROUPS = ("yes", "no", "all")


def pearson(x, y) -> float:
    """Pearson's correlation coefficient; NaN when there are fewer than two points or either side is constant."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2:
        return float("nan")
    dx, dy = x - x.mean(), y - y.mean()
    denom = np.sqrt((dx * dx).sum() * (dy * dy).sum())
    return float((dx * dy).sum() / denom) if denom > 0 else float("nan")


def per_qa(rows: pl.DataFrame, taus: Sequence[float]) -> pl.DataFrame:
    """One row per QA pair: accuracy, well-grounded flags per τ (null when the set is empty), complement-set mean.

    `rows`: one row per (game, candidate) with game_id, question_type, answer, is_target, in_reference_set,
    soft_label, probability.
    """
    p = pl.col("probability")
    rs, cs = pl.col("in_reference_set"), ~pl.col("in_reference_set")
    top = p.max().over("game_id")
    at_top = (p >= top).cast(pl.Float64)
    wg = []
    for i, tau in enumerate(taus):
        wg.append(pl.when(rs.any()).then((p.filter(rs) > tau).all()).alias(f"wg_rs_{i}"))
        wg.append(pl.when(cs.any()).then((p.filter(cs) < tau).all()).alias(f"wg_cs_{i}"))
    return (
        rows.with_columns(at_top.alias("_at_top"))
        .group_by("game_id", maintain_order=True)
        .agg(
            pl.col("question_type").first(),
            pl.col("answer").first(),
            (pl.col("_at_top").filter(pl.col("is_target")).sum() / pl.col("_at_top").sum()).alias("accuracy"),
            pl.when(cs.any()).then(p.filter(cs).mean()).alias("cs_prob"),
            *wg,
        )
    )


def _group_metrics(rows: pl.DataFrame, qa: pl.DataFrame, taus: Sequence[float]) -> list[dict]:
    out = [
        {"metric": "accuracy", "tau": None, "value": qa["accuracy"].mean(), "n": qa.height},
        {"metric": "pearson_r", "tau": None, "value": pearson(rows["probability"], rows["soft_label"]), "n": qa.height},
    ]
    cs = qa["cs_prob"].drop_nulls()
    out.append({"metric": "cs_prob_mean", "tau": None, "value": cs.mean() if len(cs) else None, "n": len(cs)})
    out.append({"metric": "cs_prob_std", "tau": None, "value": float(np.std(cs.to_numpy())) if len(cs) else None,
                "n": len(cs)})
    for i, tau in enumerate(taus):
        for which in ("rs", "cs"):
            flags = qa[f"wg_{which}_{i}"].drop_nulls()
            out.append({"metric": f"wg_{which}", "tau": float(tau), "value": flags.mean() if len(flags) else None,
                        "n": len(flags)})
    return out


def litmus_metrics(soft_labels: pl.DataFrame, probabilities: pl.DataFrame, taus: Sequence[float]) -> pl.DataFrame:
    """The metrics of one model (one seed) on the QA pairs it has probabilities for (LITMUS_METRICS rows, without
    model and seed)."""
    labelled = soft_labels.filter(pl.col("question_type").is_in(LABELLED_TYPES) & pl.col("soft_label").is_not_null())
    rows = labelled.join(probabilities.select("game_id", "object_id", "probability"), on=["game_id", "object_id"],
                         how="inner")
    complete = rows.group_by("game_id").len().join(labelled.group_by("game_id").len(), on="game_id", suffix="_all")
    rows = rows.join(complete.filter(pl.col("len") == pl.col("len_all")).select("game_id"), on="game_id", how="semi")
    rows = rows.sort("game_id", "object_id")  # joins may reorder rows; sums (Pearson's r) depend on their order
    qa = per_qa(rows, taus)
    records = []
    for qtype in LABELLED_TYPES:
        for answer in ANSWER_GROUPS:
            keep = (pl.col("question_type") == qtype) & (pl.lit(True) if answer == "all" else pl.col("answer") == answer)
            group_qa = qa.filter(keep)
            if group_qa.is_empty():
                continue
            group_rows = rows.filter(keep)
            for rec in _group_metrics(group_rows, group_qa, taus):
                records.append({"question_type": qtype, "answer": answer, **rec})
    return pl.DataFrame(
        records,
        schema={"question_type": pl.Utf8, "answer": pl.Utf8, "metric": pl.Utf8, "tau": pl.Float64,
                "value": pl.Float64, "n": pl.Int64},
    )


def metrics_of_models(soft_labels: pl.DataFrame, runs: Sequence[pl.DataFrame], taus: Sequence[float], *,
                      eval_split: str = "test") -> pl.DataFrame:
    """LITMUS_METRICS for every run (one LITMUS_PROBABILITIES frame per model and seed) on the `eval_split` first
    turns, so that every model is measured on the same QA pairs where it has probabilities for them."""
    log = logging.getLogger(__name__)
    evaluated = soft_labels.filter(pl.col("split") == eval_split)
    labelled = evaluated.filter(pl.col("question_type").is_in(LABELLED_TYPES) & pl.col("soft_label").is_not_null())
    n_labelled = labelled["game_id"].n_unique()
    frames = []
    for run in runs:
        if run.is_empty():
            continue
        model, seed = run["model"][0], run["seed"][0]
        covered = labelled.join(run.select("game_id").unique(), on="game_id", how="semi")["game_id"].n_unique()
        if covered < n_labelled:
            log.warning("%s (seed %s): probabilities for %d of the %d labelled %s QA pairs; the others are left out",
                        model, seed, covered, n_labelled, eval_split)
        frames.append(
            litmus_metrics(evaluated, run, taus).select(
                pl.lit(model).alias("model"), pl.lit(seed, dtype=pl.Int64).alias("seed"), pl.all()
            )
        )
    if not frames:
        return pl.DataFrame(schema={"model": pl.Utf8, "seed": pl.Int64, "question_type": pl.Utf8, "answer": pl.Utf8,
                                    "metric": pl.Utf8, "tau": pl.Float64, "value": pl.Float64, "n": pl.Int64})
    return pl.concat(frames)
