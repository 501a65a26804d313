"""Figures of the training tables: Table 1 as a plot, and a reliability diagram per Table 3 method.

- `table1_plot`: accuracy per certainty bin of the mean human judgment (SQUID-E §5.1, Table 1), one line per model
  (RN+SD ... RN+ES, named after training.backbone: ENL0+SD for EfficientNet-Lite0) at its mean over seeds, with a band of ± one sample standard deviation over seeds.
- `reliability_diagram`: for one calibration method (SQUID-E §5.3, Table 3), pooled over seeds, on the SE
  evaluation images: (a) the model's probability of the target event against the mean human judgment of the images
  it puts in each bin — a model whose confidence matches people lies on the diagonal (what HUJ MSE measures); (b)
  the top-label confidence against accuracy, the classic reliability diagram (what the top-label ECE measures).
  One line per training set (SD, SE). Bins are the project's certainty bins (squidflow.statistics.certainty: 0-20,
  ..., 80-100, applied to 100 × the probability), the same edges as Table 1.

Colours are the Okabe–Ito palette (distinguishable with the common colour-vision deficiencies), and every line also
has its own marker.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import numpy as np
import polars as pl

from squidflow.encoders.backbone_names import model_label
from squidflow.presentation.style import MARKERS, OKABE_ITO, save  # the one palette and saver of every squidflow figure
from squidflow.statistics.certainty import CERTAINTY_BINS, certainty_bins

TRAIN_SET_LABELS = {"SD": "trained on SD", "SE": "trained on SQUID-E"}


def _pyplot():
    from squidflow.presentation.style import pyplot

    return pyplot()  # Agg, with the shared style (fonts and sizes that read in print)


def table1_series(runs: pl.DataFrame, order: list[str]) -> pl.DataFrame:
    """runs (train_set, method, seed, metric, value) -> method, bin, mean, std, n_seeds for the acc_<bin> metrics."""
    rows = []
    methods = [m for m in order if m in set(runs["method"])] + sorted(set(runs["method"]) - set(order))
    for method in methods:
        for b in CERTAINTY_BINS:
            v = runs.filter((pl.col("method") == method) & (pl.col("metric") == f"acc_{b}"))["value"].to_numpy()
            v = v[~np.isnan(v)]
            rows.append(
                {
                    "method": method,
                    "bin": b,
                    "mean": float(v.mean()) if len(v) else float("nan"),
                    "std": float(v.std(ddof=1)) if len(v) > 1 else 0.0,
                    "n_seeds": len(v),
                }
            )
    return pl.DataFrame(
        rows, schema={"method": pl.Utf8, "bin": pl.Utf8, "mean": pl.Float64, "std": pl.Float64, "n_seeds": pl.Int64}
    )


def table1_plot(
    runs: pl.DataFrame, order: list[str], path: str | Path, title: str, backbone: str | None = None
) -> pl.DataFrame:
    """Write Table 1 as a line plot to `path` (PNG); returns the plotted series."""
    plt = _pyplot()
    series = table1_series(runs, order)
    x = np.arange(len(CERTAINTY_BINS))
    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=120)
    for i, ((method,), g) in enumerate(series.group_by(["method"], maintain_order=True)):
        mean, std = g["mean"].to_numpy(), g["std"].to_numpy()
        colour, marker = OKABE_ITO[i % len(OKABE_ITO)], MARKERS[i % len(MARKERS)]
        n = int(cast(int, g["n_seeds"].max()))
        ax.plot(x, mean, marker=marker, color=colour, label=f"{model_label(backbone, method)} ({n} seeds)")
        ax.fill_between(x, mean - std, mean + std, color=colour, alpha=0.15, linewidth=0)
    ax.set_xticks(x, [f"{b}%" for b in CERTAINTY_BINS])
    ax.set_xlabel("certainty bin of the mean human judgment")
    ax.set_ylabel("accuracy (mean ± 1 sd over seeds)")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8, loc="lower right", ncol=2)
    fig.tight_layout()
    save(
        fig, path, title=title, description="accuracy per certainty bin, mean and ± 1 sd over seeds, one line per model"
    )
    return series


def reliability_bins(predictions: pl.DataFrame) -> pl.DataFrame:
    """Per training set and confidence bin, over the SE evaluation images of every seed: for the target probability,
    its mean and the mean human judgment (/100); for the top-label confidence, its mean and the accuracy."""
    se = predictions.filter(pl.col("eval_set") == "SE")
    rows = []
    for (train_set,), g in se.group_by(["train_set"], maintain_order=True):
        probs = np.array(g["probs"].to_list(), dtype=float).reshape(len(g), -1)
        labels = g["label"].to_numpy()
        human = g["human_mean"].fill_null(float("nan")).to_numpy().astype(float)
        p_target = probs[:, 1]
        judged = ~np.isnan(human)
        bins = certainty_bins(100 * p_target[judged])
        top = probs.max(axis=1)
        top_bins = certainty_bins(100 * top)
        correct = probs.argmax(axis=1) == labels
        for b in CERTAINTY_BINS:
            m = bins == b
            t = top_bins == b
            rows.append(
                {
                    "train_set": train_set,
                    "bin": b,
                    "n_human": int(m.sum()),
                    "confidence": float(p_target[judged][m].mean()) if m.any() else float("nan"),
                    "human": float(human[judged][m].mean() / 100) if m.any() else float("nan"),
                    "n_top": int(t.sum()),
                    "top_confidence": float(top[t].mean()) if t.any() else float("nan"),
                    "accuracy": float(correct[t].mean()) if t.any() else float("nan"),
                }
            )
    return pl.DataFrame(
        rows,
        schema={
            "train_set": pl.Utf8,
            "bin": pl.Utf8,
            "n_human": pl.Int64,
            "confidence": pl.Float64,
            "human": pl.Float64,
            "n_top": pl.Int64,
            "top_confidence": pl.Float64,
            "accuracy": pl.Float64,
        },
    )


def reliability_diagram(predictions: pl.DataFrame, path: str | Path, title: str) -> pl.DataFrame:
    """Write one method's two-panel reliability diagram to `path` (PNG); `predictions` are its runs' predictions
    with a `train_set` column. Returns the binned points."""
    plt = _pyplot()
    points = reliability_bins(predictions)
    fig, axes = plt.subplots(1, 2, figsize=(9, 4.2), dpi=120)
    panels = (
        (
            axes[0],
            "confidence",
            "human",
            "n_human",
            "model P(target event)",
            "mean human judgment / 100",
            "(a) against human judgments",
        ),
        (
            axes[1],
            "top_confidence",
            "accuracy",
            "n_top",
            "model confidence (top label)",
            "accuracy",
            "(b) against accuracy",
        ),
    )
    for ax, xcol, ycol, ncol, xlabel, ylabel, name in panels:
        ax.plot([0, 1], [0, 1], color="0.6", linestyle="--", linewidth=1, label="perfect agreement")
        for i, ((train_set,), g) in enumerate(points.group_by(["train_set"], maintain_order=True)):
            g = g.filter(pl.col(ncol) > 0)
            colour, marker = OKABE_ITO[(4 + i) % len(OKABE_ITO)], MARKERS[i % len(MARKERS)]
            ax.plot(
                g[xcol],
                g[ycol],
                marker=marker,
                color=colour,
                label=f"{TRAIN_SET_LABELS.get(train_set, train_set)} (n={int(g[ncol].sum())})",
            )
            for x, y, n in g.select(xcol, ycol, ncol).iter_rows():
                ax.annotate(str(n), (x, y), textcoords="offset points", xytext=(4, -10), fontsize=7, color=colour)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(name, fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    save(
        fig, path, title=title, description="(a) P(target) against mean human judgment; (b) confidence against accuracy"
    )
    return points


def pooled_run_predictions(runs: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """Runs' predictions, each under its path (…/runs/{experiment}/{train_set}/{method}/seed{seed}/predictions.parquet),
    pooled with the run's train_set, method and seed."""
    from pathlib import Path

    parts = []
    for path, run in runs.items():
        seed_dir, method_dir, train_dir = Path(path).parent, Path(path).parent.parent, Path(path).parent.parent.parent
        parts.append(
            run.with_columns(
                pl.lit(train_dir.name).alias("train_set"),
                pl.lit(method_dir.name).alias("method"),
                pl.lit(int(seed_dir.name.removeprefix("seed"))).alias("seed"),
            )
        )
    return pl.concat(parts) if parts else pl.DataFrame()
