"""The next round of ratings (issues #36, 59): the tasks that carry the ratings the plan buys, and their effect.

`annotation.next_round` plans, per soft label (image, prompt, variant), how many ratings the next round buys towards
a target width of the interval of the mean (squidflow.judgments.allocation.plan_next_round; strategies adaptive,
uniform, interval_width, activelab). Here:

- `by_activelab`: cleanlab's ActiveLab scores (`cleanlab.multiannotator.get_active_learning_scores`) on the
  certainty bins of the ratings with a model's probabilities (judgments.triage.predictions): the order of strategy
  `activelab`, lowest score first;
- `round_hits`: the plan's ratings as HITs of the round-1 format (`make_hits`' columns: the MTurk batch input CSV,
  which the Label Studio tasks are made from), grouped by prompt, `images_per_hit` distinct images a HIT, an image
  in as many HITs as its planned ratings need (each HIT is rated by `assignments_per_hit` people), so round 2 passes
  the same checks as round 1 (written once, as the round's issued record: squidflow.judgments.issued);
- `in_dataset`: a round's plan without the images a takedown removed (its tables and comparison name none);
- `interval_change`, `change_markdown`, `waves_markdown`: the intervals before and after a next round.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import polars as pl

from squidflow.config.validation import ConfigError
from squidflow.contracts.io import unneutralise
from squidflow.presentation.table_format import md_row, md_rule

IMAGE = ["video_id", "frame_index", "event_prompt"]
ITEM = [*IMAGE, "variant"]


def by_activelab(judgments: pl.DataFrame, probability: pl.DataFrame | None, budget: int) -> pl.DataFrame:
    """The `budget` images and prompts with the lowest ActiveLab score (cleanlab), over the certainty bins of round 1."""
    if probability is None:
        raise ConfigError(
            "annotation.next_round.strategy activelab needs a model's probabilities: set "
            "judgments.triage.predictions (zero_shot or a predictions file), or use interval_width"
        )
    from cleanlab.multiannotator import get_active_learning_scores

    from squidflow.judgments.triage import _bin_index, first_round, model_bins

    r1 = first_round(judgments).join(probability, on=IMAGE, how="inner", maintain_order="left")
    wide = r1.with_columns(pl.Series("bin", _bin_index(r1["rating"].to_numpy()))).pivot(
        on="annotator", index="item", values="bin", aggregate_function="first"
    )
    prob = dict(r1.select("item", "probability").unique("item", maintain_order=True).iter_rows())
    items = wide["item"].to_list()
    scores, _ = get_active_learning_scores(
        wide.drop("item").to_pandas().astype(float), model_bins(np.array([prob[i] for i in items]))
    )
    keyed = r1.select("item", *IMAGE).unique("item", maintain_order=True)
    ranked = pl.DataFrame({"item": items, "activelab": np.asarray(scores, float)}).join(
        keyed, on="item", maintain_order="left"
    )
    return (
        ranked.group_by(IMAGE, maintain_order=True)
        .agg(pl.col("activelab").min())
        .sort(["activelab", *IMAGE])
        .head(budget)
    )


def hit_groups(copies: dict[str, int], images_per_hit: int) -> list[list[str]]:
    """Image id -> HITs it must be in -> HITs of at most `images_per_hit` distinct images: the images with the most
    HITs still to place first (then by id), so no HIT shows an image twice."""
    left = {k: v for k, v in copies.items() if v > 0}
    out = []
    while left:
        chunk = sorted(left, key=lambda k: (-left[k], k))[:images_per_hit]
        out.append(sorted(chunk))
        for k in chunk:
            left[k] -= 1
            if not left[k]:
                del left[k]
    return out


def round_hits(
    hits_by_variant: dict[str, pl.DataFrame], plan: pl.DataFrame, images_per_hit: int, assignments_per_hit: int
) -> dict[str, pl.DataFrame]:
    """Next-round HITs per variant from the plan (schemas.NEXT_ROUND_PLAN): each soft label with ratings planned in
    ratings_planned / assignments_per_hit HITs of its variant, grouped by prompt into HITs of `images_per_hit`
    distinct images, with each image's URL and event copied from its round-1 HIT."""
    wanted = plan.filter(pl.col("ratings_planned") > 0)
    out = {}
    for variant, hits in sorted(hits_by_variant.items()):
        slots = sorted(int(c.split("_")[1]) for c in hits.columns if c.startswith("image_") and c.endswith("_id"))
        info, prompt_event = {}, {}
        for rec in hits.iter_rows(named=True):
            rec = {k: unneutralise(v) if isinstance(v, str) else v for k, v in rec.items()}  # as MTurk copied them
            prompt_event[rec["event_prompt"]] = rec["event"]
            for i in slots:
                if rec[f"image_{i}_id"]:
                    info[rec[f"image_{i}_id"]] = (rec[f"image_{i}_url"], rec[f"image_{i}_event"])
        mine = (
            wanted.filter(pl.col("variant") == variant)
            .select(
                (pl.col("video_id") + "_" + pl.col("frame_index").cast(pl.Utf8)).alias("image_id"),
                "event_prompt",
                (pl.col("ratings_planned") // assignments_per_hit).alias("copies"),
            )
            .sort("event_prompt", "image_id")
        )
        rows: list[dict] = []
        for (prompt,), g in mine.group_by(["event_prompt"], maintain_order=True):
            for chunk in hit_groups(dict(g.select("image_id", "copies").iter_rows()), images_per_hit):
                row = {
                    "hit_index": len(rows),
                    "variant": variant,
                    "event": prompt_event.get(prompt, prompt),
                    "event_prompt": prompt,
                }
                for i in range(1, images_per_hit + 1):
                    img = chunk[i - 1] if i <= len(chunk) else ""
                    url, event = info.get(img, ("", ""))
                    row |= {f"image_{i}_id": img, f"image_{i}_url": url, f"image_{i}_event": event}
                rows.append(row)
        out[variant] = pl.DataFrame(rows, schema=hits.schema) if rows else hits.clear()
    return out


def in_dataset(plan: pl.DataFrame, frames: pl.DataFrame) -> pl.DataFrame:
    """A round's plan (schemas.NEXT_ROUND_PLAN) without the images that are no longer in the dataset (a takedown
    removes its video's): what the plan's tables and the before/after comparison show."""
    keep = frames.select("video_id", "frame_index").unique()
    return plan.join(keep, on=["video_id", "frame_index"], how="semi", maintain_order="left")


def merged_rounds(judgments: pl.DataFrame, next_ratings: pl.DataFrame) -> pl.DataFrame:
    """Round 1 with the next round's ratings merged into it (their `round` set to 1: more ratings of the same task)."""
    return pl.concat(
        [judgments.filter(pl.col("round") == 1), next_ratings.with_columns(pl.lit(1, pl.Int64).alias("round"))],
        how="vertical_relaxed",
    )


def interval_change(
    judgments: pl.DataFrame, next_ratings: pl.DataFrame, plan: pl.DataFrame, excluded, intervals, cfg
) -> pl.DataFrame:
    """Per soft label the plan re-rated (ratings_planned > 0), before (the judgments) and after (the next round's
    ratings merged in), the excluded raters left out: kept ratings `n_`,
    the mean and its interval (`mean_<when>_lo`, `_hi`: the published mean_lo, mean_hi), the interval's width
    `interval_width_`, and the target it is held against, with `reached_after` (allocation.at_target under `cfg`,
    the NextRoundConfig: the width from at least min_ratings_per_image kept ratings, as the plan reads it)."""
    from squidflow.judgments.allocation import at_target, soft_label_state

    def side(table: pl.DataFrame, when: str) -> pl.DataFrame:
        return table.select(
            *ITEM,
            pl.col("n").alias(f"n_{when}"),
            pl.col("mean").alias(f"mean_{when}"),
            pl.col("mean_lo").alias(f"mean_{when}_lo"),
            pl.col("mean_hi").alias(f"mean_{when}_hi"),
            pl.col("interval_width").alias(f"interval_width_{when}"),
        )

    rerated = plan.filter(pl.col("ratings_planned") > 0).select(*ITEM, "ratings_planned", "target_width")
    before = side(soft_label_state(judgments, excluded, intervals), "before")
    after = side(soft_label_state(merged_rounds(judgments, next_ratings), excluded, intervals), "after")
    change = rerated.join(before, on=ITEM, how="left", maintain_order="left").join(
        after, on=ITEM, how="left", maintain_order="left"
    )
    width = change["interval_width_after"].fill_null(float("inf")).to_numpy()
    reached = at_target(width, change["n_after"].fill_null(0).to_numpy(), cfg)
    return change.with_columns(pl.Series("reached_after", reached, dtype=pl.Boolean)).sort(ITEM)


def _width(v) -> str:
    return "none" if v is None or not np.isfinite(v) else f"{v:.1f}"


def _against(row: dict) -> str:
    """A re-rated soft label against the target: met, still wider, or narrow from too few kept ratings."""
    if row["reached_after"]:
        return "met"
    width = row["interval_width_after"]
    if width is not None and width <= row["target_width"]:
        return f"too few ratings ({row['n_after']})"
    return f"> {row['target_width']:g}"


def change_markdown(change: pl.DataFrame, *, strategy: str, source: str) -> str:
    """results/tables/next_round.md for the demo's SIMULATED next round: per re-rated soft label the interval
    widths before and after, against the target."""
    from squidflow.contracts.io import md_escape

    sim = " — SIMULATED annotator panel" if "simulated" in source else ""
    med = {
        k: cast(float, change[f"interval_width_{k}"].median()) if len(change) else float("nan")
        for k in ("before", "after")
    }
    target = change["target_width"][0] if len(change) else float("nan")
    lines = [
        f"# The next round of ratings{sim}",
        "",
        f"Strategy: {strategy}, target: an interval of the mean no wider than {target:g} rating points. Re-rated: "
        f"{len(change)} images × prompts × variants, {int(change['ratings_planned'].sum()) if len(change) else 0} "
        f"ratings planned; {int(change['reached_after'].sum()) if len(change) else 0} at the target after. Median "
        f"width of the mean's interval (rating points): before {med['before']:.1f}, after {med['after']:.1f}. The "
        "excluded raters left out (the published soft labels' `mean_lo`, `mean_hi`).",
        "",
        md_row(
            ["image", "prompt", "variant", "planned", "ratings before", "after", "interval before", "after", "target"]
        ),
        md_rule(9),
    ]
    for r in change.to_dicts():
        lines.append(
            md_row(
                [
                    f"{md_escape(r['video_id'])}_{r['frame_index']}",
                    md_escape(r["event_prompt"]),
                    md_escape(r["variant"]),
                    r["ratings_planned"],
                    r["n_before"],
                    r["n_after"],
                    _width(r["interval_width_before"]),
                    _width(r["interval_width_after"]),
                    _against(r),
                ]
            )
        )
    return "\n".join(lines) + "\n"


def waves_markdown(per_item: pl.DataFrame, summary: list[dict], *, strategy: str) -> str:
    """results/tables/next_round.md for the next rounds ingested as waves (squidflow.judgments.waves.narrowing):
    per wave the ratings it added and how the intervals narrowed, then per image, prompt and variant it rated."""
    from squidflow.contracts.io import md_escape
    from squidflow.judgments.waves import summary_line

    lines = [
        "# The next round of ratings",
        "",
        f"Strategy: {strategy}. The next rounds' ratings are ingested as waves of their own (the `wave` column of "
        "results/judgments/judgments.parquet) and the soft labels use every wave; Table 7 stays the first wave's. "
        "Interval: of the mean rating of an image under a prompt in a variant, the excluded raters left out (the "
        "published soft labels' `mean_lo`, `mean_hi`).",
        "",
        *[f"- {md_escape(summary_line(s))}." for s in summary],
        "",
        md_row(["wave", "image", "prompt", "variant", "ratings before", "after", "interval before", "after"]),
        md_rule(8),
    ]

    for r in per_item.to_dicts():
        lines.append(
            md_row(
                [
                    md_escape(r["wave"]),
                    f"{md_escape(r['video_id'])}_{r['frame_index']}",
                    md_escape(r["event_prompt"]),
                    md_escape(r["variant"]),
                    r["n_before"],
                    r["n_after"],
                    _width(r["interval_width_before"]),
                    _width(r["interval_width_after"]),
                ]
            )
        )
    return "\n".join(lines) + "\n"
