"""The next round where it pays (issue 59): ratings by the kept raters' spread, towards a target width."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from squidflow.config import ConfigError
from squidflow.contracts import schemas
from squidflow.judgments.allocation import NextRoundConfig, plan_next_round, project, ratings_needed, z_value
from squidflow.statistics.intervals import IntervalConfig

INTERVALS = IntervalConfig(level=0.95, resamples=200, seed=0, method="percentile")
SPREADS = {0: 4.0, 1: 8.0, 2: 12.0, 3: 16.0, 4: 20.0, 5: 0.0}  # image -> the SD its kept ratings have


def _pool(spreads: dict[int, float], n: int = 8, constant: int | None = None) -> pl.DataFrame:
    """Per image, n ratings of known SD around 50 (honest raters h0..h{n-1}, each rating every image); with
    `constant`, one more rater `c` who says that number for every image."""
    rows = []
    signs = np.array([1, -1] * (n // 2), dtype=float)  # mean 50, SD (ddof 1) = s sqrt(n / (n - 1))... scaled below
    for img, s in spreads.items():
        values = 50 + signs * s * np.sqrt((n - 1) / n)  # so np.std(ddof=1) == s
        raters = [(f"h{k}", int(round(v))) for k, v in enumerate(values)]
        if constant is not None:
            raters.append(("c", constant))
        for pos, (who, r) in enumerate(raters):
            rows.append(
                {
                    "video_id": f"v{img}",
                    "frame_index": 0,
                    "event_prompt": "parade",
                    "variant": "A",
                    "annotator": who,
                    "position": pos,
                    "hit": f"h{img}",
                    "rating": r,
                    "round": 1,
                    "source": "simulated",
                }
            )
    return pl.DataFrame(rows, schema={c: t for c, t in schemas.JUDGMENTS.columns.items() if c in rows[0]})


def _cfg(budget: int, strategy: str = "adaptive", width: float = 2.0, cap: int = 10_000) -> NextRoundConfig:
    return NextRoundConfig(budget=budget, strategy=strategy, target_width=width, max_ratings_per_image=cap)


def test_ratings_follow_the_spread_and_a_clear_image_gets_none():
    """A budget that covers nobody's need: Neyman's rule, the totals after the round in proportion to the spread
    (within one rating of rounding); the image whose raters all agree is at the target and gets none."""
    plan = plan_next_round(_pool(SPREADS), [], _cfg(budget=400), INTERVALS, step=1)
    assert plan.columns == list(schemas.NEXT_ROUND_PLAN.columns)
    by = {int(v[1:]): r for v, r in zip(plan["video_id"], plan.iter_rows(named=True), strict=True)}
    assert by[5]["reached"] and by[5]["ratings_planned"] == 0
    assert plan["ratings_planned"].sum() == 400
    totals = np.array([by[i]["n"] + by[i]["ratings_planned"] for i in range(5)], float)
    spread = np.array([by[i]["spread"] for i in range(5)])
    expected = 400 + 5 * 8  # every rating of the open images, shared in proportion to the spread
    np.testing.assert_allclose(totals, expected * spread / spread.sum(), atol=1.0)
    assert not plan["unreachable"].any()


def test_an_ample_budget_buys_each_image_what_it_needs_and_no_more():
    plan = plan_next_round(_pool(SPREADS), [], _cfg(budget=100_000, width=10.0), INTERVALS, step=1)
    z = z_value(0.95)
    for r in plan.filter(~pl.col("reached")).iter_rows(named=True):
        need = int(ratings_needed(np.array([r["spread"]]), 10.0, z)[0])
        assert r["ratings_planned"] == max(need - r["n"], 1), r
        assert r["interval_width_planned"] <= 10.0 + 1e-9


def test_a_constant_rater_left_out_does_not_attract_ratings():
    """A rater who says 90 to everything widens every interval; once excluded (the rater triage's `constant`),
    the plan is the one without them: the clear image still gets nothing."""
    with_c = _pool(SPREADS, constant=90)
    kept = plan_next_round(with_c, ["c"], _cfg(budget=400), INTERVALS, step=1)
    clean = plan_next_round(_pool(SPREADS), [], _cfg(budget=400), INTERVALS, step=1)
    assert kept["ratings_planned"].to_list() == clean["ratings_planned"].to_list()
    assert kept.filter(pl.col("video_id") == "v5")["ratings_planned"].item() == 0
    assert (kept["ratings"] == kept["n"] + 1).all()  # the constant rater's ratings were bought all the same
    counted = plan_next_round(with_c, [], _cfg(budget=400), INTERVALS, step=1)
    assert counted.filter(pl.col("video_id") == "v5")["ratings_planned"].item() > 0  # what the exclusion prevents


def test_ratings_come_in_whole_hits_within_the_budget():
    plan = plan_next_round(_pool(SPREADS), [], _cfg(budget=100), INTERVALS, step=3)
    assert (plan["ratings_planned"] % 3 == 0).all()
    assert 97 <= plan["ratings_planned"].sum() <= 100


def test_an_image_beyond_the_cap_is_reported_not_chased():
    """SD 20 needs ~(2·1.96·20/2)^2 = 1,537 ratings for width 2: with 30 at most it is unreachable, gets nothing,
    and its budget goes to the others."""
    plan = plan_next_round(_pool(SPREADS, n=20), [], _cfg(budget=60, cap=30), INTERVALS, step=1)
    row = plan.filter(pl.col("video_id") == "v4").row(0, named=True)
    assert row["unreachable"] and row["ratings_planned"] == 0
    assert plan["ratings_planned"].sum() == plan.filter(~pl.col("unreachable"))["ratings_planned"].sum()


@pytest.mark.parametrize("strategy", ["uniform", "interval_width"])
def test_the_baselines_spend_the_same_budget_their_way(strategy):
    plan = plan_next_round(_pool(SPREADS), [], _cfg(budget=50, strategy=strategy), INTERVALS, step=1)
    open_ = plan.filter(~pl.col("reached"))
    if strategy == "uniform":
        assert open_["ratings_planned"].to_list() == [10] * 5
    else:  # one more rating for each of the widest
        assert open_["ratings_planned"].to_list() == [1] * 5
    assert plan.filter(pl.col("reached"))["ratings_planned"].sum() == 0


def test_activelab_without_scores_says_what_to_set():
    with pytest.raises(ConfigError, match="judgments.triage.predictions"):
        plan_next_round(_pool(SPREADS), [], _cfg(budget=50, strategy="activelab"), INTERVALS, step=1)


def test_the_projection_counts_what_is_spent_and_what_is_left():
    """With 100 ratings each the spreads are well known: the projected ratings still needed are the plan's own needs
    (within 5%), inside their interval; the curve climbs to every soft label at the target."""
    judgments = _pool(SPREADS, n=100)
    cfg = _cfg(budget=200, width=2.0)
    plan = plan_next_round(judgments, [], cfg, INTERVALS, step=1)
    p = project(plan, cfg, INTERVALS, step=1)
    assert p.spent == len(judgments) and p.unreachable == p.beyond_cap == 0
    left = int((plan["ratings_needed"] - plan["n"]).clip(lower_bound=1).filter(~plan["reached"]).sum())
    assert abs(p.remaining - left) <= 0.05 * left, (p.remaining, left)
    assert p.remaining_lo <= left <= p.remaining_hi
    assert p.rounds == -(-p.remaining // 200)
    assert p.curve["at_target"].is_sorted() and p.curve["at_target"][-1] == 1.0
    assert p.curve["at_target"][0] == plan["reached"].mean()
