"""The rater triage's signals per annotator and variant (squidflow.judgments.triage decides the verdict from them).

Every signal that compares a rater with "the others" compares them with a consensus: the mean, per item, of the
raters in the consensus set other than the rater (`with_consensus`). The triage starts with every rater in it and
then, round by round, leaves out the raters the previous round called careless (issue #50), so a third of careless
raters no longer pull the consensus honest raters are measured against.

- agreement: Pearson's r of the rater's ratings with the consensus of the same items, with its bootstrap interval;
- response patterns (`patterns`): one rating for (nearly) everything, only the extremes where the consensus is not,
  one rating for every image of a HIT whose images the consensus tells apart;
- shifted answers (`neighbour_agreement`): ratings that fit the consensus of the previous or next image of the same
  HIT (in the HIT's slot order) better than their own image's, as an answer sheet filled one line off does;
- identical answers (`duplicate_answers`): a rater whose answers to a HIT are, image for image, another rater's
  (three or more of them within 6-94, where careful raters seldom give the same number by chance) on most of their
  HITs: colluding accounts, or one person's answers copied. This signal needs no consensus.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl

from squidflow.judgments import pseudonyms
from squidflow.statistics.intervals import IntervalConfig, interval

KEY = ["annotator", "variant"]
MIN_NEIGHBOUR_PAIRS = 6  # neighbouring images rated before the shifted-answers pattern is read
MIN_MIDDLE_ANSWERS = 3  # answers within 6-94 in a HIT before two raters' identical answers to it count
SHOWN_PARTNERS = 5


def with_consensus(r1: pl.DataFrame, consensus: set[tuple[str, str]] | None = None) -> pl.DataFrame:
    """Round-1 judgments with the consensus of the same item (`loo`: the mean rating of the raters in `consensus`
    other than this rater; every rater when None) and how many raters it holds (`n_others`)."""
    member = (
        pl.lit(True)
        if consensus is None
        else pl.struct(KEY).is_in(
            pl.Series(
                [{"annotator": a, "variant": v} for a, v in sorted(consensus)],
                dtype=pl.Struct({"annotator": pl.Utf8, "variant": pl.Utf8}),
            ).implode()
        )
    )
    r1 = r1.with_columns(member.alias("_in"))
    sums = (
        r1.filter(pl.col("_in"))
        .group_by("item", maintain_order=True)
        .agg(pl.col("rating").sum().alias("_s"), pl.len().alias("_n"))
    )
    out = r1.join(sums, on="item", how="left", maintain_order="left").with_columns(
        pl.col("_s").fill_null(0), pl.col("_n").fill_null(0)
    )
    self_in = pl.col("_in").cast(pl.Int64)
    n_others = pl.col("_n") - self_in
    loo = pl.when(n_others > 0).then((pl.col("_s") - pl.col("rating") * self_in) / n_others).otherwise(None)
    return out.with_columns(loo.cast(pl.Float64).alias("loo"), n_others.alias("n_others")).drop("_s", "_n", "_in")


def _pearson_rows(x: np.ndarray, y: np.ndarray):
    def stat(idx: np.ndarray) -> np.ndarray:
        a, b = x[idx], y[idx]
        a = a - a.mean(axis=-1, keepdims=True)
        b = b - b.mean(axis=-1, keepdims=True)
        den = np.sqrt((a * a).sum(axis=-1) * (b * b).sum(axis=-1))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, (a * b).sum(axis=-1) / den, np.nan)

    return stat


def agreement(x: np.ndarray, loo: np.ndarray, cfg: IntervalConfig) -> tuple[float, float, float]:
    """(r, lo, hi): Pearson's r of a rater's ratings with the consensus, bootstrap over the rater's items."""
    if len(x) < 3:
        return float("nan"), float("nan"), float("nan")
    return interval(_pearson_rows(np.asarray(x, float), np.asarray(loo, float)), len(x), cfg)


def patterns(r: pl.DataFrame) -> pl.DataFrame:
    """Per annotator and variant (rows with `loo`): modal share, extreme shares (the rater's, the consensus's on the
    same items) and the share of their HITs (2+ images the consensus tells apart by 20 points) with one rating."""
    extreme = (pl.col("rating") <= 5) | (pl.col("rating") >= 95)
    base = r.group_by(KEY, maintain_order=True).agg(
        extreme.mean().cast(pl.Float64).alias("extreme_share"),
        ((pl.col("loo") <= 5) | (pl.col("loo") >= 95))
        .filter(pl.col("loo").is_not_null())
        .mean()
        .cast(pl.Float64)
        .alias("others_extreme_share"),
    )
    modal = (
        r.group_by([*KEY, "rating"], maintain_order=True)
        .len()
        .group_by(KEY, maintain_order=True)
        .agg((pl.col("len").max() / pl.col("len").sum()).alias("modal_share"))
    )
    hits = (
        r.group_by([*KEY, "hit"], maintain_order=True)
        .agg(
            pl.col("rating").n_unique().alias("distinct"),
            pl.len().alias("n"),
            (pl.col("loo").max() - pl.col("loo").min()).alias("others_range"),
        )
        .filter((pl.col("n") >= 2) & (pl.col("others_range") >= 20))
        .group_by(KEY, maintain_order=True)
        .agg((pl.col("distinct") == 1).mean().cast(pl.Float64).alias("hit_constant_share"))
    )
    return (
        base.join(modal, on=KEY, how="left", maintain_order="left")
        .join(hits, on=KEY, how="left", maintain_order="left")
        .with_columns(pl.col("others_extreme_share", "hit_constant_share").fill_null(float("nan")))
    )


def with_slots(r1: pl.DataFrame) -> pl.DataFrame:
    """Round-1 judgments with `slot`: each item's place in its HIT, in the order the judgments list the HIT's images
    (an MTurk batch row's and a Label Studio task's slot order)."""
    order = (
        r1.select("hit", "item")
        .unique(maintain_order=True)
        .with_columns(pl.int_range(pl.len()).over("hit").alias("slot"))
    )
    return r1.join(order, on=["hit", "item"], how="left", maintain_order="left")


def neighbour_agreement(r: pl.DataFrame) -> pl.DataFrame:
    """Per annotator and variant (rows with `loo` and `slot`): Pearson's r of their rating of each image with the
    consensus of the next image of the same HIT and with the previous one's; `neighbour_agreement` is the larger,
    `neighbour_pairs` the images it is measured on."""
    s = r.sort([*KEY, "hit", "slot"], maintain_order=True)
    over = [*KEY, "hit"]
    s = s.with_columns(
        pl.col("loo").shift(-1).over(over).alias("_next"), pl.col("loo").shift(1).over(over).alias("_prev")
    )

    def corr(c: str) -> pl.Expr:
        ok = pl.col(c).is_not_null() & pl.col("loo").is_not_null()
        return (
            pl.when(ok.sum() >= MIN_NEIGHBOUR_PAIRS)
            .then(pl.corr(pl.col("rating").filter(ok).cast(pl.Float64), pl.col(c).filter(ok)))
            .otherwise(None)
        )

    out = s.group_by(KEY, maintain_order=True).agg(
        corr("_next").alias("_rn"),
        corr("_prev").alias("_rp"),
        pl.max_horizontal(
            (pl.col("_next").is_not_null() & pl.col("loo").is_not_null()).sum(),
            (pl.col("_prev").is_not_null() & pl.col("loo").is_not_null()).sum(),
        ).alias("neighbour_pairs"),
    )
    best = pl.max_horizontal(pl.col("_rn").fill_nan(None), pl.col("_rp").fill_nan(None))
    return out.with_columns(best.fill_null(float("nan")).alias("neighbour_agreement")).drop("_rn", "_rp")


def duplicate_answers(r1: pl.DataFrame, names: Mapping[str, str] | None = None) -> pl.DataFrame:
    """Per annotator and variant: HITs with at least MIN_MIDDLE_ANSWERS answers within 6-94 (`n_hits_answered`), how
    many of them another rater answered identically, image for image (`duplicate_hits`), their share
    (`duplicate_share`) and who (`duplicates`: the first SHOWN_PARTNERS, by pseudonym where `names` maps the ids,
    squidflow.judgments.pseudonyms)."""
    middle = ((pl.col("rating") > 5) & (pl.col("rating") < 95)).sum()
    sheets = (
        r1.sort([*KEY, "hit", "slot"], maintain_order=True)
        .group_by([*KEY, "hit"], maintain_order=True)
        .agg(pl.col("rating").cast(pl.Utf8).str.join(",").alias("_answers"), middle.alias("_middle"))
        .filter(pl.col("_middle") >= MIN_MIDDLE_ANSWERS)
    )
    groups = (
        sheets.group_by(["variant", "hit", "_answers"], maintain_order=True)
        .agg(pl.col("annotator").unique(maintain_order=True).alias("_who"))
        .filter(pl.col("_who").list.len() >= 2)
    )
    per = sheets.join(groups, on=["variant", "hit", "_answers"], how="left", maintain_order="left")
    out = per.group_by(KEY, maintain_order=True).agg(
        pl.len().alias("n_hits_answered"),
        pl.col("_who").is_not_null().sum().alias("duplicate_hits"),
        pl.col("_who")
        .drop_nulls()
        .list.head(SHOWN_PARTNERS + 1)
        .list.explode(keep_nulls=False, empty_as_null=False)
        .unique(maintain_order=True)
        .alias("_p"),
    )
    partners = [[p for p in ps if p != a] for a, _, ps in out.select(*KEY, "_p").iter_rows()]
    if names is not None:
        partners = [pseudonyms.named(ps, names) for ps in partners]
    shown = [", ".join(p[:SHOWN_PARTNERS]) + (" and others" if len(p) > SHOWN_PARTNERS else "") for p in partners]
    return out.with_columns(
        (pl.col("duplicate_hits") / pl.col("n_hits_answered")).cast(pl.Float64).alias("duplicate_share"),
        pl.Series("duplicates", shown, pl.Utf8),
    ).drop("_p")
