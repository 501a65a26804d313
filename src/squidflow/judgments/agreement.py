"""Agreement between annotators (SQUID-E §4.1–4.2, SQUID-E supplement Appendix C, Table 7).

The input is a rating matrix: one row per item (an image under one event prompt), one column per *annotator
position* (the first, second, third assignment of a HIT; the release's huj_0..huj_2), NaN where a position did not
rate the item. Three metrics, as in Table 7:

- Spearman: the Spearman correlation across items between two positions, averaged over every pair of positions.
- Krippendorff's α with the interval metric, which uses every item with at least two ratings (missing allowed).
- Fleiss' κ on the ratings binned into k equal-width bins over 0–100 (floor binning, 100 falls in the last bin:
  with 5 bins, 0–19 | 20–39 | 40–59 | 60–79 | 80–100); items with fewer than two ratings drop out, and items with
  fewer ratings than others (excluded annotators) enter through κ's usual generalisation to varying raters.

α and κ are implemented here (small and readable); the tests check them against the `krippendorff` package and
`statsmodels` on random matrices.
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
from scipy.stats import spearmanr

from squidflow.io import md_escape

RATING_MAX = 100


def bin_ratings(ratings: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-width bins over [0, 100]: bin = floor(r * k / 100), with 100 put in the last bin (k - 1).

    Floor binning is the one that reproduces Table 7 (κ with 4 and 5 bins to 0.001); ceiling binning
    (bin edges inclusive on the left) is 0.004 lower.
    """
    r = np.asarray(ratings, dtype=float)
    return np.minimum(np.floor(r * n_bins / RATING_MAX), n_bins - 1).astype(int)


def spearman_pairs(matrix: np.ndarray) -> float:
    """Mean over pairs of positions of the Spearman correlation across the items both positions rated."""
    m = np.asarray(matrix, dtype=float)
    rhos = []
    for i, j in itertools.combinations(range(m.shape[1]), 2):
        both = ~np.isnan(m[:, i]) & ~np.isnan(m[:, j])
        if both.sum() < 3:
            continue
        rho = spearmanr(m[both, i], m[both, j]).statistic
        if np.isfinite(rho):
            rhos.append(rho)
    return float(np.mean(rhos)) if rhos else float("nan")


def krippendorff_alpha_interval(matrix: np.ndarray) -> float:
    """Krippendorff's α, interval metric, items × coders with NaN for missing ratings.

    α = 1 - D_o / D_e, from the coincidence of values within items: D_o is the mean squared difference between
    two ratings of the same item, D_e between any two pairable ratings. Items with fewer than two ratings are not
    pairable and drop out.
    """
    m = np.asarray(matrix, dtype=float)
    counts = (~np.isnan(m)).sum(axis=1)
    m = m[counts >= 2]
    counts = counts[counts >= 2]
    if len(m) == 0:
        return float("nan")
    n_total = counts.sum()
    # observed: within each item, sum over ordered pairs of different ratings / (m_u - 1)
    d_o = 0.0
    for row, m_u in zip(m, counts, strict=True):
        v = row[~np.isnan(row)]
        diff = v[:, None] - v[None, :]
        d_o += (diff**2).sum() / (m_u - 1)
    d_o /= n_total
    values = m[~np.isnan(m)]
    # expected: every ordered pair of pairable ratings, sum of squared differences via moments
    s1, s2 = values.sum(), (values**2).sum()
    d_e = (2 * n_total * s2 - 2 * s1**2) / (n_total * (n_total - 1))
    if d_e == 0:
        return float("nan")
    return float(1 - d_o / d_e)


def fleiss_kappa(categories: np.ndarray, n_categories: int) -> float:
    """Fleiss' κ for an items × raters matrix of category indices 0..n_categories-1, -1 where a rater is missing.

    With the same number of raters per item this is Fleiss' κ exactly; with varying numbers (annotators excluded by
    the quality checks) it is its usual generalisation: each item's agreement P_i is computed over its own n_i
    raters, category shares over all ratings. Items with fewer than two ratings drop out.
    """
    c = np.asarray(categories, dtype=int)
    if c.ndim != 2 or c.shape[0] == 0:
        return float("nan")
    table = np.stack([(c == k).sum(axis=1) for k in range(n_categories)], axis=1)  # items × categories
    n_i = table.sum(axis=1)
    table, n_i = table[n_i >= 2], n_i[n_i >= 2]
    if len(table) == 0:
        return float("nan")
    p_j = table.sum(axis=0) / n_i.sum()
    p_i = ((table**2).sum(axis=1) - n_i) / (n_i * (n_i - 1))
    p_bar, p_e = p_i.mean(), (p_j**2).sum()
    if p_e == 1:
        return float("nan")
    return float((p_bar - p_e) / (1 - p_e))


def binned_kappa(matrix: np.ndarray, n_bins: int) -> float:
    """Fleiss' κ on ratings binned into `n_bins` (missing ratings stay missing)."""
    m = np.asarray(matrix, dtype=float)
    cats = np.where(np.isnan(m), -1, bin_ratings(np.nan_to_num(m), n_bins))
    return fleiss_kappa(cats, n_bins)


def agreement_row(matrix: np.ndarray, kappa_bins: tuple[int, ...] = (3, 4, 5)) -> dict[str, float]:
    row = {"spearman": spearman_pairs(matrix), "alpha": krippendorff_alpha_interval(matrix)}
    for k in kappa_bins:
        row[f"kappa_{k}"] = binned_kappa(matrix, k)
    row["n_items"] = int(len(matrix))
    return row


# --- from judgments to matrices ----------------------------------------------------------------------------------
ITEM = ["video_id", "frame_index", "event_prompt"]
# One rated item is an image under a prompt in one HIT: the release repeats a few images in a variant, and each
# repetition is its own row of three ratings.
HIT_ITEM = [*ITEM, "hit"]


def _first_round(judgments: pl.DataFrame) -> pl.DataFrame:
    return judgments.filter(pl.col("round") == 1) if "round" in judgments.columns else judgments


def _wide(judgments: pl.DataFrame) -> pl.DataFrame:
    j = _first_round(judgments)
    if j.is_empty():
        return pl.DataFrame(schema={c: judgments.schema[c] for c in HIT_ITEM})
    return (
        j.group_by([*HIT_ITEM, "position"])
        .agg(pl.col("rating").mean())
        .pivot(on="position", index=HIT_ITEM, values="rating", sort_columns=True)
        .sort(HIT_ITEM)
    )


def rating_matrix(judgments: pl.DataFrame) -> np.ndarray:
    """Items (image × prompt × HIT) × annotator positions, NaN where a position has no rating."""
    wide = _wide(judgments)
    cols = [c for c in wide.columns if c not in HIT_ITEM]
    return wide.select(cols).to_numpy().astype(float) if cols else np.empty((0, 0))


def pooled_matrix(judgments: pl.DataFrame, pooling: str = "wide") -> np.ndarray:
    """The A+B matrix.

    `wide` (reproduces Table 7's A+B row): an item is an image under one prompt rated in both variants; its
    columns are A's positions then B's positions (six raters; an image repeated within a variant counts once, its
    first HIT). `concat`: A's items stacked on B's items, three positions each.
    """
    if pooling == "concat":
        return rating_matrix(judgments)
    sides = []
    for variant in ("A", "B"):
        w = _wide(judgments.filter(pl.col("variant") == variant)).unique(ITEM, keep="first", maintain_order=True)
        sides.append(w.drop("hit").rename({c: f"{variant}{c}" for c in w.columns if c not in HIT_ITEM}))
    both = sides[0].join(sides[1], on=ITEM, how="inner").sort(ITEM)
    cols = [c for c in both.columns if c not in ITEM]
    return both.select(cols).to_numpy().astype(float) if cols else np.empty((0, 0))


def agreement_table(judgments: pl.DataFrame, *, pooling: str = "wide", kappa_bins: tuple[int, ...] = (3, 4, 5)) -> pl.DataFrame:
    """Table 7: one row per variant (A, B, A+B) with Spearman, α and κ for each number of bins."""
    rows = []
    for variant in ("A", "B"):
        m = rating_matrix(judgments.filter(pl.col("variant") == variant))
        rows.append({"variant": variant, **agreement_row(m, kappa_bins)})
    rows.append({"variant": "A+B", **agreement_row(pooled_matrix(judgments, pooling), kappa_bins)})
    return pl.DataFrame(rows)


def intra_annotator(judgments: pl.DataFrame, *, min_items: int = 3) -> tuple[float, int]:
    """§4.2: per annotator, Spearman between their first-round and repeat-round ratings of the same items; the mean
    over annotators with at least `min_items` repeated items, and how many annotators that is."""
    if "round" not in judgments.columns or judgments.filter(pl.col("round") > 1).is_empty():
        return float("nan"), 0
    keys = ["annotator", *ITEM]
    first = judgments.filter(pl.col("round") == 1).select([*keys, pl.col("rating").alias("r1")])
    again = judgments.filter(pl.col("round") > 1).select([*keys, pl.col("rating").alias("r2")])
    pairs = first.join(again, on=keys)
    rhos = []
    for (_,), g in pairs.group_by(["annotator"]):
        if len(g) >= min_items:
            rho = spearmanr(g["r1"].to_numpy(), g["r2"].to_numpy()).statistic
            if np.isfinite(rho):
                rhos.append(rho)
    return (float(np.mean(rhos)) if rhos else float("nan")), len(rhos)


# --- Table 7 as a report ----------------------------------------------------------------------------------------
PAPER_TABLE7 = {  # SQUID-E supplement, Table 7
    "A": {"spearman": 0.676, "alpha": 0.658, "kappa_3": 0.468, "kappa_4": 0.397, "kappa_5": 0.341},
    "B": {"spearman": 0.631, "alpha": 0.696, "kappa_3": 0.491, "kappa_4": 0.431, "kappa_5": 0.386},
    "A+B": {"spearman": 0.673, "alpha": 0.676, "kappa_3": 0.482, "kappa_4": 0.424, "kappa_5": 0.364},
}
METRICS = ["spearman", "alpha", "kappa_3", "kappa_4", "kappa_5"]

CLOSING_NOTE = """\
How the numbers are computed. An item is an image under one prompt in one HIT; its columns are annotator positions
(the release's huj_0..huj_2, MTurk's assignment order). Spearman is the mean over pairs of positions of the Spearman
correlation across items. α is Krippendorff's interval α. κ is Fleiss' κ on equal-width bins with the lower edge
inclusive and 100 in the last bin (floor(r·k/100)); ceiling binning (upper edge inclusive) gives κ(4), κ(5) 0.004
lower than the paper. A+B pools {pooling}.

Differences from the paper on the release (huj_annotations.csv): α and κ with 4 and 5 bins agree to 0.001 for A and B,
and every A+B value to 0.005 with the `wide` pooling (each image rated in both variants under the same prompt is one
item with six raters; stacking A's items on B's, `concat`, gives α .701 and κ(5) .386 instead, so the paper did not
pool that way). κ with 3 bins is .461 for A (paper .468). Spearman is .664 for A (paper .676) and .609 for B (paper
.631): the release has no annotator ids, only three rating positions per row, while the paper correlated real
annotators; a rating position mixes several workers, which lowers a rank correlation more than α (α does not depend
on who sits in which column).

High certainty: variant A's 16.3% matches the paper's 16%. Variant B's share is over all images shown, half of which
come from the similar event; the paper's 19% matches the share among the ~900 images of the prompted event (172 of
~900), so it was likely computed over those.
"""


def _fmt(v) -> str:
    return "" if v is None or (isinstance(v, float) and not np.isfinite(v)) else f"{v:.3f}"


def table7_markdown(
    table: pl.DataFrame,
    *,
    source: str,
    pooling: str,
    intra: tuple[float, int] = (float("nan"), 0),
    high_certainty: pl.DataFrame | None = None,
    excluded: list[str] = (),
    skipped: dict[str, str] | None = None,
) -> str:
    """Table 7 as Markdown; annotator ids and other data are escaped (squidflow.io.md_escape). `skipped` maps a
    variant to why its row is empty (`on_empty: skip`)."""
    simulated = source == "simulated"
    lines = ["# Table 7: inter-annotator agreement" + (" (SIMULATED annotator panel)" if simulated else ""), ""]
    if simulated:
        lines += [
            "**These judgments come from the simulated annotator panel of the offline demo (squidflow.demo.panel), not from",
            "people.** The panel's noise is calibrated on variant A to the release's α and Spearman (their mean); compare",
            "the paper's row to see how close it is.",
            "",
        ]
    lines += [f"Judgments: {md_escape(source)}. Items per row in `n_items`.", ""]
    for variant, why in (skipped or {}).items():
        lines += [f"**Variant {variant} skipped** (`on_empty: skip`): {md_escape(why)}", ""]
    lines += ["| Task | Spearman | Alpha | Kappa (3 bins) | Kappa (4 bins) | Kappa (5 bins) | n_items | paper (SQUID-E supplement) |"]
    lines += ["|---|---|---|---|---|---|---|---|"]
    for rec in table.iter_rows(named=True):
        paper = PAPER_TABLE7.get(rec["variant"], {})
        lines.append(
            f"| {rec['variant']} | " + " | ".join(_fmt(rec[m]) for m in METRICS) + f" | {rec['n_items']} | "
            + " / ".join(_fmt(paper.get(m)) for m in METRICS) + " |"
        )
    lines += [""]
    rho, n = intra
    lines += [
        "Intra-annotator Spearman (SQUID-E §4.2; paper .788): "
        + (f"{rho:.3f} over {n} annotator(s) who rated the same images twice." if n else "no repeated ratings.")
    ]
    if high_certainty is not None and len(high_certainty):
        parts = [f"{r['variant']}: {r['share']:.1%} of {r['n_images']} images" for r in high_certainty.iter_rows(named=True)]
        lines += ["", "High-certainty images (mean ≥ 95; paper: A 16%, B 19%): " + "; ".join(parts) + "."]
    shown = ", ".join(md_escape(a) for a in excluded) or "none"
    lines += ["", "Excluded annotators (quality checks, results/judgments/annotator_report.parquet): " + shown + "."]
    pooled = (
        "images rated in both variants under the same prompt as one item with six raters (A's positions and B's)"
        if pooling == "wide"
        else "A's items stacked on B's items (three positions each)"
    )
    lines += ["", "## Notes", "", CLOSING_NOTE.format(pooling=pooled)]
    return "\n".join(lines)


def empty_variants(judgments: pl.DataFrame, excluded: list[str], report_path: str = "annotator_report.parquet") -> dict[str, str]:
    """Variants with judgments whose every annotator is excluded, each with a sentence saying so and where to look.

    (A variant nobody was asked to rate is not listed: its row is simply empty.) With no judgment at all, both are.
    """
    out = {}
    if judgments.is_empty():
        return {v: "no judgment was read (results/judgments/ingest_report.md)." for v in ("A", "B")}
    for variant in ("A", "B"):
        raters = set(judgments.filter(pl.col("variant") == variant)["annotator"].to_list())
        if raters and raters <= set(excluded):
            out[variant] = (
                f"every one of its {len(raters)} annotator(s) is excluded by the quality checks (judgments.quality); "
                f"their flags are in {report_path}."
            )
    return out


def write_table7(
    judgments_path, report_path, share_path, *, csv_path, md_path, pooling="wide", kappa_bins=(3, 4, 5),
    on_empty: str = "error",
) -> pl.DataFrame:
    """The rule's edge: Table 7 over the judgments of annotators not excluded -> CSV and Markdown.

    A variant whose every annotator is excluded stops the run (EmptyError naming annotator_report.parquet) unless
    `on_empty="skip"`, which leaves its row empty with a note in the Markdown.
    """
    from squidflow import schemas
    from squidflow.errors import EmptyError
    from squidflow.io import read_parquet, write_csv, write_text

    judgments = read_parquet(judgments_path, schemas.JUDGMENTS)
    report = read_parquet(report_path, schemas.ANNOTATOR_REPORT)
    excluded = report.filter(pl.col("excluded"))["annotator"].to_list()
    skipped = empty_variants(judgments, excluded, str(report_path))
    if skipped and on_empty != "skip":
        variant, why = next(iter(skipped.items()))
        raise EmptyError(
            f"Table 7, variant {variant}: {why} Loosen judgments.quality (max_violations, controls), or set "
            "`on_empty: skip` to write Table 7 without that row."
        )
    kept = judgments.filter(~pl.col("annotator").is_in(excluded))
    table = agreement_table(kept, pooling=pooling, kappa_bins=kappa_bins)
    write_csv(table.drop("n_items"), csv_path, float_precision=4)
    source = ",".join(sorted(judgments["source"].unique().to_list())) or "none"
    md = table7_markdown(
        table, source=source, pooling=pooling, intra=intra_annotator(kept),
        high_certainty=pl.read_csv(share_path), excluded=excluded, skipped=skipped,
    )
    write_text(md_path, md)
    return table
