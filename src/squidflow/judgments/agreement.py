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
`statsmodels` on random matrices. Beside the paper's α, Table 7 gives Krippendorff's α at the ordinal and interval
levels (Krippendorff 2011, "Computing Krippendorff's alpha-reliability"), equal to the `krippendorff` package's.

Every number of Table 7 has a bootstrap interval over images (agreement_intervals): all measures of all rows from
one index matrix, each computed for every resample at once as a weighted sum over items (agreement_replicates).
Table 7 as a report (the Markdown beside the paper's numbers) is `squidflow.judgments.tables`.
"""

from __future__ import annotations

import itertools
from typing import Literal

import numpy as np
import polars as pl

RATING_MAX = 100
ALPHA_LEVELS: tuple[Literal["ordinal", "interval"], ...] = (
    "ordinal",
    "interval",
)  # Krippendorff's α at these levels beside the paper's (interval, ours)


def bin_ratings(ratings: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-width bins over [0, 100]: bin = floor(r * k / 100), with 100 put in the last bin (k - 1).

    Floor binning is the one that reproduces Table 7 (κ with 4 and 5 bins to 0.001); ceiling binning
    (bin edges inclusive on the left) is 0.004 lower.
    """
    r = np.asarray(ratings, dtype=float)
    return np.minimum(np.floor(r * n_bins / RATING_MAX), n_bins - 1).astype(int)


def _standardized_ranks(x: np.ndarray) -> np.ndarray:
    """The columns of `x` (items × positions, no NaN) as average ranks, centred and scaled to unit length, so that the
    dot product of two columns is their Spearman correlation; constant columns (no correlation defined) are left out."""
    from scipy.stats import rankdata  # here, not at the top: scipy.stats costs ~1 s CPU to each job importing this

    ranks = rankdata(x, axis=0)
    centred = ranks - ranks.mean(axis=0)
    norm = np.sqrt((centred**2).sum(axis=0))
    keep = norm > 0
    return centred[:, keep] / norm[keep]


def spearman_pairs(matrix: np.ndarray) -> float:
    """Mean over pairs of positions of the Spearman correlation across the items both positions rated (pairs with
    fewer than three such items, or a constant side, left out).

    Positions that rated the same items form a group; within a group (and between two groups, over the items both
    rated) the sum of all pairwise correlations is one product of summed standardized ranks, so the cost grows with
    the number of distinct patterns of rated items, not with the number of position pairs: an MTurk batch where every
    one of 41,667 workers answered every HIT (issue 44 case 9: 868 million pairs) is a few groups, computed in
    seconds and exactly."""
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2 or m.shape[1] < 2:
        return float("nan")
    patterns, group = np.unique(~np.isnan(m).T, axis=0, return_inverse=True)
    group = np.asarray(group).ravel()
    total, pairs = 0.0, 0
    for a in range(len(patterns)):
        for b in range(a, len(patterns)):
            support = patterns[a] & patterns[b]
            if support.sum() < 3:
                continue
            za = _standardized_ranks(m[np.ix_(support, group == a)])
            if a == b:
                s = za.sum(axis=1)
                total += float(s @ s - (za**2).sum()) / 2
                pairs += za.shape[1] * (za.shape[1] - 1) // 2
            else:
                zb = _standardized_ranks(m[np.ix_(support, group == b)])
                total += float(za.sum(axis=1) @ zb.sum(axis=1))
                pairs += za.shape[1] * zb.shape[1]
    return total / pairs if pairs else float("nan")


def krippendorff_alpha_interval(matrix: np.ndarray) -> float:
    """Krippendorff's α, interval metric, items × coders with NaN for missing ratings.

    α = 1 - D_o / D_e, from the coincidence of values within items: D_o is the mean squared difference between
    two ratings of the same item, D_e between any two pairable ratings. Items with fewer than two ratings are not
    pairable and drop out. Both are sums of squared differences, computed from each item's Σv and Σv² (the
    bootstrap's formula with every weight 1), so an item with 41,667 ratings costs 41,667 operations, not their square.
    """
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2 or m.size == 0:
        return float("nan")
    present = ~np.isnan(m)
    if not (present.sum(axis=1) >= 2).any():
        return float("nan")
    vals = np.where(present, m, 0.0)
    alpha = _weighted_alpha(vals.sum(axis=1), (vals**2).sum(axis=1), present.sum(axis=1), np.ones((1, len(m))))
    return float(alpha[0])


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


def krippendorff_alpha(matrix: np.ndarray, level: Literal["ordinal", "interval"]) -> float:
    """Krippendorff's α at `level` ("ordinal", "interval"), items × coders with NaN missing, as the `krippendorff`
    package computes it (the tests compare the two); NaN where fewer than two distinct pairable values leave nothing
    to disagree on. Computed from each item's sums (the bootstrap's formula with every weight 1), in memory linear in
    the ratings: the package builds an items × values × values array, 2 GB at 24,000 items rated 0-100 (the scale
    curve at 3,000 videos, issue 61) and growing with the items."""
    if level not in ALPHA_LEVELS:
        raise ValueError(f"Krippendorff's α at level {level!r}: squidflow computes {', '.join(ALPHA_LEVELS)}")
    m = np.asarray(matrix, dtype=float)
    pairable = m[(~np.isnan(m)).sum(axis=1) >= 2] if m.size else m
    if pairable.size == 0 or len(np.unique(pairable[~np.isnan(pairable)])) < 2:
        return float("nan")
    return float(_alpha_replicates(pairable, np.ones((1, len(pairable))))[f"alpha_{level}"][0])


def agreement_row(matrix: np.ndarray, kappa_bins: tuple[int, ...] = (3, 4, 5)) -> dict[str, float]:
    row = {"spearman": spearman_pairs(matrix), "alpha": krippendorff_alpha_interval(matrix)}
    for k in kappa_bins:
        row[f"kappa_{k}"] = binned_kappa(matrix, k)
    for level in ALPHA_LEVELS:
        row[f"alpha_{level}"] = krippendorff_alpha(matrix, level)
    row["n_items"] = int(len(matrix))
    return row


# --- bootstrap replicates: every measure of a matrix under B resamples at once ----------------------------------
# A resample is a row of `weights` (B × items: how many times the resample draws each item; a bootstrap over images
# gives each item its image's count). Every formula is the point function's with each sum over items weighted, so a
# replicate equals the point function on the resample written out (tests/unit/judgments/test_agreement.py), without writing it out.
def measures(kappa_bins: tuple[int, ...] = (3, 4, 5)) -> list[str]:
    """Table 7's columns in order: the paper's measures, then α at the ordinal and interval levels (the package's)."""
    return ["spearman", "alpha", *(f"kappa_{k}" for k in kappa_bins), *(f"alpha_{lv}" for lv in ALPHA_LEVELS)]


def _weighted_alpha(s1: np.ndarray, s2: np.ndarray, cnt: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Interval α per resample from each item's sums s1 = Σv and s2 = Σv² (items, or B × items), its number of ratings
    `cnt` and the resamples' weights (B × items): krippendorff_alpha_interval with every sum over items weighted."""
    pair = cnt >= 2
    within = np.where(pair, (2 * cnt * s2 - 2 * s1**2) / np.where(pair, cnt - 1, 1), 0.0)
    n = (weights * np.where(pair, cnt, 0)).sum(axis=1)
    d_o = (weights * within).sum(axis=1) / n
    big1, big2 = (weights * np.where(pair, s1, 0)).sum(axis=1), (weights * np.where(pair, s2, 0)).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        d_e = (2 * n * big2 - 2 * big1**2) / (n * (n - 1))
        return np.where(d_e > 0, 1 - d_o / d_e, np.nan)


def _alpha_replicates(m: np.ndarray, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Interval and ordinal α for every resample. Krippendorff's ordinal metric, δ²_ck = (Σ_{g=c..k} n_g −
    (n_c + n_k)/2)², equals (P(k) − P(c))² with P(v) = N(v) − n_v/2 the mid-cumulative count of value v among the
    pairable ratings; so ordinal α is interval α on the ratings mapped to P, with P recomputed from each resample's
    counts."""
    from scipy import sparse

    present = ~np.isnan(m)
    cnt = present.sum(axis=1)
    vals = np.where(present, m, 0.0)
    interval = _weighted_alpha(vals.sum(axis=1), (vals**2).sum(axis=1), cnt, weights)
    values, vidx = np.unique(vals, return_inverse=True)
    vidx = vidx.reshape(m.shape)
    rows, cols = np.nonzero(present & (cnt >= 2)[:, None])
    item_values = sparse.csr_matrix((np.ones(len(rows)), (rows, vidx[rows, cols])), shape=(len(m), len(values)))
    n_v = np.asarray((item_values.T @ weights.T).T)  # B × values: each value's pairable ratings in the resample
    mid = np.cumsum(n_v, axis=1) - n_v / 2
    t = np.where(present, mid[:, vidx], 0.0)  # B × items × positions
    ordinal = _weighted_alpha(t.sum(axis=2), (t**2).sum(axis=2), cnt, weights)
    return {"alpha": interval, "alpha_interval": interval, "alpha_ordinal": ordinal}


def _kappa_replicates(m: np.ndarray, weights: np.ndarray, n_bins: int) -> np.ndarray:
    present = ~np.isnan(m)
    cats = bin_ratings(np.nan_to_num(m), n_bins)
    table = np.stack([((cats == k) & present).sum(axis=1) for k in range(n_bins)], axis=1).astype(float)
    n_i = table.sum(axis=1)
    keep = n_i >= 2
    w = weights * keep
    p_i = np.where(keep, ((table**2).sum(axis=1) - n_i) / np.where(keep, n_i * (n_i - 1), 1), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_j = (w @ table) / (w @ n_i)[:, None]
        p_bar, p_e = (w @ p_i) / w.sum(axis=1), (p_j**2).sum(axis=1)
        return np.where(p_e < 1, (p_bar - p_e) / (1 - p_e), np.nan)


def _weighted_midranks(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Average ranks of the items' values x (items) in each resample that repeats item i w[b, i] times (B × items):
    what scipy's rankdata gives on the resample written out (ties share their mean rank)."""
    values, vidx = np.unique(x, return_inverse=True)
    n_b, n_v = len(w), len(values)
    hist = np.bincount(
        (vidx[None, :] + n_v * np.arange(n_b)[:, None]).ravel(), weights=w.ravel(), minlength=n_b * n_v
    ).reshape(n_b, n_v)  # B × values: weighted count of each value
    below = np.cumsum(hist, axis=1) - hist
    return below[:, vidx] + (hist[:, vidx] + 1) / 2


# Spearman's bootstrap loops over pairs of annotator positions (3 on the SQUID-E release, 15 for six Label Studio
# annotators); beyond this many pairs (about 140 positions) its interval is left out, with a sentence under Table 7.
SPEARMAN_INTERVAL_MAX_PAIRS = 10_000


def _spearman_replicates(m: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """spearman_pairs for each resample: per pair of positions, the weighted Pearson correlation of the weighted
    mid-ranks over the items both positions rated. NaN (no interval) past SPEARMAN_INTERVAL_MAX_PAIRS pairs."""
    if m.shape[1] * (m.shape[1] - 1) // 2 > SPEARMAN_INTERVAL_MAX_PAIRS:
        return np.full(len(weights), np.nan)
    rhos = []
    for i, j in itertools.combinations(range(m.shape[1]), 2):
        both = ~np.isnan(m[:, i]) & ~np.isnan(m[:, j])
        w = weights * both
        ri, rj = _weighted_midranks(np.nan_to_num(m[:, i]), w), _weighted_midranks(np.nan_to_num(m[:, j]), w)
        sw = w.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            mi, mj = (w * ri).sum(axis=1) / sw, (w * rj).sum(axis=1) / sw
            di, dj = ri - mi[:, None], rj - mj[:, None]
            rho = (w * di * dj).sum(axis=1) / np.sqrt((w * di**2).sum(axis=1) * (w * dj**2).sum(axis=1))
        rhos.append(np.where(sw >= 3, rho, np.nan))
    if not rhos:
        return np.full(len(weights), np.nan)
    stacked = np.stack(rhos, axis=1)
    finite = np.isfinite(stacked)
    return np.where(
        finite.any(axis=1), np.where(finite, stacked, 0).sum(axis=1) / np.maximum(finite.sum(axis=1), 1), np.nan
    )


REPLICATE_CELLS = 2**24  # values per chunk of resamples (128 MB of float64 per array)


def agreement_replicates(
    matrix: np.ndarray,
    weights: np.ndarray,
    kappa_bins: tuple[int, ...] = (3, 4, 5),
    *,
    chunk: int = 128,
) -> dict[str, np.ndarray]:
    """Every Table 7 measure (`measures(kappa_bins)`) for each of B resamples, `weights` B × items (draws per item).
    Vectorised over resamples, in chunks of at most `chunk` resamples, fewer when the matrix is large, so that the
    ordinal α's B × items × positions array stays near REPLICATE_CELLS values whatever the panel's size."""
    m = np.asarray(matrix, dtype=float)
    weights = np.asarray(weights, dtype=float)
    chunk = max(1, min(chunk, REPLICATE_CELLS // max(m.size, 1)))
    out: dict[str, list[np.ndarray]] = {name: [] for name in measures(kappa_bins)}
    for start in range(0, len(weights), chunk):
        w = weights[start : start + chunk]
        if m.size == 0:
            for name in out:
                out[name].append(np.full(len(w), np.nan))
            continue
        out["spearman"].append(_spearman_replicates(m, w))
        for name, reps in _alpha_replicates(m, w).items():
            out[name].append(reps)
        for k in kappa_bins:
            out[f"kappa_{k}"].append(_kappa_replicates(m, w, k))
    return {name: np.concatenate(parts) if parts else np.empty(0) for name, parts in out.items()}


# --- from judgments to matrices ----------------------------------------------------------------------------------
ITEM = ["video_id", "frame_index", "event_prompt"]
# One rated item is an image under a prompt in one HIT: the release repeats a few images in a variant, and each
# repetition is its own row of three ratings.
HIT_ITEM = [*ITEM, "hit"]


def _first_round(judgments: pl.DataFrame) -> pl.DataFrame:
    return judgments.filter(pl.col("round") == 1) if "round" in judgments.columns else judgments


def _wide(judgments: pl.DataFrame) -> tuple[pl.DataFrame, np.ndarray]:
    """The first round's items (HIT_ITEM keys, sorted) and their rating matrix, items × positions (sorted), each cell
    the mean of that position's ratings of the item, NaN where it has none. Built by one scatter, not a pivot: a HIT
    answered by 41,667 workers has 41,667 positions (issue 44 case 9)."""
    j = _first_round(judgments)
    if j.is_empty():
        return pl.DataFrame(schema={c: judgments.schema[c] for c in HIT_ITEM}), np.empty((0, 0))
    cells = j.group_by([*HIT_ITEM, "position"]).agg(pl.col("rating").mean())
    items = cells.select(HIT_ITEM).unique().sort(HIT_ITEM, nulls_last=True).with_row_index("_item")
    cells = cells.join(items, on=HIT_ITEM, how="left", nulls_equal=True)
    positions, column = np.unique(cells["position"].to_numpy(), return_inverse=True)
    m = np.full((items.height, len(positions)), np.nan)
    m[cells["_item"].to_numpy(), np.asarray(column).ravel()] = cells["rating"].to_numpy().astype(float)
    return items.drop("_item"), m


def _pooled_wide(
    judgments: pl.DataFrame, pooling: str, per_variant: dict[str, tuple[pl.DataFrame, np.ndarray]]
) -> tuple[pl.DataFrame, np.ndarray]:
    """The A+B row's items and matrix: `concat` stacks A's items on B's; `wide` (the paper's) makes an image rated in
    both variants under the same prompt one item with A's positions and B's side by side (its first HIT in each);
    `per_variant` holds _wide of each variant's judgments."""
    if pooling == "concat":
        return _wide(judgments)
    sides = []
    for variant in ("A", "B"):
        keys, m = per_variant[variant]
        first = keys.with_row_index("_row").unique(ITEM, keep="first", maintain_order=True).select(*ITEM, "_row")
        sides.append((first, m))
    (keys_a, m_a), (keys_b, m_b) = sides
    both = keys_a.join(keys_b, on=ITEM, how="inner", suffix="_b", maintain_order="left").sort(ITEM)
    rows_a, rows_b = both["_row"].to_numpy(), both["_row_b"].to_numpy()
    return both.select(ITEM), np.hstack([m_a[rows_a], m_b[rows_b]]) if len(both) else np.empty((0, 0))


def variant_items(judgments: pl.DataFrame, pooling: str = "wide") -> dict[str, tuple[pl.DataFrame, np.ndarray]]:
    """Per row of Table 7 (A, B, A+B): its items' keys (video_id, frame_index, ...) and its rating matrix."""
    out = {variant: _wide(judgments.filter(pl.col("variant") == variant)) for variant in ("A", "B")}
    out["A+B"] = _pooled_wide(judgments, pooling, out)
    return out


def agreement_table(
    judgments: pl.DataFrame,
    *,
    pooling: str = "wide",
    kappa_bins: tuple[int, ...] = (3, 4, 5),
    intervals=None,
) -> pl.DataFrame:
    """Table 7: one row per variant (A, B, A+B) with Spearman, α and κ for each number of bins, and α at the ordinal
    and interval levels (the `krippendorff` package).

    With `intervals` (squidflow.statistics.intervals.IntervalConfig) every measure gets `<measure>_lo` / `<measure>_hi`: the
    interval over resamples that draw images with replacement, each image with every item it has in a row (its
    prompts and HITs) and the raters who rated it (see agreement_intervals).
    """
    items = variant_items(judgments, pooling)
    points = {v: agreement_row(m, kappa_bins) for v, (_, m) in items.items()}
    table = pl.DataFrame([{"variant": v, **row} for v, row in points.items()])
    if intervals is None:
        return table
    bounds = agreement_intervals(items, points, intervals, kappa_bins)
    cols = ["variant"]
    for name in measures(kappa_bins):
        cols += [name, f"{name}_lo", f"{name}_hi"]
    return table.join(bounds, on="variant", how="left", maintain_order="left").select(*cols, "n_items")


# The bootstrap's cost grows with ratings × resamples; past this many (a thousand times the SQUID-E release's 10,800
# ratings at 1,000 resamples, e.g. 24 HITs answered by 8,000 workers each) Table 7 keeps its exact values, leaves the
# intervals out and says so (squidflow.judgments.tables.missing_intervals_note).
INTERVAL_MAX_CELLS = 10**9


def agreement_intervals(
    items: dict[str, tuple[pl.DataFrame, np.ndarray]], points: dict[str, dict], cfg, kappa_bins=(3, 4, 5)
) -> pl.DataFrame:
    """`<measure>_lo` / `<measure>_hi` for every row of Table 7 (`points`: variant -> its agreement_row) from one
    index matrix over the images of the table.

    Images (video_id, frame_index) are the resampled unit, drawn with replacement (squidflow.statistics.intervals.image_resamples,
    `cfg.resamples` rows, seed `cfg.seed`): the same draw for A, B and A+B. An image brings the ratings of the people
    who rated it: each image has its own raters (nested design), so the image bootstrap carries their variation too.
    Raters are not resampled again within an image: drawn with replacement, a rater drawn twice agrees with herself
    (on the release, variant A's α .658 gets replicates in [.75, .79]); permuted, the positions the pairwise Spearman
    pairs are not exchangeable on the release (variant A's .664 gets replicates around .605).
    """
    from squidflow.statistics.intervals import CHUNK_ELEMENTS, counts, image_resample_blocks, interval_from

    images = sorted({k for keys, _ in items.values() for k in keys.select("video_id", "frame_index").iter_rows()})
    position = {k: i for i, k in enumerate(images)}
    item_image = {
        variant: np.array([position[k] for k in keys.select("video_id", "frame_index").iter_rows()], dtype=int)
        for variant, (keys, _) in items.items()
    }
    bounded = {variant: m.size * cfg.resamples <= INTERVAL_MAX_CELLS for variant, (_, m) in items.items()}
    parts: dict[str, list[dict[str, np.ndarray]]] = {variant: [] for variant in items}
    # a block of resamples at a time (B × images draws per image, B × items weights: 1.9 GB at 10,000 videos)
    for index in image_resample_blocks(len(images), cfg, CHUNK_ELEMENTS // max(len(images), 1)):
        drawn = counts(index, len(images))  # block × images: draws per image
        for variant, (_, m) in items.items():
            if bounded[variant]:
                parts[variant].append(agreement_replicates(m, drawn[:, item_image[variant]], kappa_bins))
    rows = []
    for variant in items:
        if bounded[variant]:
            reps = {name: np.concatenate([p[name] for p in parts[variant]]) for name in measures(kappa_bins)}
        else:  # no interval, and a sentence under Table 7 says why
            reps = {name: np.full(cfg.resamples, np.nan) for name in measures(kappa_bins)}
        row: dict[str, str | float] = {"variant": variant}
        for name, values in reps.items():
            _, lo, hi = interval_from(points[variant][name], values, cfg)
            row[f"{name}_lo"], row[f"{name}_hi"] = lo, hi
        rows.append(row)
    return pl.DataFrame(
        rows,
        schema={"variant": pl.Utf8, **{f"{n}_{e}": pl.Float64 for n in measures(kappa_bins) for e in ("lo", "hi")}},
    )


def intra_annotator_rhos(judgments: pl.DataFrame, *, min_items: int = 3) -> np.ndarray:
    """§4.2: per annotator with at least `min_items` repeated items, the Spearman between their first-round and
    repeat-round ratings of the same items (in annotator order, whatever the order of `judgments`' rows)."""
    if "round" not in judgments.columns or judgments.filter(pl.col("round") > 1).is_empty():
        return np.empty(0)
    keys = ["annotator", *ITEM]
    first = judgments.filter(pl.col("round") == 1).select([*keys, pl.col("rating").alias("r1")])
    again = judgments.filter(pl.col("round") > 1).select([*keys, pl.col("rating").alias("r2")])
    pairs = first.join(again, on=keys, maintain_order="left").sort(
        keys
    )  # a join's row order is not fixed; the bootstrap reads this order
    from scipy.stats import spearmanr

    rhos = []
    for (_,), g in pairs.group_by(["annotator"], maintain_order=True):
        if len(g) >= min_items:
            rho = spearmanr(g["r1"].to_numpy(), g["r2"].to_numpy()).statistic
            if np.isfinite(rho):
                rhos.append(rho)
    return np.array(rhos, dtype=float)
