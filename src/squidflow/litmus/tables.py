"""The litmus test's tables: first-turn counts and rule accuracy (§3.2, App. A), the human sample check (§5.1),
correlation and accuracy (Table 2) and well-grounded QA pairs (Table 3).

Trained guessers are seed-replicated: each cell is the mean over seeds and `_sd` the sample standard deviation over
seeds (ddof 1; empty with one seed). Shares are fractions in the CSV files and percentages in the Markdown.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl

from squidflow.io import write_csv, write_text
from squidflow.litmus.questions import QUESTION_TYPES
from squidflow.litmus.soft_labels import rules_accuracy

SEED_STD = pl.col("value").std(ddof=1)


def question_counts(games: pl.DataFrame, soft_labels: pl.DataFrame) -> pl.DataFrame:
    """Per split: games, games without a turn, first answers N/A (left out), and first turns per question type and
    answer; `*_unlabelled` counts the category/spatial QA pairs no reference set could be built for."""
    per_game = soft_labels.group_by("game_id").agg(
        pl.col("split").first(), pl.col("question_type").first(), pl.col("answer").first(),
        pl.col("soft_label").is_null().all().alias("unlabelled"),
    )
    rows = []
    for split in sorted(games["split"].unique().to_list()):
        g = games.filter(pl.col("split") == split)
        s = per_game.filter(pl.col("split") == split)
        row = {"split": split, "games": g.height, "no_turn": int((g["n_turns"] == 0).sum()),
               "first_answer_na": int((g["answer"] == "n/a").sum())}
        for qtype in QUESTION_TYPES:
            for answer in ("yes", "no"):
                row[f"{qtype}_{answer}"] = s.filter((pl.col("question_type") == qtype) & (pl.col("answer") == answer)).height
        for qtype in ("category", "spatial"):
            row[f"{qtype}_unlabelled"] = s.filter((pl.col("question_type") == qtype) & pl.col("unlabelled")).height
        rows.append(row)
    return pl.DataFrame(rows)


def rules_table(soft_labels: pl.DataFrame) -> pl.DataFrame:
    """Wide: per split, spatial QA pairs and the share whose target each rule (and union of rules) puts in the
    reference set."""
    long = rules_accuracy(soft_labels)
    if long.is_empty():
        return pl.DataFrame(schema={"split": pl.Utf8, "n_spatial": pl.UInt32})
    return long.pivot(on="rules", index=["split", "n_spatial"], values="target_accuracy", maintain_order=True)


def _seed_summary(metrics: pl.DataFrame, model_order: Sequence[str]) -> pl.DataFrame:
    order = {m: i for i, m in enumerate(model_order)}
    return (
        metrics.group_by("model", "question_type", "answer", "metric", "tau", maintain_order=True)
        .agg(pl.col("value").mean().alias("mean"), SEED_STD.alias("sd"), pl.col("n").max().alias("n"),
             pl.len().alias("n_seeds"))
        .with_columns(
            pl.col("model").replace_strict(order, default=len(order), return_dtype=pl.Int64).alias("_model"),
            pl.col("question_type").replace_strict({"category": 0, "spatial": 1}, default=2, return_dtype=pl.Int64)
            .alias("_type"),
            pl.col("answer").replace_strict({"yes": 0, "no": 1, "all": 2}, default=3, return_dtype=pl.Int64)
            .alias("_answer"),
        )
    )


def correlation_table(metrics: pl.DataFrame, model_order: Sequence[str] = ()) -> pl.DataFrame:
    """Table 2: per model, question type and answer — task accuracy, Pearson's r with the soft labels, and the
    complement set's mean probability (± its std over QA pairs)."""
    s = _seed_summary(metrics.filter(pl.col("tau").is_null()), model_order)
    wide = s.pivot(on="metric", index=["model", "question_type", "answer", "_model", "_type", "_answer"],
                   values=["mean", "sd", "n", "n_seeds"], maintain_order=True)
    return wide.sort("_model", "_type", "_answer").select(
        "model", "question_type", "answer",
        pl.col("n_accuracy").alias("n_qa"), pl.col("n_seeds_accuracy").alias("n_seeds"),
        pl.col("mean_accuracy").alias("accuracy"), pl.col("sd_accuracy").alias("accuracy_sd"),
        pl.col("mean_pearson_r").alias("pearson_r"), pl.col("sd_pearson_r").alias("pearson_r_sd"),
        pl.col("n_cs_prob_mean").alias("n_cs"),
        pl.col("mean_cs_prob_mean").alias("cs_prob_mean"), pl.col("mean_cs_prob_std").alias("cs_prob_std"),
    )


def grounding_table(metrics: pl.DataFrame, model_order: Sequence[str] = ()) -> pl.DataFrame:
    """Table 3: per model, question type, answer and τ — the share of QA pairs well-grounded against the reference
    set (every RS object above τ) and against the complement set (every CS object below τ)."""
    s = _seed_summary(metrics.filter(pl.col("tau").is_not_null()), model_order)
    wide = s.pivot(on="metric", index=["model", "question_type", "answer", "tau", "_model", "_type", "_answer"],
                   values=["mean", "sd", "n", "n_seeds"], maintain_order=True)
    return wide.sort("_model", "_type", "_answer", "tau").select(
        "model", "question_type", "answer", "tau", pl.col("n_seeds_wg_rs").alias("n_seeds"),
        pl.col("n_wg_rs").alias("n_rs"), pl.col("mean_wg_rs").alias("wg_rs"), pl.col("sd_wg_rs").alias("wg_rs_sd"),
        pl.col("n_wg_cs").alias("n_cs"), pl.col("mean_wg_cs").alias("wg_cs"), pl.col("sd_wg_cs").alias("wg_cs_sd"),
    )


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
    return str(value)


def _pm(mean, sd, kind: str) -> str:
    text = _fmt(mean, kind)
    return text if sd is None or text == "–" or (isinstance(sd, float) and math.isnan(sd)) else f"{text} ± {_fmt(sd, kind)}"


def markdown(table: pl.DataFrame, *, title: str, note: str = "") -> str:
    """A pipe table of one of the tables above, shares in percent, mean ± sd over seeds where there is a sd."""
    columns = [c for c in table.columns if not c.endswith("_sd")]
    kinds = {"accuracy": "pct", "wg_rs": "pct", "wg_cs": "pct", "full_agreement": "pct", "pearson_r": "r",
             "cs_prob_mean": "prob", "cs_prob_std": "prob", "tau": "tau", "annotators_per_qa": "r"}
    kinds.update({c: "pct" for c in table.columns if c.startswith("R") and ("R1" in c or "R2" in c or "R3" in c)})
    header = [("CS prob. std" if c == "cs_prob_std" else c) for c in columns]
    lines = [f"**{title}**", ""]
    if note:
        lines += [note, ""]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(columns)]
    for row in table.iter_rows(named=True):
        cells = []
        for c in columns:
            kind = kinds.get(c, "")
            cells.append(_pm(row[c], row.get(f"{c}_sd"), kind) if kind else _fmt(row[c], kind))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def dataset_tables(games: pl.DataFrame, soft_labels: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The first-turn counts per split and the rules' accuracy on the target (see question_counts, rules_table)."""
    return question_counts(games, soft_labels), rules_table(soft_labels)


def litmus_tables(metrics: pl.DataFrame, model_order: Sequence[str] = ()) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Tables 2 and 3 of the litmus test from the metrics of every model and seed."""
    return correlation_table(metrics, model_order), grounding_table(metrics, model_order)


def write_table(table: pl.DataFrame, csv_path, md_path, *, title: str, note: str = "") -> None:
    """The table as CSV (fractions, every column) and Markdown (percentages, mean ± sd), each written atomically."""
    write_csv(table, csv_path)
    write_text(md_path, markdown(table, title=title, note=note))
