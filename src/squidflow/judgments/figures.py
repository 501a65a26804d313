"""Figures of the human judgments (SQUID-E §4), in the shared style of squidflow.presentation.style.

- `fig3_judgments`: Figure 3 (SQUID-E §4.1), histograms of each image's mean judgment and of its standard deviation,
  per variant.
- `annotator_figure`: who is lenient and who is careless (SQUID-E §3.2 screens annotators; supplement C): (a) each
  annotator's ratings, (b) each annotator's mean signed difference from the other annotators of the same items
  (leniency) against the mean absolute difference (carelessness), the annotators the quality checks excluded marked.
- `agreement_figure`: Table 7 (SQUID-E supplement, inter-annotator agreement) as a chart, beside the paper's values.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np
import polars as pl

from squidflow.judgments.pseudonyms import pseudonyms
from squidflow.presentation import style

if TYPE_CHECKING:
    from matplotlib.axes import Axes

ITEM = ["video_id", "frame_index", "event_prompt", "variant", "hit"]


def fig3_judgments(scores: pl.DataFrame, path: str | Path, *, title: str = "") -> int:
    """2 × 2 grid: rows = variants A and B, columns = per-image mean (0-100) and standard deviation."""
    fig, axes = style.figure(2, 2, height=5.2, sharex="col")
    for row, variant in enumerate(("A", "B")):
        s = scores.filter(pl.col("variant") == variant)
        share = cast(float, s["high_certainty"].mean()) if len(s) else float("nan")
        for col, (column, label, rng) in enumerate(
            (("people_mean", "mean judgment", (0, 100)), ("people_std", "standard deviation", (0, 50)))
        ):
            ax = axes[row, col]
            values = s[column].drop_nulls().to_numpy()
            ax.hist(
                values,
                bins=20,
                range=rng,
                color=style.VARIANT_COLOURS[variant],
                hatch=style.HATCHES[row],
                edgecolor="white",
            )
            ax.set_ylabel(f"variant {variant}: images")
            if row == 1:
                ax.set_xlabel(label)
            if col == 0:
                ax.set_title(f"Variant {variant}: {len(s)} images, {share:.0%} high certainty (mean ≥ 95)")
    if title:
        fig.suptitle(title)
    return style.save(
        fig,
        path,
        title=title or "Figure 3: per-image mean and standard deviation of the judgments",
        description=f"{scores.height} image scores",
    )


def annotator_stats(judgments: pl.DataFrame, report: pl.DataFrame | None = None) -> pl.DataFrame:
    """Per annotator: judgments, median rating, leniency and carelessness, excluded and flags.

    Leniency is the mean of (rating − the mean rating of the *other* annotators of the same item), carelessness the
    mean of its absolute value, over first-round items with at least one other rating. An annotator who clicks at
    random has a large carelessness whatever their leniency; one who always answers high has a large leniency."""
    j = judgments.filter(pl.col("round") == 1) if "round" in judgments.columns else judgments
    keys = [k for k in ITEM if k in j.columns]
    j = (
        j.with_columns(pl.col("rating").sum().over(keys).alias("_sum"), pl.col("rating").count().over(keys).alias("_n"))
        .with_columns(
            pl.when(pl.col("_n") > 1).then((pl.col("_sum") - pl.col("rating")) / (pl.col("_n") - 1)).alias("_others")
        )
        .with_columns((pl.col("rating") - pl.col("_others")).alias("_diff"))
    )
    stats = j.group_by("annotator", maintain_order=True).agg(
        pl.len().alias("n_judgments"),
        pl.col("rating").median().cast(pl.Float64).alias("median"),
        pl.col("_diff").mean().alias("leniency"),
        pl.col("_diff").abs().mean().alias("carelessness"),
        pl.col("variant").unique().sort().str.join("+").alias("variants"),
    )
    if report is not None and not report.is_empty():
        stats = stats.join(
            report.select("annotator", "excluded", "flags"), on="annotator", how="left", maintain_order="left"
        )
    else:
        stats = stats.with_columns(pl.lit(False).alias("excluded"), pl.lit([], dtype=pl.List(pl.Utf8)).alias("flags"))
    return stats.with_columns(pl.col("excluded").fill_null(False)).sort(["median", "annotator"])


def _ratings_panel(ax: Axes, j: pl.DataFrame, names: list[str], stats: pl.DataFrame, excluded: set[str]) -> None:
    """Panel a: one box of first-round ratings per shown annotator, by median; the excluded hatched in vermillion."""
    if names:
        parts = ax.boxplot(
            [j.filter(pl.col("annotator") == a)["rating"].to_numpy() for a in names],
            orientation="horizontal",
            patch_artist=True,
            widths=0.6,
            flierprops={"markersize": 2, "markeredgecolor": style.GREY},
        )
        for patch, name in zip(parts["boxes"], names, strict=True):
            patch.set_facecolor(style.VERMILLION if name in excluded else style.SKY_BLUE)
            patch.set_hatch("xx" if name in excluded else "")
        ax.set_yticks(range(1, len(names) + 1), names, fontsize=max(4, style.FONT_SIZE - 1 - len(names) // 20))
    ax.set_xlim(-2, 102)
    ax.set_xlabel("rating (0-100)")
    more = f", the {len(names)} with most judgments of {stats.height}" if stats.height > len(names) else ""
    ax.set_title(f"ratings per annotator (by median{more})")
    ax.grid(axis="y", visible=False)


def _leniency_panel(ax: Axes, stats: pl.DataFrame) -> None:
    """Panel b: leniency against carelessness per annotator, sized by judgments; the extremes and the excluded named."""
    keep = stats.filter(pl.col("leniency").is_not_null())
    for is_excluded, colour, marker, label in (
        (False, style.BLUE, "o", "kept"),
        (True, style.VERMILLION, "X", "excluded by the quality checks"),
    ):
        part = keep.filter(pl.col("excluded") == is_excluded)
        if part.height:
            sizes = 10 + 60 * np.sqrt(part["n_judgments"].to_numpy() / max(cast(int, keep["n_judgments"].max()), 1))
            ax.scatter(
                part["leniency"],
                part["carelessness"],
                s=sizes,
                color=colour,
                marker=marker,
                alpha=0.8,
                label=f"{label} ({part.height})",
                edgecolors="white",
                linewidths=0.5,
            )
    if keep.height:
        extreme = set(keep.sort("carelessness", descending=True).head(3)["annotator"].to_list())
        extreme |= set(keep.sort("leniency").head(2)["annotator"].to_list())
        extreme |= set(keep.sort("leniency", descending=True).head(2)["annotator"].to_list())
        for row in keep.iter_rows(named=True):
            if row["annotator"] in extreme or row["excluded"] or keep.height <= 12:
                ax.annotate(
                    row["annotator"],
                    (row["leniency"], row["carelessness"]),
                    xytext=(3, 3),
                    textcoords="offset points",
                    fontsize=style.FONT_SIZE - 2,
                )
        ax.legend(loc="upper left")
    else:
        ax.text(0.5, 0.5, "no item rated by two annotators", ha="center", va="center", transform=ax.transAxes)
    ax.axvline(0, color=style.GREY, linewidth=1, linestyle="--")
    ax.set_xlabel("leniency: mean (rating − others' mean)")
    ax.set_ylabel("carelessness: mean |rating − others' mean|")
    ax.set_ylim(bottom=0)
    ax.set_title("who is lenient, who is careless")


def annotator_figure(
    judgments: pl.DataFrame, report: pl.DataFrame | None, path: str | Path, *, max_annotators: int = 40, note: str = ""
) -> pl.DataFrame:
    """Write the two-panel annotator figure to `path`; returns the per-annotator statistics it plots. Raters are
    named by pseudonym (squidflow.judgments.pseudonyms: the figure is in the report)."""
    pseudonym = pseudonyms(judgments["annotator"].to_list())
    judgments = judgments.with_columns(pl.col("annotator").replace_strict(pseudonym, return_dtype=pl.Utf8))
    if report is not None:
        report = report.with_columns(
            pl.col("annotator").replace_strict(pseudonym, default="Ann?", return_dtype=pl.Utf8)
        )
    stats = annotator_stats(judgments, report)
    shown = stats.sort("n_judgments", descending=True).head(max_annotators).sort(["median", "annotator"])
    names = shown["annotator"].to_list()
    j = judgments.filter(pl.col("round") == 1) if "round" in judgments.columns else judgments
    fig, axes = style.figure(
        1,
        2,
        height=max(3.0, min(9.0, 0.8 + 0.16 * len(names))),
        width=style.PAGE_WIDTH_IN,
        gridspec_kw={"width_ratios": [3, 2]},
    )
    ax_box, ax_scatter = axes[0]
    excluded = set(stats.filter(pl.col("excluded"))["annotator"].to_list())
    _ratings_panel(ax_box, j, names, stats, excluded)
    _leniency_panel(ax_scatter, stats)
    for i, ax in enumerate((ax_box, ax_scatter)):
        style.panel_letter(ax, i)
    style.note(fig, note)
    style.save(
        fig,
        path,
        title="Ratings per annotator: leniency and carelessness",
        description=f"{stats.height} annotators, {len(excluded)} excluded, {j.height} first-round judgments",
    )
    return stats


AGREEMENT_LABELS = {
    "spearman": "Spearman",
    "alpha": "Krippendorff's α",
    "kappa_3": "Fleiss' κ (3 bins)",
    "kappa_4": "Fleiss' κ (4 bins)",
    "kappa_5": "Fleiss' κ (5 bins)",
    "alpha_ordinal": "α (ordinal)",
}
TASK_COLOURS = {"A": style.BLUE, "B": style.ORANGE, "A+B": style.GREEN}


def _task_bars(ax: Axes, row: dict, metrics: list[str], x: np.ndarray, i: int, width: float, n_tasks: int) -> None:
    """One task's bars (the `i`-th of `n_tasks`), labelled with their values, with the bootstrap interval where the
    table has it."""
    task = row["variant"]
    values = [row[m] if row[m] is not None else np.nan for m in metrics]
    yerr = None
    if all(f"{m}_lo" in row and f"{m}_hi" in row for m in metrics):  # the bootstrap interval, where the table has it
        bounds = np.array([[row[f"{m}_lo"], row[f"{m}_hi"]] for m in metrics], dtype=float)
        yerr = np.clip(np.stack([np.array(values) - bounds[:, 0], bounds[:, 1] - np.array(values)]), 0, None)
        yerr = np.nan_to_num(yerr)
    bars = ax.bar(
        x + (i - (n_tasks - 1) / 2) * width,
        values,
        width,
        color=TASK_COLOURS.get(task, style.SERIES[i % len(style.SERIES)]),
        hatch=style.HATCHES[i],
        edgecolor="white",
        label=f"{task} (pooled)" if "+" in task else f"variant {task}",
        yerr=yerr,
        error_kw={"elinewidth": 1, "capsize": 2, "ecolor": style.BLACK},
    )
    ax.bar_label(
        bars,
        fmt="%.2f",
        label_type="center",
        fontsize=style.FONT_SIZE - 2,
        bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.85},
    )


def agreement_figure(table7: pl.DataFrame, path: str | Path, *, paper: dict | None = None, note: str = "") -> int:
    """Table 7 as grouped bars: one group per measure, one bar per task (A, B, A+B), the paper's value as a mark."""
    from squidflow.judgments.tables import METRICS, PAPER_TABLE7

    paper = PAPER_TABLE7 if paper is None else paper
    metrics = [m for m in [*METRICS, "alpha_ordinal"] if m in table7.columns]
    tasks = table7["variant"].to_list()
    fig, axes = style.figure(1, 1, width=style.PAGE_WIDTH_IN, height=3.2)
    ax = axes[0][0]
    x = np.arange(len(metrics))
    width = 0.8 / max(len(tasks), 1)
    for i, task in enumerate(tasks):
        _task_bars(ax, table7.filter(pl.col("variant") == task).row(0, named=True), metrics, x, i, width, len(tasks))
        ax.plot(
            x + (i - (len(tasks) - 1) / 2) * width,
            [paper.get(task, {}).get(m, np.nan) for m in metrics],
            linestyle="none",
            marker="_",
            markersize=14,
            markeredgewidth=2,
            color=style.BLACK,
            label="paper (SQUID-E Table 7)" if i == 0 else None,
        )
    ax.set_xticks(x, [AGREEMENT_LABELS.get(m, m) for m in metrics])
    ax.set_ylim(0, 1)
    ax.set_ylabel("agreement")
    ax.set_title(
        "Inter-annotator agreement (Table 7): this run's bars (with bootstrap intervals over images), the "
        "paper's values as black marks"
    )
    ax.legend(loc="upper right", ncol=len(tasks) + 1)
    ax.grid(axis="x", visible=False)
    style.note(fig, note)
    return style.save(fig, path, title="Table 7: inter-annotator agreement", description=", ".join(tasks))
