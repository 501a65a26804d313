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
import warnings
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
    out: list[dict] = [
        {"metric": "accuracy", "tau": None, "value": qa["accuracy"].mean(), "n": qa.height},
        {"metric": "pearson_r", "tau": None, "value": pearson(rows["probability"], rows["soft_label"]), "n": qa.height},
    ]
    cs = qa["cs_prob"].drop_nulls()
    out.append({"metric": "cs_prob_mean", "tau": None, "value": cs.mean() if len(cs) else None, "n": len(cs)})
    out.append(
        {"metric": "cs_prob_std", "tau": None, "value": float(np.std(cs.to_numpy())) if len(cs) else None, "n": len(cs)}
    )
    for i, tau in enumerate(taus):
        for which in ("rs", "cs"):
            flags = qa[f"wg_{which}_{i}"].drop_nulls()
            out.append(
                {
                    "metric": f"wg_{which}",
                    "tau": float(tau),
                    "value": flags.mean() if len(flags) else None,
                    "n": len(flags),
                }
            )
    return out


def _scored_rows(soft_labels: pl.DataFrame, probabilities: pl.DataFrame) -> pl.DataFrame:
    """(QA pair, candidate) rows with the soft label and the model's probability, for the labelled QA pairs the model
    has a probability for every candidate of, in (game_id, object_id) order."""
    labelled = soft_labels.filter(pl.col("question_type").is_in(LABELLED_TYPES) & pl.col("soft_label").is_not_null())
    rows = labelled.join(
        probabilities.select("game_id", "object_id", "probability"),
        on=["game_id", "object_id"],
        how="inner",
        maintain_order="left",
    )
    complete = (
        rows.group_by("game_id", maintain_order=True)
        .len()
        .join(labelled.group_by("game_id", maintain_order=True).len(), on="game_id", suffix="_all")
    )
    rows = rows.join(
        complete.filter(pl.col("len") == pl.col("len_all")).select("game_id"),
        on="game_id",
        how="semi",
        maintain_order="left",
    )
    return rows.sort("game_id", "object_id")  # joins may reorder rows; sums (Pearson's r) depend on their order


def _groups():
    for qtype in LABELLED_TYPES:
        for answer in ANSWER_GROUPS:
            yield (
                qtype,
                answer,
                (pl.col("question_type") == qtype) & (pl.lit(True) if answer == "all" else pl.col("answer") == answer),
            )


def litmus_metrics(soft_labels: pl.DataFrame, probabilities: pl.DataFrame, taus: Sequence[float]) -> pl.DataFrame:
    """The metrics of one model (one seed) on the QA pairs it has probabilities for (LITMUS_METRICS rows, without
    model and seed)."""
    rows = _scored_rows(soft_labels, probabilities)
    qa = per_qa(rows, taus)
    records = []
    for qtype, answer, keep in _groups():
        group_qa = qa.filter(keep)
        if group_qa.is_empty():
            continue
        group_rows = rows.filter(keep)
        for rec in _group_metrics(group_rows, group_qa, taus):
            records.append({"question_type": qtype, "answer": answer, **rec})
    return pl.DataFrame(
        records,
        schema={
            "question_type": pl.Utf8,
            "answer": pl.Utf8,
            "metric": pl.Utf8,
            "tau": pl.Float64,
            "value": pl.Float64,
            "n": pl.Int64,
        },
    )


def metrics_of_models(
    soft_labels: pl.DataFrame, runs: Sequence[pl.DataFrame], taus: Sequence[float], *, eval_split: str = "test"
) -> pl.DataFrame:
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
        covered = labelled.join(run.select("game_id").unique(maintain_order=True), on="game_id", how="semi")[
            "game_id"
        ].n_unique()
        if covered < n_labelled:
            log.warning(
                "%s (seed %s): probabilities for %d of the %d labelled %s QA pairs; the others are left out",
                model,
                seed,
                covered,
                n_labelled,
                eval_split,
            )
        frames.append(
            litmus_metrics(evaluated, run, taus).select(
                pl.lit(model).alias("model"), pl.lit(seed, dtype=pl.Int64).alias("seed"), pl.all()
            )
        )
    if not frames:
        return pl.DataFrame(
            schema={
                "model": pl.Utf8,
                "seed": pl.Int64,
                "question_type": pl.Utf8,
                "answer": pl.Utf8,
                "metric": pl.Utf8,
                "tau": pl.Float64,
                "value": pl.Float64,
                "n": pl.Int64,
            }
        )
    return pl.concat(frames)


# --- intervals: a bootstrap over QA pairs of every metric's mean over seeds ---------------------------------------
# Every metric above is a ratio of sums over QA pairs (Pearson's r from each QA pair's sums over its candidates), so a
# resample that draws QA pair q w_q times has the same metric with every sum weighted by w_q. One index matrix over
# the evaluated QA pairs serves every model, seed, group and metric: models and seeds are compared on the same draws,
# and a model's replicate is the mean over its seeds of their replicates (the seeds' spread stays the table's `_sd`).
QA_SUMS = ("acc", "n", "x", "y", "xy", "xx", "yy", "cs_ok", "cs", "cs2")


def qa_sums(rows: pl.DataFrame, qa: pl.DataFrame, taus: Sequence[float]) -> pl.DataFrame:
    """Per QA pair (in `qa`'s order): its accuracy, its candidates' sums for Pearson's r (x = probability,
    y = soft label), its complement-set mean (cs, cs², cs_ok = it has one) and each τ's well-grounded flags
    (wg_rs_i / wg_cs_i, with *_ok = the set is not empty)."""
    x, y = pl.col("probability"), pl.col("soft_label")
    sums = rows.group_by("game_id", maintain_order=True).agg(
        pl.len().cast(pl.Float64).alias("n"),
        x.sum().alias("x"),
        y.sum().alias("y"),
        (x * y).sum().alias("xy"),
        (x * x).sum().alias("xx"),
        (y * y).sum().alias("yy"),
    )
    flags = []
    for i in range(len(taus)):
        for which in ("rs", "cs"):
            col = pl.col(f"wg_{which}_{i}")
            flags += [
                col.is_not_null().cast(pl.Float64).alias(f"wg_{which}_{i}_ok"),
                col.fill_null(False).cast(pl.Float64).alias(f"wg_{which}_{i}"),
            ]
    cs = pl.col("cs_prob")
    return qa.join(sums, on="game_id", how="left", maintain_order="left").select(
        "game_id",
        "question_type",
        "answer",
        pl.col("accuracy").alias("acc"),
        "n",
        "x",
        "y",
        "xy",
        "xx",
        "yy",
        cs.is_not_null().cast(pl.Float64).alias("cs_ok"),
        cs.fill_null(0.0).alias("cs"),
        (cs.fill_null(0.0) ** 2).alias("cs2"),
        *flags,
    )


def weighted_metrics(sums: np.ndarray, columns: Sequence[str], weights: np.ndarray, taus: Sequence[float]) -> dict:
    """{(metric, tau): B values} of one group from its QA pairs' sums (QA × columns) and weights (B × QA pairs)."""
    s = dict(zip(columns, (weights @ sums).T, strict=True))  # each B weighted sums over the group's QA pairs
    qa_count = weights.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = s["n"] * s["xy"] - s["x"] * s["y"]
        var = (s["n"] * s["xx"] - s["x"] ** 2) * (s["n"] * s["yy"] - s["y"] ** 2)
        cs_mean = s["cs"] / s["cs_ok"]
        out: dict[tuple[str, float | None], np.ndarray] = {
            ("accuracy", None): s["acc"] / qa_count,
            ("pearson_r", None): np.where(var > 0, cov / np.sqrt(np.where(var > 0, var, 1)), np.nan),
            ("cs_prob_mean", None): cs_mean,
            ("cs_prob_std", None): np.sqrt(np.maximum(s["cs2"] / s["cs_ok"] - cs_mean**2, 0)),
        }
        for i, tau in enumerate(taus):
            for which in ("rs", "cs"):
                out[(f"wg_{which}", float(tau))] = s[f"wg_{which}_{i}"] / s[f"wg_{which}_{i}_ok"]
    return out


def metric_intervals(
    soft_labels: pl.DataFrame, runs: Sequence[pl.DataFrame], taus: Sequence[float], cfg, *, eval_split: str = "test"
) -> pl.DataFrame:
    """LITMUS_METRIC_INTERVALS: per model, group and metric, the mean over the model's seeds (`value`, as the tables
    show it) and its interval over resamples of the `eval_split`'s labelled QA pairs (`cfg`: IntervalConfig)."""
    from squidflow.contracts.schemas import LITMUS_METRIC_INTERVALS
    from squidflow.statistics.intervals import counts, image_resamples, interval_from

    evaluated = soft_labels.filter(pl.col("split") == eval_split)
    labelled = evaluated.filter(pl.col("question_type").is_in(LABELLED_TYPES) & pl.col("soft_label").is_not_null())
    games = np.sort(labelled["game_id"].unique(maintain_order=True).to_numpy())
    drawn = counts(image_resamples(len(games), cfg), len(games))  # B × QA pairs
    ones = np.ones((1, len(games)))
    per_model: dict[str, list[dict]] = {}
    for run in runs:
        if run.is_empty():
            continue
        rows = _scored_rows(evaluated, run)
        qa = per_qa(rows, taus)
        table = qa_sums(rows, qa, taus)
        columns = [c for c in table.columns if c not in ("game_id", "question_type", "answer")]
        reps = {}
        for qtype, answer, keep in _groups():
            group = table.filter(keep)
            if group.is_empty():
                continue
            where = np.searchsorted(games, group["game_id"].to_numpy())
            sums = group.select(columns).to_numpy()
            for key, values in weighted_metrics(sums, columns, drawn[:, where], taus).items():
                point = weighted_metrics(sums, columns, ones[:, where], taus)[key][0]
                reps[(qtype, answer, *key)] = (point, values)
        per_model.setdefault(run["model"][0], []).append(reps)
    records = []
    for model, seeds in per_model.items():
        for key in dict.fromkeys(k for reps in seeds for k in reps):
            have = [reps[key] for reps in seeds if key in reps]
            with warnings.catch_warnings():  # a resample in which no seed has the metric stays NaN
                warnings.simplefilter("ignore", RuntimeWarning)
                point = float(np.nanmean([p for p, _ in have]))
                values = np.nanmean(np.stack([v for _, v in have]), axis=0)
            _, lo, hi = interval_from(point, values, cfg)
            qtype, answer, metric, tau = key
            records.append(
                {
                    "model": model,
                    "question_type": qtype,
                    "answer": answer,
                    "metric": metric,
                    "tau": tau,
                    "value": point,
                    "lo": lo,
                    "hi": hi,
                }
            )
    return pl.DataFrame(records, schema=LITMUS_METRIC_INTERVALS.columns)
