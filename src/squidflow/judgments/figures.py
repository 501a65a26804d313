"""Figure 3 (SQUID-E §4.1): histograms of each image's mean judgment and of its standard deviation, per variant."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from squidflow.io import atomic_path  # noqa: E402


def fig3_judgments(scores: pl.DataFrame, path: str | Path, *, title: str = "") -> None:
    """2 × 2 grid: rows = variants A and B, columns = per-image mean (0-100) and standard deviation."""
    fig, axes = plt.subplots(2, 2, figsize=(9, 6), sharex="col", constrained_layout=True)
    for row, variant in enumerate(("A", "B")):
        s = scores.filter(pl.col("variant") == variant)
        share = s["high_certainty"].mean() if len(s) else float("nan")
        for col, (column, label, rng) in enumerate((("mean", "mean judgment", (0, 100)), ("std", "standard deviation", (0, 50)))):
            ax = axes[row, col]
            values = s[column].drop_nulls().to_numpy()
            ax.hist(values, bins=20, range=rng, color="#4c72b0" if variant == "A" else "#dd8452", edgecolor="white")
            ax.set_ylabel(f"variant {variant}: images")
            if row == 1:
                ax.set_xlabel(label)
            if col == 0:
                ax.set_title(f"Variant {variant}: {len(s)} images, {share:.0%} high certainty (mean ≥ 95)", fontsize=10)
    if title:
        fig.suptitle(title)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120, format="png")
    plt.close(fig)


def fig3_from_file(scores_path, png_path, title: str = "") -> None:
    from squidflow import schemas
    from squidflow.io import read_parquet

    scores = read_parquet(scores_path, schemas.IMAGE_SCORES)
    fig3_judgments(scores, png_path, title=title)
