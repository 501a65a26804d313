"""The litmus test's tables: first-turn counts and rule accuracy (§3.2, App. A), the human sample check (§5.1),
correlation and accuracy (Table 2) and well-grounded QA pairs (Table 3).

Trained guessers are seed-replicated: each cell is the mean over seeds and `_sd` the sample standard deviation over
seeds (ddof 1; empty with one seed). Shares are fractions in the CSV files and percentages in the Markdown.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import polars as pl

from squidflow.litmus.questions import QUESTION_TYPES
from squidflow.litmus.soft_labels import rules_accuracy, rules_hits
from squidflow.presentation.table_format import md_row, md_rule

SEED_STD = pl.col("value").std(ddof=1)


def question_counts(games: pl.DataFrame, soft_labels: pl.DataFrame, intervals=None) -> pl.DataFrame:
    """Per split: games, games without a turn, first answers N/A (left out), and first turns per question type and
    answer; `*_unlabelled` counts the category/spatial QA pairs no reference set could be built for.

    With `intervals` (squidflow.statistics.intervals.IntervalConfig) each count but `games` has `<count>_lo` / `<count>_hi`: the
    count that a split of as many games would show, a bootstrap interval over the split's games (each game counts
    once, so its count is a share of the games: count_interval)."""
    per_game = soft_labels.group_by("game_id", maintain_order=True).agg(
        pl.col("split").first(),
        pl.col("question_type").first(),
        pl.col("answer").first(),
        pl.col("soft_label").is_null().all().alias("unlabelled"),
    )
    rows = []
    for split in sorted(games["split"].unique().to_list()):
        g = games.filter(pl.col("split") == split)
        s = per_game.filter(pl.col("split") == split)
        row = {
            "split": split,
            "games": g.height,
            "no_turn": int((g["n_turns"] == 0).sum()),
            "first_answer_na": int((g["answer"] == "n/a").sum()),
        }
        for qtype in QUESTION_TYPES:
            for answer in ("yes", "no"):
                row[f"{qtype}_{answer}"] = s.filter(
                    (pl.col("question_type") == qtype) & (pl.col("answer") == answer)
                ).height
        for qtype in ("category", "spatial"):
            row[f"{qtype}_unlabelled"] = s.filter((pl.col("question_type") == qtype) & pl.col("unlabelled")).height
        rows.append(row)
    table = pl.DataFrame(rows)
    return table if intervals is None or table.is_empty() else count_intervals(table, intervals)


def count_intervals(table: pl.DataFrame, cfg) -> pl.DataFrame:
    """`<c>_lo` / `<c>_hi` after every count column c of `table` (one row per split, `games` its size): resamples of
    the split's games with replacement (squidflow.statistics.intervals.image_resamples), each game in at most one count of a
    column, so a resample's count is how many of the drawn games fall in it."""
    from squidflow.statistics.intervals import counts, image_resamples, interval_from

    columns = [c for c in table.columns if c not in ("split", "games")]
    bounds: dict[str, list[float]] = {f"{c}_{e}": [] for c in columns for e in ("lo", "hi")}
    for row in table.iter_rows(named=True):
        n = int(row["games"])
        drawn = counts(image_resamples(n, cfg), n) if n else np.zeros((cfg.resamples, 0))
        for c in columns:
            member = np.zeros(n)
            member[: min(int(row[c]), n)] = 1.0  # which games are in c does not matter to the draw: only how many
            _, lo, hi = interval_from(float(row[c]), drawn @ member, cfg)
            bounds[f"{c}_lo"].append(lo)
            bounds[f"{c}_hi"].append(hi)
    out = table.with_columns(*[pl.Series(k, v, dtype=pl.Float64) for k, v in bounds.items()])
    return out.select("split", "games", *[x for c in columns for x in (c, f"{c}_lo", f"{c}_hi")])


def rules_table(soft_labels: pl.DataFrame, intervals=None) -> pl.DataFrame:
    """Wide: per split, spatial QA pairs and the share whose target each rule (and union of rules) puts in the
    reference set; with `intervals` (squidflow.statistics.intervals.IntervalConfig) each share has `<rules>_lo` / `<rules>_hi`,
    its bootstrap interval over the split's spatial QA pairs (one index matrix, stratified by split)."""
    long = rules_accuracy(soft_labels)
    if long.is_empty():
        return pl.DataFrame(schema={"split": pl.Utf8, "n_spatial": pl.UInt32})
    if intervals is not None:
        long = long.join(
            rules_intervals(soft_labels, intervals), on=["split", "rules"], how="left", maintain_order="left"
        )
    values = ["target_accuracy", "lo", "hi"] if intervals is not None else ["target_accuracy"]
    wide = long.pivot(on="rules", index=["split", "n_spatial"], values=values, maintain_order=True)
    if intervals is None:
        return wide
    names = long["rules"].unique(maintain_order=True).to_list()
    return wide.select(
        "split",
        "n_spatial",
        *[pl.col(f"{v}_{r}").alias(r + ("" if v == "target_accuracy" else f"_{v}")) for r in names for v in values],
    )


def rules_intervals(soft_labels: pl.DataFrame, cfg) -> pl.DataFrame:
    """split, rules, lo, hi: the interval of each rule's accuracy on the target over resamples of the spatial QA pairs
    within their split."""
    from squidflow.statistics.intervals import counts, image_resamples, interval_from

    target = soft_labels.filter((pl.col("question_type") == "spatial") & pl.col("is_target")).sort("game_id")
    hits = rules_hits(target)
    split = target["split"].to_numpy()
    drawn = counts(image_resamples(len(target), cfg, strata=split), len(target))
    rows = []
    for name, hit in hits.items():
        labelled = np.isfinite(hit)
        for value in sorted(set(split)):
            member = ((split == value) & labelled).astype(float)
            w = drawn * member
            with np.errstate(invalid="ignore", divide="ignore"):
                reps = (w @ np.nan_to_num(hit)) / w.sum(axis=1)
                point = float(np.nan_to_num(hit) @ member / member.sum())
            _, lo, hi = interval_from(point, reps, cfg)
            rows.append({"split": value, "rules": name, "lo": lo, "hi": hi})
    return pl.DataFrame(rows, schema={"split": pl.Utf8, "rules": pl.Utf8, "lo": pl.Float64, "hi": pl.Float64})


def _seed_summary(metrics: pl.DataFrame, model_order: Sequence[str]) -> pl.DataFrame:
    order = {m: i for i, m in enumerate(model_order)}
    return (
        metrics.group_by("model", "question_type", "answer", "metric", "tau", maintain_order=True)
        .agg(
            pl.col("value").mean().alias("mean"),
            SEED_STD.alias("sd"),
            pl.col("n").max().alias("n"),
            pl.len().alias("n_seeds"),
        )
        .with_columns(
            pl.col("model").replace_strict(order, default=len(order), return_dtype=pl.Int64).alias("_model"),
            pl.col("question_type")
            .replace_strict({"category": 0, "spatial": 1}, default=2, return_dtype=pl.Int64)
            .alias("_type"),
            pl.col("answer")
            .replace_strict({"yes": 0, "no": 1, "all": 2}, default=3, return_dtype=pl.Int64)
            .alias("_answer"),
        )
    )


def with_intervals(
    table: pl.DataFrame, intervals: pl.DataFrame | None, columns: Sequence[str], keys: Sequence[str]
) -> pl.DataFrame:
    """`<c>_lo` / `<c>_hi` for each metric column c from LITMUS_METRIC_INTERVALS rows (metric = c), joined on `keys`;
    each pair placed after c (after `<c>_sd` where the table has one)."""
    if intervals is None:
        return table
    out = table
    for c in columns:
        bounds = intervals.filter(pl.col("metric") == c).select(
            *keys, pl.col("lo").alias(f"{c}_lo"), pl.col("hi").alias(f"{c}_hi")
        )
        out = out.join(bounds, on=list(keys), how="left", nulls_equal=True, maintain_order="left")
    order = []
    for c in table.columns:
        order.append(c)
        anchor = c[:-3] if c.endswith("_sd") else c
        if anchor in columns and (c.endswith("_sd") or f"{c}_sd" not in table.columns):
            order += [f"{anchor}_lo", f"{anchor}_hi"]
    return out.select(order)


def correlation_table(
    metrics: pl.DataFrame, model_order: Sequence[str] = (), intervals: pl.DataFrame | None = None
) -> pl.DataFrame:
    """Table 2: per model, question type and answer — task accuracy, Pearson's r with the soft labels, and the
    complement set's mean probability (± its std over QA pairs); with `intervals` (LITMUS_METRIC_INTERVALS) each of
    them has its bootstrap interval over QA pairs (`_lo`, `_hi`)."""
    s = _seed_summary(metrics.filter(pl.col("tau").is_null()), model_order)
    wide = s.pivot(
        on="metric",
        index=["model", "question_type", "answer", "_model", "_type", "_answer"],
        values=["mean", "sd", "n", "n_seeds"],
        maintain_order=True,
    )
    table = wide.sort("_model", "_type", "_answer").select(
        "model",
        "question_type",
        "answer",
        pl.col("n_accuracy").alias("n_qa"),
        pl.col("n_seeds_accuracy").alias("n_seeds"),
        pl.col("mean_accuracy").alias("accuracy"),
        pl.col("sd_accuracy").alias("accuracy_sd"),
        pl.col("mean_pearson_r").alias("pearson_r"),
        pl.col("sd_pearson_r").alias("pearson_r_sd"),
        pl.col("n_cs_prob_mean").alias("n_cs"),
        pl.col("mean_cs_prob_mean").alias("cs_prob_mean"),
        pl.col("mean_cs_prob_std").alias("cs_prob_std"),
    )
    return with_intervals(
        table, intervals, ["accuracy", "pearson_r", "cs_prob_mean", "cs_prob_std"], ["model", "question_type", "answer"]
    )


def grounding_table(
    metrics: pl.DataFrame, model_order: Sequence[str] = (), intervals: pl.DataFrame | None = None
) -> pl.DataFrame:
    """Table 3: per model, question type, answer and τ — the share of QA pairs well-grounded against the reference
    set (every RS object above τ) and against the complement set (every CS object below τ); with `intervals` each
    share has its bootstrap interval over QA pairs."""
    s = _seed_summary(metrics.filter(pl.col("tau").is_not_null()), model_order)
    wide = s.pivot(
        on="metric",
        index=["model", "question_type", "answer", "tau", "_model", "_type", "_answer"],
        values=["mean", "sd", "n", "n_seeds"],
        maintain_order=True,
    )
    table = wide.sort("_model", "_type", "_answer", "tau").select(
        "model",
        "question_type",
        "answer",
        "tau",
        pl.col("n_seeds_wg_rs").alias("n_seeds"),
        pl.col("n_wg_rs").alias("n_rs"),
        pl.col("mean_wg_rs").alias("wg_rs"),
        pl.col("sd_wg_rs").alias("wg_rs_sd"),
        pl.col("n_wg_cs").alias("n_cs"),
        pl.col("mean_wg_cs").alias("wg_cs"),
        pl.col("sd_wg_cs").alias("wg_cs_sd"),
    )
    return with_intervals(table, intervals, ["wg_rs", "wg_cs"], ["model", "question_type", "answer", "tau"])


def _fmt(value, kind: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if kind == "pct":
        return f"{100 * value:.1f}"
    if kind == "r":
        return f"{value:.3f}"
    if kind == "prob":
        return f"{value:.4f}"
    if kind == "tau":
        return f"{100 * value:g}%"
    if kind == "count":
        return f"{value:.0f}"
    return str(value)


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _pm(mean, sd, kind: str) -> str:
    text = _fmt(mean, kind)
    return text if _missing(sd) or text == "–" else f"{text} ± {_fmt(sd, kind)}"


def _bracketed(text: str, lo, hi, kind: str) -> str:
    """`41.2 ± 1.3 [38.0, 44.1]`: the interval after the value (and its spread over seeds), as format_interval writes
    it; the value alone when there is no interval."""
    return text if text == "–" or _missing(lo) or _missing(hi) else f"{text} [{_fmt(lo, kind)}, {_fmt(hi, kind)}]"


def markdown(table: pl.DataFrame, *, title: str, note: str = "") -> str:
    """A pipe table of one of the tables above, shares in percent, mean ± sd over seeds where there is a sd, and
    [lo, hi] where the table has the column's interval (`_lo`, `_hi`)."""
    columns = [c for c in table.columns if not c.endswith(("_sd", "_lo", "_hi"))]
    kinds = {
        "accuracy": "pct",
        "wg_rs": "pct",
        "wg_cs": "pct",
        "full_agreement": "pct",
        "pearson_r": "r",
        "cs_prob_mean": "prob",
        "cs_prob_std": "prob",
        "tau": "tau",
        "annotators_per_qa": "r",
    }
    kinds.update({c: "pct" for c in table.columns if c.startswith("R") and ("R1" in c or "R2" in c or "R3" in c)})
    kinds.update(
        {
            c: "count"
            for c in columns
            if kinds.get(c) is None and f"{c}_lo" in table.columns and table.schema[c].is_integer()
        }
    )
    header = [("CS prob. std" if c == "cs_prob_std" else c) for c in columns]
    lines = [f"**{title}**", ""]
    if note:
        lines += [note, ""]
    lines += [md_row(header), md_rule(len(columns))]
    for row in table.iter_rows(named=True):
        cells = []
        for c in columns:
            kind = kinds.get(c, "")
            text = _pm(row[c], row.get(f"{c}_sd"), kind) if kind else _fmt(row[c], kind)
            cells.append(_bracketed(text, row.get(f"{c}_lo"), row.get(f"{c}_hi"), kind) if kind else text)
        lines.append(md_row(cells))
    return "\n".join(lines) + "\n"


def dataset_tables(games: pl.DataFrame, soft_labels: pl.DataFrame, intervals=None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The first-turn counts per split and the rules' accuracy on the target (see question_counts, rules_table)."""
    return question_counts(games, soft_labels, intervals), rules_table(soft_labels, intervals)


def litmus_tables(
    metrics: pl.DataFrame, model_order: Sequence[str] = (), intervals: pl.DataFrame | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Tables 2 and 3 of the litmus test from the metrics of every model and seed (and, given, their intervals)."""
    return correlation_table(metrics, model_order, intervals), grounding_table(metrics, model_order, intervals)
