"""The next round's plan as people read it (issue 59): each soft label's interval against the target, the ratings
planned, the ratings spent so far, and the projected ratings-to-target curve (squidflow.judgments.allocation)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from squidflow.contracts.io import md_escape
from squidflow.judgments.allocation import NextRoundConfig, Projection
from squidflow.presentation.table_format import md_row, md_rule


def status(row: dict) -> str:
    if row["reached"]:
        return "at the target"
    if row["unreachable"]:
        return "unreachable within the cap"
    return "planned" if row["ratings_planned"] else "waits for a later round"


def projection_lines(p: Projection, cfg: NextRoundConfig) -> list[str]:
    """The plan's summary in words (the table's head and the log)."""
    return [
        f"Ratings spent so far: {p.spent:,} on {p.items:,} soft labels (image × prompt × variant).",
        f"At the target (interval of the mean no wider than {cfg.target_width:g} rating points, from at least "
        f"{cfg.min_ratings_per_image} kept ratings): {p.reached:,} of "
        f"{p.items:,}; unreachable within {cfg.max_ratings_per_image} kept ratings: {p.unreachable:,} (reported, "
        f"not chased); {p.beyond_cap:,} more whose spread so far puts the target beyond that cap.",
        f"Still needed until every other one is at the target or the cap: {p.remaining:,} kept ratings "
        f"[{p.remaining_lo:,}, {p.remaining_hi:,}] "
        f"(95% interval: each variance drawn given its kept ratings), {p.rounds} round(s) [{p.rounds_lo}, {p.rounds_hi}] at "
        f"{cfg.budget:,} ratings a round.",
    ]


def plan_markdown(plan: pl.DataFrame, p: Projection, cfg: NextRoundConfig, *, simulated: bool) -> str:
    """results/tables/next_round_plan.md: the summary, then per soft label its interval against the target and the
    ratings planned (the planned ones first, then by width)."""
    planned = int(plan["ratings_planned"].sum())
    lines = [
        "# The next round's plan" + (" — SIMULATED annotator panel" if simulated else ""),
        "",
        f"Strategy: {md_escape(cfg.strategy)}. This round: {planned:,} of a budget of {cfg.budget:,} ratings on "
        f"{int((plan['ratings_planned'] > 0).sum()):,} soft labels.",
        "",
        *[f"- {line}" for line in projection_lines(p, cfg)],
        "",
        md_row(
            [
                "image",
                "prompt",
                "variant",
                "ratings",
                "kept",
                "spread",
                "interval",
                "target",
                "needed",
                "planned",
                "interval after",
                "status",
            ]
        ),  # fmt: skip
        md_rule(12),
    ]

    def num(v, digits: int = 1) -> str:
        return "none" if v is None or not np.isfinite(v) else f"{v:.{digits}f}"

    order = plan.sort(
        [pl.col("ratings_planned") > 0, "interval_width", "video_id", "frame_index", "event_prompt", "variant"],
        descending=[True, True, False, False, False, False],
        nulls_last=False,
    )
    for r in order.to_dicts():
        lines.append(
            md_row(
                [
                    f"{md_escape(r['video_id'])}_{r['frame_index']}",
                    md_escape(r["event_prompt"]),
                    md_escape(r["variant"]),
                    r["ratings"],
                    r["n"],
                    num(r["spread"]),
                    num(r["interval_width"]),
                    f"{r['target_width']:g}",
                    r["ratings_needed"],
                    r["ratings_planned"],
                    num(r["interval_width_planned"]),
                    status(r),
                ]
            )
        )
    return "\n".join(lines) + "\n"


def projection_figure(p: Projection, cfg: NextRoundConfig, path: str | Path, *, note: str = "") -> int:
    """The projected ratings-to-target curve: the share of soft labels at the target against the ratings spent (so
    far, then the kept ratings still needed, cheapest first), with its 95% band, this round's budget marked.
    Returns the panel count (style.save)."""
    from squidflow.presentation import style

    fig, axes = style.figure(1, 1, height=2.6)
    ax = axes[0, 0]
    c = p.curve
    ax.fill_between(c["ratings"], 100 * c["at_target_lo"], 100 * c["at_target_hi"], color=style.SERIES[0], alpha=0.25,
                    linewidth=0, label="95% band")  # fmt: skip
    ax.plot(c["ratings"], 100 * c["at_target"], color=style.SERIES[0], label="projected")
    ax.axvline(p.spent, color="0.4", linestyle=":", linewidth=1)
    ax.annotate("spent so far", (p.spent, 2), fontsize=6, color="0.3")
    ax.axvline(p.spent + cfg.budget, color=style.SERIES[1], linestyle="--", linewidth=1, label="this round's budget")
    ax.set_xlabel("ratings (spent so far + kept ratings still needed)")
    ax.set_ylabel(f"soft labels at the target (%, width ≤ {cfg.target_width:g})")
    ax.set_ylim(0, 100)
    ax.legend(loc="lower right", fontsize=6)
    style.note(fig, note)
    return style.save(
        fig,
        path,
        title="The next round: projected ratings to the target",
        description=f"{p.remaining} kept ratings still needed [{p.remaining_lo}, {p.remaining_hi}]",
    )
