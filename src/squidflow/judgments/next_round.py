"""The next round of ratings (issue #36): which images the next annotation dollar should buy ratings for.

`annotation.next_round: {budget: N, strategy: ...}` picks N images (each image under its prompt) from the image
triage (squidflow.judgments.image_triage):

- `interval_width`: the widest intervals of the mean first (an image with too few ratings for an interval first of
  all) — the images whose next rating shrinks the uncertainty most;
- `activelab`: cleanlab's ActiveLab scores (`cleanlab.multiannotator.get_active_learning_scores`) on the certainty
  bins of the ratings with a model's probabilities (judgments.triage.predictions); lowest score first.

Each chosen image goes back to every variant that rated it, under the same prompt, in HITs of the round-1 format
(`make_hits`' columns: the MTurk batch input CSV, which the Label Studio tasks are made from), so round 2 passes the
same checks as round 1.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import polars as pl

from squidflow.config import ConfigError
from squidflow.contracts.io import unneutralise
from squidflow.table_format import md_row, md_rule

STRATEGIES = ("interval_width", "activelab")
IMAGE = ["video_id", "frame_index", "event_prompt"]


def by_interval_width(images: pl.DataFrame, budget: int) -> pl.DataFrame:
    """The `budget` images and prompts with the widest intervals of the mean (no interval: first)."""
    return (
        images.with_columns(pl.col("interval_width").fill_nan(None).fill_null(float("inf")).alias("_w"))
        .sort(["_w", *IMAGE], descending=[True, False, False, False])
        .head(budget)
        .drop("_w")
    )


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


def round_hits(
    hits_by_variant: dict[str, pl.DataFrame], chosen: pl.DataFrame, judgments: pl.DataFrame, images_per_hit: int
) -> dict[str, pl.DataFrame]:
    """Round-2 HITs per variant: the chosen images under their prompts, in variants that rated them, grouped by prompt
    into HITs of `images_per_hit`, with each image's URL and event copied from its round-1 HIT."""
    wanted = judgments.filter(pl.col("round") == 1).join(
        chosen.select(IMAGE), on=IMAGE, how="semi", maintain_order="left"
    )
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
            .select((pl.col("video_id") + "_" + pl.col("frame_index").cast(pl.Utf8)).alias("image_id"), "event_prompt")
            .unique(maintain_order=True)
            .sort("event_prompt", "image_id")
        )
        rows: list[dict] = []
        for (prompt,), g in mine.group_by(["event_prompt"], maintain_order=True):
            ids = g["image_id"].to_list()
            for k in range(0, len(ids), images_per_hit):
                row = {
                    "hit_index": len(rows),
                    "variant": variant,
                    "event": prompt_event.get(prompt, prompt),
                    "event_prompt": prompt,
                }
                chunk = ids[k : k + images_per_hit]
                for i in range(1, images_per_hit + 1):
                    img = chunk[i - 1] if i <= len(chunk) else ""
                    url, event = info.get(img, ("", ""))
                    row |= {f"image_{i}_id": img, f"image_{i}_url": url, f"image_{i}_event": event}
                rows.append(row)
        out[variant] = pl.DataFrame(rows, schema=hits.schema) if rows else hits.clear()
    return out


def choose_next_round(
    images: pl.DataFrame,
    judgments: pl.DataFrame,
    *,
    budget: int,
    strategy: str,
    probability: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """The next round's images and prompts with their triage row (`judgments`: every round so far, the excluded raters
    left out). The one seam rule next_round calls to choose; round_hits writes the chosen as tasks."""
    if strategy not in STRATEGIES:
        raise ConfigError(f"annotation.next_round.strategy = {strategy!r}: one of {STRATEGIES}")
    if strategy == "interval_width":
        return by_interval_width(images, budget)
    return images.join(by_activelab(judgments, probability, budget), on=IMAGE, how="inner").sort("activelab")


def next_round(
    images: pl.DataFrame,
    judgments: pl.DataFrame,
    hits_by_variant: dict[str, pl.DataFrame],
    *,
    budget: int,
    strategy: str,
    images_per_hit: int,
    probability: pl.DataFrame | None = None,
) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:
    """(the chosen images with their triage row, the next round's HITs per variant)."""
    chosen = choose_next_round(images, judgments, budget=budget, strategy=strategy, probability=probability)
    return chosen, round_hits(hits_by_variant, chosen, judgments, images_per_hit)


def chosen_images(chosen: pl.DataFrame, frames: pl.DataFrame) -> pl.DataFrame:
    """A round's chosen.csv (every cell a string, as written) -> its images and prompts that are still in the dataset
    (a takedown removes its video's)."""
    out = chosen.select(
        pl.col("video_id").map_elements(unneutralise, return_dtype=pl.Utf8),
        pl.col("frame_index").cast(pl.Int64),
        pl.col("event_prompt").map_elements(unneutralise, return_dtype=pl.Utf8),
    )
    keep = frames.select("video_id", "frame_index").unique()
    return out.join(keep, on=["video_id", "frame_index"], how="semi", maintain_order="left")


def merged_rounds(judgments: pl.DataFrame, next_ratings: pl.DataFrame) -> pl.DataFrame:
    """Round 1 with the next round's ratings merged into it (their `round` set to 1: more ratings of the same task)."""
    return pl.concat(
        [judgments.filter(pl.col("round") == 1), next_ratings.with_columns(pl.lit(1, pl.Int64).alias("round"))],
        how="vertical_relaxed",
    )


def interval_change(
    judgments: pl.DataFrame, next_ratings: pl.DataFrame, chosen: pl.DataFrame, triage: pl.DataFrame, cfg, intervals
) -> pl.DataFrame:
    """Per re-rated image and prompt, before (round 1) and after (merged): ratings, the mean with its interval
    (`mean_before`, `mean_before_lo`, `mean_before_hi`, likewise `_after`), the interval's width and the class."""
    from squidflow.judgments.image_triage import image_triage

    def side(table: pl.DataFrame, when: str) -> pl.DataFrame:
        return table.select(
            *IMAGE,
            pl.col("n").alias(f"n_{when}"),
            pl.col("mean").alias(f"mean_{when}"),
            pl.col("mean_lo").alias(f"mean_{when}_lo"),
            pl.col("mean_hi").alias(f"mean_{when}_hi"),
            pl.col("interval_width").alias(f"interval_width_{when}"),
            pl.col("triage").alias(f"triage_{when}"),
        )

    before = image_triage(judgments, triage, cfg, intervals=intervals).join(
        chosen.select(IMAGE), on=IMAGE, how="semi", maintain_order="left"
    )
    after = image_triage(merged_rounds(judgments, next_ratings), triage, cfg, intervals=intervals)
    return side(before, "before").join(side(after, "after"), on=IMAGE, how="left", maintain_order="left").sort(IMAGE)


def change_markdown(change: pl.DataFrame, *, strategy: str, source: str) -> str:
    from squidflow.contracts.io import md_escape

    sim = " — SIMULATED annotator panel" if "simulated" in source else ""
    med = {
        k: cast(float, change[f"interval_width_{k}"].median()) if len(change) else float("nan")
        for k in ("before", "after")
    }
    lines = [
        f"# The next round of ratings{sim}",
        "",
        f"Strategy: {strategy}. Re-rated: {len(change)} images × prompts. Median width of the mean's interval "
        f"(rating points): before {med['before']:.1f}, after {med['after']:.1f}.",
        "",
        md_row(["image", "prompt", "ratings before", "after", "interval before", "after", "class before", "after"]),
        md_rule(8),
    ]
    for r in change.to_dicts():
        lines.append(
            md_row(
                [
                    f"{md_escape(r['video_id'])}_{r['frame_index']}",
                    md_escape(r["event_prompt"]),
                    r["n_before"],
                    r["n_after"],
                    f"{r['interval_width_before']:.1f}",
                    f"{r['interval_width_after']:.1f}",
                    r["triage_before"],
                    r["triage_after"],
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

    def width(v) -> str:
        return "none" if v is None or not np.isfinite(v) else f"{v:.1f}"

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
                    width(r["interval_width_before"]),
                    width(r["interval_width_after"]),
                ]
            )
        )
    return "\n".join(lines) + "\n"
