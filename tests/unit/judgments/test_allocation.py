"""The next round where it pays (issue 59): ratings by the kept raters' spread, towards a target width."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from squidflow.config.validation import ConfigError
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


def _cfg(
    budget: int, strategy: str = "adaptive", width: float = 2.0, cap: int = 10_000, floor: int = 2
) -> NextRoundConfig:
    return NextRoundConfig(
        budget=budget, strategy=strategy, target_width=width, max_ratings_per_image=cap, min_ratings_per_image=floor
    )


@pytest.mark.parametrize("step", [1, 3])
def test_ratings_follow_the_spread_and_a_clear_image_gets_none(step):
    """A budget that covers nobody's need: Neyman's rule, the totals after the round in proportion to the known
    spread, each within one step of its exact share (largest remainder); the whole budget spent; the image whose
    raters all agree is at the target and gets none."""
    plan = plan_next_round(_pool(SPREADS), [], _cfg(budget=402), INTERVALS, step=step)
    assert plan.columns == list(schemas.NEXT_ROUND_PLAN.columns)
    by = {int(v[1:]): r for v, r in zip(plan["video_id"], plan.iter_rows(named=True), strict=True)}
    assert by[5]["reached"] and by[5]["ratings_planned"] == 0
    assert not plan["unreachable"].any()
    assert plan["ratings_planned"].sum() == 402
    assert all(by[i]["ratings_planned"] % step == 0 for i in range(5))
    gap = np.array([round(SPREADS[i] * np.sqrt(7 / 8)) for i in range(5)])  # the pool: 50 ± gap, four of each
    spread = gap * np.sqrt(8 / 7)  # so the SD (ddof 1) of each image's 8 ratings is known exactly
    np.testing.assert_allclose([by[i]["spread"] for i in range(5)], spread, rtol=1e-12)
    totals = np.array([by[i]["n"] + by[i]["ratings_planned"] for i in range(5)], float)
    exact = (402 + 5 * 8) * spread / spread.sum()  # every rating of the open images, in proportion to the spread
    assert np.abs(totals - exact).max() < step + 0.1, (totals, exact)
    assert (np.diff(totals) > 0).all()  # the wider, the more: strictly in the order of the spread
    ratio = (totals / spread) / (totals / spread).mean()
    assert np.abs(ratio - 1).max() < 0.06, ratio  # ratings per point of spread: the same for every image


def test_an_ample_budget_buys_each_image_what_it_needs_and_no_more():
    plan = plan_next_round(_pool(SPREADS), [], _cfg(budget=100_000, width=10.0), INTERVALS, step=1)
    z = z_value(0.95)
    for r in plan.filter(~pl.col("reached")).iter_rows(named=True):
        need = int(ratings_needed(np.array([r["spread"]]), 10.0, z)[0])
        assert r["ratings_planned"] == max(need - r["n"], 1), r
        assert r["interval_width_planned"] <= 10.0 + 1e-9


def test_a_constant_rater_left_out_does_not_attract_ratings():
    """A rater who says 90 to everything widens every interval; once excluded (the rater triage's `constant`),
    the plan is the one without them, to the rating: the clear image still gets nothing, and the others' shares
    still follow their own spread."""
    with_c = _pool(SPREADS, constant=90)
    kept = plan_next_round(with_c, ["c"], _cfg(budget=400), INTERVALS, step=1)
    clean = plan_next_round(_pool(SPREADS), [], _cfg(budget=400), INTERVALS, step=1)
    same = ["n", "spread", "mean_lo", "mean_hi", "ratings_needed", "ratings_planned", "reached", "unreachable"]
    assert kept.select(same).equals(clean.select(same))
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


def test_uniform_gives_every_image_the_same_until_all_are_at_the_target():
    """The baseline without per-image precision: every soft label not unreachable, the one already at the target
    too, the same extra ratings (the budget's remainder to the fewest rated, then the first rows); one beyond the
    cap gets none; nothing once every soft label is at the target or unreachable."""
    plan = plan_next_round(_pool(SPREADS), [], _cfg(budget=50, strategy="uniform"), INTERVALS, step=1)
    assert plan["ratings_planned"].to_list() == [9, 9, 8, 8, 8, 8]  # v0..v5, v5 at the target included
    assert plan.filter(pl.col("reached"))["video_id"].to_list() == ["v5"]
    in_hits = plan_next_round(_pool(SPREADS), [], _cfg(budget=50, strategy="uniform"), INTERVALS, step=3)
    assert in_hits["ratings_planned"].to_list() == [9, 9, 9, 9, 6, 6]  # 16 HITs of 3 over 6 soft labels
    capped = plan_next_round(_pool(SPREADS, n=20), [], _cfg(60, "uniform", width=10.0, cap=30), INTERVALS, step=1)
    assert capped.filter(pl.col("unreachable"))["video_id"].to_list() == ["v4"]  # SD 20 needs ~61 > 30
    assert capped.filter(pl.col("reached"))["video_id"].to_list() == ["v0", "v1", "v5"]
    assert capped["ratings_planned"].to_list() == [10, 10, 10, 10, 0, 10]  # up to the cap of 30 kept, no further
    done = plan_next_round(_pool({0: 4.0, 5: 0.0}, n=20), [], _cfg(60, "uniform", width=20.0), INTERVALS, step=1)
    assert done["reached"].all() and done["ratings_planned"].sum() == 0


@pytest.mark.parametrize("step", [1, 3])
def test_interval_width_gives_one_more_hit_to_the_budgets_worth_of_widest_at_the_target_or_not(step):
    """Today's strategy, which knows no target: budget / step soft labels, the widest intervals first, one step each;
    the one at the target too once the budget reaches it, but not one that is unreachable; nothing once every soft
    label is at the target or unreachable (the stop every strategy shares)."""
    plan = plan_next_round(_pool(SPREADS), [], _cfg(budget=3 * step, strategy="interval_width"), INTERVALS, step=step)
    assert plan["ratings_planned"].to_list() == [0, 0, step, step, step, 0]  # SD 12, 16, 20: the widest intervals
    ample = plan_next_round(_pool(SPREADS), [], _cfg(budget=50 * step, strategy="interval_width"), INTERVALS, step=step)
    assert ample.filter(pl.col("reached"))["video_id"].to_list() == ["v5"]
    assert ample["ratings_planned"].to_list() == [step] * 6  # v5, at the target, too
    capped = plan_next_round(_pool(SPREADS, n=20), [], _cfg(60, "interval_width", 10.0, cap=30), INTERVALS, step=1)
    assert capped.filter(pl.col("unreachable"))["video_id"].to_list() == ["v4"]
    assert capped["ratings_planned"].to_list() == [1, 1, 1, 1, 0, 1]
    done = plan_next_round(_pool({0: 4.0, 5: 0.0}, n=20), [], _cfg(60, "interval_width", 20.0), INTERVALS, step=1)
    assert done["reached"].all() and done["ratings_planned"].sum() == 0


@pytest.mark.parametrize("strategy", ["adaptive", "uniform", "interval_width"])
def test_a_narrow_interval_from_too_few_ratings_is_not_at_the_target(strategy):
    """Four ratings that agree give a narrow bootstrap interval: below `min_ratings_per_image` kept ratings the soft
    label is not at the target for any strategy, adaptive asks it up to the floor and no further, and from the
    floor on it is at the target and gets nothing."""
    pool = _pool({0: 1.0, 1: 2.0}, n=4)
    short = plan_next_round(pool, [], _cfg(60, strategy, width=15.0, floor=6), INTERVALS, step=1)
    assert (short["interval_width"] < 15).all() and not short["reached"].any() and not short["unreachable"].any()
    assert short["ratings_needed"].to_list() == [6, 6]
    if strategy == "adaptive":
        assert short["ratings_planned"].to_list() == [2, 2]
    assert (short["ratings_planned"] > 0).all()
    enough = plan_next_round(pool, [], _cfg(60, strategy, width=15.0, floor=4), INTERVALS, step=1)
    assert enough["reached"].all() and enough["ratings_planned"].sum() == 0


def test_soft_labels_whose_ratings_all_agree_are_brought_to_the_floor_within_a_tight_budget():
    """Spread 0 under the floor: Neyman's rule by the spread alone would give them nothing, round after round; taken
    at the spread the floor needs, the budget is spent on them."""
    pool = _pool({k: 0.0 for k in range(6)}, n=4)
    plan = plan_next_round(pool, [], _cfg(6, width=15.0, floor=9), INTERVALS, step=1)
    assert not plan["reached"].any() and plan["ratings_planned"].to_list() == [1] * 6


def test_the_floor_lies_within_the_cap():
    with pytest.raises(ConfigError, match="min_ratings_per_image = 61"):
        _cfg(60, cap=60, floor=61)
    assert NextRoundConfig.from_config({"min_ratings_per_image": 9}).min_ratings_per_image == 9


def test_adaptive_settles_an_image_beyond_the_cap_with_the_fewest_ratings_that_tell():
    """SD about 12 at width 4 needs ~137 ratings, beyond a cap of 100. Rather than the whole way to the cap, it gets
    the fewest ratings after which, were its spread to stay as measured, even the lower end of the spread's 95%
    interval (chi-square) would need more than the cap: with those the target is ruled out, one HIT fewer not yet."""
    from scipy.stats import chi2

    cap, width, step = 100, 4.0, 2
    plan = plan_next_round(_pool({0: 12.0}, n=8), [], _cfg(10_000, width=width, cap=cap), INTERVALS, step=step)
    row = plan.row(0, named=True)
    assert row["ratings_needed"] > cap and not row["unreachable"] and not row["reached"]
    got = row["ratings_planned"]
    assert 0 < got < cap - 8 and got % step == 0, got

    def ruled_out(m: int) -> bool:
        low = row["spread"] * np.sqrt((m - 1) / chi2.ppf(0.975, m - 1))
        return bool(ratings_needed(np.array([low]), width, z_value(0.95))[0] > cap)

    assert ruled_out(8 + got) and not ruled_out(8 + got - step)
    assert not ruled_out(8)


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


def test_the_projection_is_the_same_whatever_its_block_of_draws(monkeypatch: pytest.MonkeyPatch):
    """The projection holds soft labels × draws a block at a time (issue 61: 36,000 soft labels × 1,000 draws took
    2 GB at the scale curve's 3,000 videos); its draws are made in one order whatever the block, so blocks of a few
    cells give the numbers of one block of all."""
    from squidflow.judgments import allocation

    cfg = _cfg(budget=200, width=2.0)
    plan = plan_next_round(_pool(SPREADS, n=6), [], cfg, INTERVALS, step=1)
    whole = project(plan, cfg, INTERVALS, step=1)
    monkeypatch.setattr(allocation, "PROJECTION_CELLS", 7)  # blocks of one draw, draws of a few soft labels
    blocked = project(plan, cfg, INTERVALS, step=1)
    assert whole.remaining > 0 and whole.remaining_lo < whole.remaining_hi
    assert (blocked.remaining, blocked.remaining_lo, blocked.remaining_hi) == (
        whole.remaining,
        whole.remaining_lo,
        whole.remaining_hi,
    )
    assert blocked.curve.equals(whole.curve)
