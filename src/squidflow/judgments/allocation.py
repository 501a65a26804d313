"""The next round where it pays (issue 59): how many ratings each soft label gets, towards a target precision.

A soft label (image, prompt, variant) is known to within the interval of its mean rating, the published `mean_lo`,
`mean_hi` (squidflow.statistics.intervals.item_mean_intervals: a percentile bootstrap over its kept ratings, the
excluded raters left out). With n kept ratings of spread s (their SD) that interval is about 2 z s sqrt(n - 1) / n
wide (z = 1.96 at the 95% level; `interval_width`), about 2 z s / sqrt(n), so the target width w
(`annotation.next_round.target.interval_width`) needs

    n >= (N + sqrt(N^2 - 4 N)) / 2,  N = (2 z s / w)^2  (about N - 1)       (`ratings_needed`)

ratings: in proportion to the image's variance. A clear image is pinned down by a few ratings, an ambiguous one
needs many more. For a fixed number of ratings the total variance of the means, sum s_i^2 / n_i, is smallest with
n_i in proportion to s_i: Neyman's optimum allocation (Neyman 1934, "On the two different aspects of the
representative method", JRSS 97(4); Cochran 1977, "Sampling Techniques", §5.5). The spreads are not known in
advance: each round estimates them again from the ratings so far, the excluded raters left out (a sequential
allocation). Strategies (`annotation.next_round.strategy`), each spending at most `budget` ratings a round:

- `adaptive` (the default): every soft label not at the target gets, at once, the ratings its spread so far says it
  still needs; one whose need lies beyond the cap gets the fewest ratings after which, were its spread to stay as
  measured, it would be found unreachable (below), not the whole way to the cap. When the budget does not cover
  them all it goes by Neyman's rule, the totals after the round in proportion to the spread (water-filling: none
  below what it has, none beyond what it was to get), a spread taken as at least the one whose need is the floor
  below (else soft labels whose few ratings all agree, spread 0, would wait for ever under the floor). It stops
  each soft label at the target.
- `uniform` (the baseline: a study without per-image precision): every soft label that is not unreachable, at the
  target or not, the same extra ratings a round (the budget's remainder to those with the fewest ratings), round
  after round, until every soft label is at the target or unreachable. So its ratings to the target are what the
  hardest soft label within the cap needs, times the number of soft labels.
- `interval_width`, `activelab`: the two strategies squidflow had before the target, kept for comparison as the
  issue describes them: target-agnostic. Each round they give one step (a HIT's assignments) more to a fixed number
  of soft labels, the budget divided by the step, by their own ranking (the widest interval of the mean first;
  cleanlab's ActiveLab's lowest score first, squidflow.judgments.next_round.by_activelab) among those not
  unreachable, at the target or not. ActiveLab is built to get one label right, not a distribution to a precision.

Every strategy reads the same state (`at_target`): a soft label is `reached` once its interval meets the target
from at least `min_ratings_per_image` kept ratings (a bootstrap interval from three ratings that happen to agree is
narrow whether or not the soft label is known), and `adaptive` plans every soft label up to that floor at least. One
that cannot reach the target within `max_ratings_per_image` is `unreachable` (at the cap, or even the lower end of
its spread's interval, chi-square with n - 1 degrees of freedom at `intervals.level`, needs more than the cap):
reported, not chased, by any strategy. No strategy plans a rating once every soft label is at the target or
unreachable. A soft label with fewer than two kept ratings has no interval and no spread: it is planned with the
median spread of the others. Ratings come in steps of `annotation.assignments_per_hit` (each HIT is rated by that
many people), so a plan is a multiple of it.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import polars as pl

from squidflow.config.validation import ConfigError, defaults_from_schema, schema_key
from squidflow.contracts import schemas
from squidflow.statistics.intervals import IntervalConfig, item_mean_intervals

STRATEGIES = tuple(schema_key("annotation.next_round.strategy")["enum"])
ITEM = ["video_id", "frame_index", "event_prompt", "variant"]  # a soft label's unit: image, prompt, variant
IMAGE = ["video_id", "frame_index", "event_prompt"]


@dataclass(frozen=True)
@defaults_from_schema("annotation.next_round", target_width="annotation.next_round.target.interval_width")
class NextRoundConfig:
    """`annotation.next_round`: `budget` (ratings a round), `strategy`, `target_width` (its `target.interval_width`),
    `max_ratings_per_image`, `min_ratings_per_image` (the kept ratings before an interval may count as at the
    target)."""

    budget: int
    strategy: str
    target_width: float
    max_ratings_per_image: int
    min_ratings_per_image: int

    def __post_init__(self):
        if self.strategy not in STRATEGIES:
            raise ConfigError(f"annotation.next_round.strategy = {self.strategy!r}: one of {STRATEGIES}")
        if not self.target_width > 0:
            raise ConfigError(
                f"annotation.next_round.target.interval_width = {self.target_width}: must be above 0 rating points"
            )
        if not 2 <= self.min_ratings_per_image <= self.max_ratings_per_image:
            raise ConfigError(
                f"annotation.next_round.min_ratings_per_image = {self.min_ratings_per_image}: from 2 to "
                f"max_ratings_per_image ({self.max_ratings_per_image})"
            )

    @classmethod
    def from_config(cls, section: Mapping) -> NextRoundConfig:
        """From the `annotation.next_round` mapping (the schema's defaults for the keys it leaves out)."""
        target = dict(section.get("target") or {})
        base = cls.__dataclass_fields__
        return cls(
            budget=int(section.get("budget", base["budget"].default)),
            strategy=str(section.get("strategy", base["strategy"].default)),
            target_width=float(target.get("interval_width", base["target_width"].default)),
            max_ratings_per_image=int(section.get("max_ratings_per_image", base["max_ratings_per_image"].default)),
            min_ratings_per_image=int(section.get("min_ratings_per_image", base["min_ratings_per_image"].default)),
        )


def z_value(level: float) -> float:
    """The normal quantile of a two-sided interval at `level` (1.96 at 0.95)."""
    return NormalDist().inv_cdf((1 + level) / 2)


def ratings_needed(spread: np.ndarray, target_width: float, z: float) -> np.ndarray:
    """Kept ratings for an interval of the mean no wider than `target_width`: the fewest n (at least 2) with
    interval_width(s, n) <= w, that is n >= (N + sqrt(N^2 - 4 N)) / 2 with N = (2 z s / w)^2 (about N - 1)."""
    big = (2 * z * np.asarray(spread, dtype=float) / target_width) ** 2
    with np.errstate(invalid="ignore"):
        n = (big + np.sqrt(np.maximum(big * big - 4 * big, 0))) / 2
    return np.maximum(np.ceil(np.where(big < 4, 2, n) - 1e-9), 2).astype(np.int64)


def interval_width(spread: np.ndarray, n: np.ndarray, z: float) -> np.ndarray:
    """The width of the published interval of the mean (a percentile bootstrap over the n kept ratings, whose SD as
    the bootstrap draws them is s sqrt((n - 1) / n)) at spread s (ddof 1): about 2 z s sqrt(n - 1) / n."""
    m = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 2 * z * np.asarray(spread, dtype=float) * np.sqrt(np.maximum(m - 1, 0)) / m


def soft_label_ratings(judgments: pl.DataFrame, excluded: Iterable[str] = ()) -> pl.DataFrame:
    """Per soft label (image, prompt, variant): `ratings` (how many were bought: round 1, every wave, excluded raters'
    included) and `kept` (the list of the ratings the soft label averages: excluded raters left out)."""
    out = list(excluded)
    j = judgments.filter(pl.col("round") == 1).sort("hit", "position", maintain_order=True)
    return (
        j.group_by(ITEM, maintain_order=True)
        .agg(
            pl.len().cast(pl.Int64).alias("ratings"),
            pl.col("rating").filter(~pl.col("annotator").is_in(out)).alias("kept"),
        )
        .sort(ITEM)
    )


def soft_label_state(judgments: pl.DataFrame, excluded: Iterable[str], intervals: IntervalConfig) -> pl.DataFrame:
    """Per soft label: ratings, kept (list), n, mean, spread (ddof 1), the interval of the mean (`mean_lo`, `mean_hi`:
    the published one, item_mean_intervals over the kept ratings) and its width (null with fewer than 2)."""
    items = soft_label_ratings(judgments, excluded)
    lo, hi = item_mean_intervals(items["kept"].to_list(), intervals)
    kept = pl.col("kept")
    return items.with_columns(
        kept.list.len().cast(pl.Int64).alias("n"),
        kept.list.mean().cast(pl.Float64).alias("mean"),
        pl.Series("mean_lo", np.asarray(lo, dtype=float)).fill_nan(None),
        pl.Series("mean_hi", np.asarray(hi, dtype=float)).fill_nan(None),
        pl.when(kept.list.len() > 1).then(kept.list.std(ddof=1)).cast(pl.Float64).alias("spread"),
        pl.Series("interval_width", np.asarray(hi, dtype=float) - np.asarray(lo, dtype=float)).fill_nan(None),
    )


def at_target(width: np.ndarray, n: np.ndarray, cfg: NextRoundConfig) -> np.ndarray:
    """Whether each soft label counts as at the target, for every strategy: its interval of the mean no wider than
    the target, from at least `min_ratings_per_image` kept ratings (a bootstrap interval from 3 ratings that agree
    is narrow whether or not the soft label is known: it cannot show the spread that 3 ratings did not draw)."""
    w = np.asarray(width, dtype=float)
    return np.isfinite(w) & (w <= cfg.target_width + 1e-9) & (np.asarray(n) >= cfg.min_ratings_per_image)


def _spread_low(spread: np.ndarray, n: np.ndarray, level: float) -> np.ndarray:
    """The lower end of each SD's interval (chi-square, n - 1 degrees of freedom): s sqrt((n - 1) / chi2_hi)."""
    from scipy.stats import chi2

    df = np.maximum(n - 1, 1)
    return spread * np.sqrt(df / chi2.ppf((1 + level) / 2, df))


def _neyman(spread: np.ndarray, n: np.ndarray, room: np.ndarray, total: float) -> np.ndarray:
    """Real-valued extra ratings a_i in [0, room_i], sum = total, with n_i + a_i in proportion to spread_i where
    neither bound binds (water-filling on the constant c of n_i + a_i = c s_i)."""

    def spent(c: float) -> float:
        return float(np.clip(c * spread - n, 0, room).sum())

    lo, hi = 0.0, 1.0
    while spent(hi) < total and hi < 1e12:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if spent(mid) < total else (lo, mid)
    return np.clip(hi * spread - n, 0, room)


def _in_steps(real: np.ndarray, room: np.ndarray, slots: int, step: int) -> np.ndarray:
    """Real-valued ratings -> multiples of `step` (largest remainder), at most `slots` steps in all, within room."""
    want = real / step
    whole = np.minimum(np.floor(want + 1e-9), room // step).astype(np.int64)
    left = slots - int(whole.sum())
    if left > 0:
        frac = np.where(whole < room // step, want - whole, -1.0)
        for i in np.argsort(-frac, kind="stable")[:left]:
            if frac[i] > 1e-9:
                whole[i] += 1
    return whole * step


def _level(ratings: np.ndarray, room: np.ndarray, slots: int, step: int) -> np.ndarray:
    """`uniform`'s round: at most `slots` steps, one at a time to the soft label with the fewest ratings so far (then
    the first row), within `room`: every soft label the same extra ratings, the budget's remainder to the fewest."""
    steps = np.zeros(len(ratings), dtype=np.int64)
    heap = [(int(r), i) for i, r in enumerate(ratings) if room[i] >= step]
    heapq.heapify(heap)
    for _ in range(slots):
        if not heap:
            break
        r, i = heapq.heappop(heap)
        steps[i] += 1
        if (steps[i] + 1) * step <= room[i]:
            heapq.heappush(heap, (r + step, i))
    return steps * step


def _to_verdict(
    spread: np.ndarray, n: np.ndarray, room: np.ndarray, cap: int, w: float, z: float, level: float, step: int
) -> np.ndarray:
    """Per soft label whose need lies beyond the cap: the fewest extra ratings (whole steps, within `room`) after
    which, were its spread to stay as measured, even the lower end of the spread's interval needs more than the cap
    (the `unreachable` verdict); `room` where no number within the cap would tell. The verdict only grows more
    certain with more ratings, so each is found by bisection on the number of steps."""

    def told(k: np.ndarray) -> np.ndarray:
        return ratings_needed(_spread_low(spread, n + k * step, level), w, z) > cap

    top = room // step
    lo, hi = np.zeros_like(top), top.copy()  # not told at lo (else it were unreachable now); hi: told, if ever
    while (hi - lo > 1).any():
        mid = (lo + hi) // 2
        yes = told(mid)
        hi, lo = np.where(yes, mid, hi), np.where(yes, lo, mid)
    return np.where(told(top), hi * step, room)


def allocate(
    state: pl.DataFrame,
    cfg: NextRoundConfig,
    *,
    level: float,
    step: int,
    rank: np.ndarray | None = None,
) -> pl.DataFrame:
    """The plan (schemas.NEXT_ROUND_PLAN) from soft_label_state's frame: per soft label whether it is at the target
    or unreachable, the ratings it needs, and this round's ratings by `cfg.strategy` (module docstring), in multiples
    of `step` (annotation.assignments_per_hit), at most `cfg.budget` in all. `rank`: one score per row for
    `activelab` (lowest first; NaN last)."""
    z = z_value(level)
    w, cap = cfg.target_width, cfg.max_ratings_per_image
    n = state["n"].to_numpy().astype(np.int64)
    width = state["interval_width"].fill_null(np.nan).to_numpy().astype(float)
    spread = state["spread"].fill_null(np.nan).to_numpy().astype(float)
    known = np.isfinite(spread)
    prior = float(np.median(spread[known])) if known.any() else 50.0  # the widest SD a 0-100 rating allows
    s = np.where(known, spread, prior)
    needed = np.maximum(ratings_needed(s, w, z), cfg.min_ratings_per_image)
    reached = at_target(width, n, cfg)
    room = np.maximum((cap - n) // step * step, 0)
    confident = known & (ratings_needed(_spread_low(np.where(known, spread, 0), n, level), w, z) > cap)
    unreachable = ~reached & ((room == 0) | confident)
    open_ = ~reached & ~unreachable
    slots = cfg.budget // step
    planned = np.zeros(len(n), dtype=np.int64)
    idx = np.flatnonzero(open_)
    if len(idx) and slots:
        if cfg.strategy == "adaptive":
            still = np.minimum(np.maximum(needed[idx] - n[idx], 1), room[idx])
            still = np.minimum(-(-still // step) * step, room[idx])  # up to whole steps, within the cap
            beyond = needed[idx] > cap  # the spread so far puts the target beyond the cap: settle that first
            b = idx[beyond]
            still[beyond] = _to_verdict(s[b], n[b], room[b], cap, w, z, level, step)
            if still.sum() <= slots * step:
                planned[idx] = still
            else:
                floor_spread = w * math.sqrt(cfg.min_ratings_per_image) / (2 * z)  # the spread the floor needs
                real = _neyman(np.maximum(s[idx], floor_spread), n[idx], still, slots * step)
                planned[idx] = _in_steps(real, still, slots, step)
        elif cfg.strategy == "uniform":
            pool = np.flatnonzero(~unreachable)  # at the target or not: a design without per-image precision
            planned[pool] = _level(state["ratings"].to_numpy().astype(np.int64)[pool], room[pool], slots, step)
        else:  # today's strategies know no target: their own ranking, at the target or not
            pool = np.flatnonzero(~unreachable & (room >= step))
            if cfg.strategy == "interval_width":
                key = -np.nan_to_num(width[pool], nan=np.inf)  # the widest first, no interval before them
            elif rank is None:
                raise ConfigError("annotation.next_round.strategy activelab: no ActiveLab scores were given")
            else:
                key = np.nan_to_num(np.asarray(rank, dtype=float)[pool], nan=np.inf)
            planned[pool[np.lexsort((pool, key))[:slots]]] = step
    with np.errstate(divide="ignore", invalid="ignore"):
        after = np.where(planned > 0, interval_width(s, n + planned, z), width)
    return state.select(*ITEM, "ratings", "n", "mean", "mean_lo", "mean_hi", "spread", "interval_width").with_columns(
        pl.lit(float(w)).alias("target_width"),
        pl.Series("ratings_needed", np.minimum(needed, np.iinfo(np.int64).max), dtype=pl.Int64),
        pl.Series("ratings_planned", planned, dtype=pl.Int64),
        pl.Series("interval_width_planned", after).fill_nan(None),
        pl.Series("reached", reached),
        pl.Series("unreachable", unreachable),
    )


def plan_next_round(
    judgments: pl.DataFrame,
    excluded: Iterable[str],
    cfg: NextRoundConfig,
    intervals: IntervalConfig,
    *,
    step: int,
    activelab: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """THE CHOICE of the next round: judgments as they are (schemas.JUDGMENTS, every wave), the raters the soft
    labels leave out (`excluded`), the config -> per soft label (image, prompt, variant) the ratings planned and
    where it stands against the target (schemas.NEXT_ROUND_PLAN). `step`: annotation.assignments_per_hit.
    `activelab` (strategy activelab): video_id, frame_index, event_prompt, activelab (next_round.by_activelab)."""
    state = soft_label_state(judgments, excluded, intervals)
    rank = None
    if cfg.strategy == "activelab":
        if activelab is None:
            raise ConfigError(
                "annotation.next_round.strategy activelab needs a model's probabilities: set "
                "judgments.triage.predictions (zero_shot or a predictions file), or use adaptive"
            )
        scored = state.select(IMAGE).join(
            activelab.select(*IMAGE, "activelab"), on=IMAGE, how="left", maintain_order="left"
        )
        rank = scored["activelab"].fill_null(np.nan).to_numpy().astype(float)
    plan = allocate(state, cfg, level=intervals.level, step=step, rank=rank)
    return plan.select(list(schemas.NEXT_ROUND_PLAN.columns))


@dataclass(frozen=True)
class Projection:
    """What the target still costs: ratings spent so far, the kept ratings still needed (point and interval) and
    the rounds at `budget` a round, with the curve of the share of soft labels at the target against ratings."""

    spent: int
    items: int
    reached: int
    unreachable: int
    beyond_cap: int  # not (yet) unreachable, but the spread so far puts the target beyond the cap
    remaining: int
    remaining_lo: int
    remaining_hi: int
    rounds: int
    rounds_lo: int
    rounds_hi: int
    curve: pl.DataFrame  # ratings (spent so far + more), at_target (share), at_target_lo, at_target_hi


def _still(needed: np.ndarray, n: np.ndarray, room: np.ndarray, step: int) -> tuple[np.ndarray, np.ndarray]:
    """(kept ratings still to buy: to the target, or to the cap where the target lies beyond it, in whole steps;
    whether the target is within the cap)."""
    still = np.minimum(np.maximum(needed - n, step), room)
    return np.minimum(-(-still // step) * step, room), needed <= n + room


PROJECTION_CELLS = 2**22  # soft labels × draws per block of the projection (32 MB of int64 per array)


def _drawn_needs(plan: pl.DataFrame, needed: np.ndarray, n: np.ndarray, open_: np.ndarray, w: float, z: float,
                 most: int, intervals: IntervalConfig) -> np.ndarray:  # fmt: skip
    """Each soft label's need under each of intervals.resamples draws of its variance ((n - 1) s^2 / chi2(n - 1),
    seed intervals.seed), soft labels × draws as int32 (its need as measured where it is closed or its spread
    unknown). The draws are made a block of soft labels at a time, in the order one draw of the whole matrix makes
    them, so the numbers do not depend on the block size."""
    from scipy.stats import chi2

    spread = plan["spread"].fill_null(np.nan).to_numpy().astype(float)
    known = np.flatnonzero(open_ & np.isfinite(spread) & (n > 1))
    need_b = np.repeat(np.minimum(needed, np.iinfo(np.int32).max).astype(np.int32)[:, None], intervals.resamples, 1)
    rng = np.random.default_rng([intervals.seed, 59])
    rows = max(1, PROJECTION_CELLS // max(intervals.resamples, 1))
    for start in range(0, len(known), rows):
        at = known[start : start + rows]
        df = (n[at] - 1)[:, None]
        draws = chi2.rvs(df, size=(len(at), intervals.resamples), random_state=rng)
        sigma = np.sqrt(df * spread[at][:, None] ** 2 / np.maximum(draws, 1e-12))
        need_b[at] = np.minimum(ratings_needed(sigma, w, z), most)
    return need_b


def project(
    plan: pl.DataFrame,
    cfg: NextRoundConfig,
    intervals: IntervalConfig,
    *,
    step: int,
    points: int = 60,
) -> Projection:
    """The projection of the kept ratings and rounds still needed until every soft label of `plan` not at the target
    nor unreachable is at the target (or at the cap, where its target lies beyond it), with its interval: each soft
    label's variance drawn intervals.resamples times (seed intervals.seed) from its distribution given its n kept
    ratings of spread s under the normal model, (n - 1) s^2 / chi2(n - 1), and its need recomputed. Rounds: at
    `cfg.budget` a round. The projection is the draws' median (a spread from a few ratings is below the SD more often
    than not, so the need from the spread as measured is low); the curve: the share of soft labels at the target
    against the ratings spent, the cheapest first, its median and band over the same draws."""
    z = z_value(intervals.level)
    w, cap = cfg.target_width, cfg.max_ratings_per_image
    n = plan["n"].to_numpy().astype(np.int64)
    open_ = ~plan["reached"].to_numpy() & ~plan["unreachable"].to_numpy()
    room = np.maximum((cap - n) // step * step, 0)
    needed = plan["ratings_needed"].to_numpy().astype(np.int64)
    beyond = open_ & (needed > n + room)
    need_b = _drawn_needs(plan, needed, n, open_, w, z, 10 * cap, intervals)
    spent = int(plan["ratings"].sum())
    reached = int(plan["reached"].sum())
    budget = max(cfg.budget, 1)
    # the soft labels × draws arrays a block of draws at a time, twice (36,000 soft labels × 1,000 draws: 288 MB each)
    width = max(1, PROJECTION_CELLS // max(len(plan), 1))

    def blocks() -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for b in range(0, need_b.shape[1], width):
            yield _still(need_b[:, b : b + width].astype(np.int64), n[:, None], room[:, None], step)

    totals = np.concatenate([np.where(open_[:, None], still, 0).sum(axis=0) for still, _ in blocks()])
    lo, mid, hi = np.quantile(totals, [(1 - intervals.level) / 2, 0.5, (1 + intervals.level) / 2])
    rem = int(round(mid))  # the median of the draws: s from a few ratings is below the SD more often than not
    grid = spent + np.linspace(0, max(float(totals.max()), float(rem), 1.0), points)

    def share(costs: np.ndarray) -> np.ndarray:
        c = np.sort(costs[costs > 0])
        got = np.searchsorted(spent + np.cumsum(c), grid, side="right")
        return (reached + got) / max(len(plan), 1)

    curves = np.stack([share(np.where(open_ & reach[:, b], still[:, b], 0)) for still, reach in blocks()
                       for b in range(still.shape[1])])  # fmt: skip
    qlo, qmid, qhi = np.quantile(curves, [(1 - intervals.level) / 2, 0.5, (1 + intervals.level) / 2], axis=0)
    curve = pl.DataFrame(
        {
            "ratings": grid,
            "at_target": qmid,
            "at_target_lo": qlo,
            "at_target_hi": qhi,
        }
    )
    return Projection(
        spent=spent,
        items=len(plan),
        reached=reached,
        unreachable=int(plan["unreachable"].sum()),
        beyond_cap=int(beyond.sum()),
        remaining=rem,
        remaining_lo=int(math.floor(lo)),
        remaining_hi=int(math.ceil(hi)),
        rounds=math.ceil(rem / budget),
        rounds_lo=math.ceil(lo / budget),
        rounds_hi=math.ceil(hi / budget),
        curve=curve,
    )
