"""A simulated annotator panel for the offline demo — everything it makes is labelled SIMULATED.

Real judgments need MTurk. So that the demo runs the very same path (task design → MTurk batch results → ingestion →
quality → aggregation → agreement), simulated annotators "see" each image through the demo's ground truth: the
evidence (0..1) that the frame shows the prompted event (schemas.TRUTH). Annotator a rates

    rating = clip(round(50 + scale_a * (100 * evidence - 50) + bias_a + noise * z), 0, 100)

with their own bias (~N(0, bias_sd)) and scale (~logN(0, scale_log_sd)) and fresh noise z ~ N(0, 1) per judgment.
Careful annotators rate a frame that shows nothing (black, or so dark that no event has `visible_min` evidence)
0-3, as the instructions ask; `careless` annotators per variant rate at
random (the quality checks should catch them). No annotator works on both variants (SQUID-E §3.2).

The noise is calibrated on variant A so that the mean of the panel's Krippendorff's α and Spearman equals the mean
of the release's (.658 and .676, Table 7): both fall as noise grows, so a bisection over the noise level, with the
random draws held fixed, finds it. α is more sensitive than Spearman to a few extreme items (black frames), so the
two cannot both be hit exactly by one noise level; aiming at their mean keeps both close (a test checks ±0.05).

A repeat round (SQUID-E §4.2) has the most active annotators rate some of their HITs again, with fresh noise.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import polars as pl

from squidflow.io import unneutralise
from squidflow.judgments.agreement import krippendorff_alpha_interval, spearman_pairs

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PanelConfig:
    annotators_per_variant: int = 8
    assignments_per_hit: int = 3
    bias_sd: float = 6.0
    scale_log_sd: float = 0.15
    noise_sd: float | None = None  # None: calibrate to target_alpha
    target_alpha: float = 0.658
    target_spearman: float = 0.676
    visible_min: float = 0.15  # below this evidence of every event, a frame shows nothing (black, nearly black)
    careless: int = 0
    repeat_annotators: int = 2
    repeat_hits: int = 4
    seed: int = 0

    @classmethod
    def from_config(cls, cfg: dict | None, assignments_per_hit: int) -> PanelConfig:
        return cls(**{"assignments_per_hit": assignments_per_hit, **(cfg or {})})


def truth_lookup(truth: pl.DataFrame) -> dict[str, tuple[str, dict[str, float]]]:
    """image id -> (condition, {event: evidence})."""
    out = {}
    for vid, fi, cond, ev in truth.select("video_id", "frame_index", "condition", "evidence").iter_rows():
        out[f"{vid}_{fi}"] = (cond, {e["event"]: float(e["weight"]) for e in (ev or [])})
    return out


@dataclass
class _Draws:
    """Everything random about one panel, drawn once so calibration changes nothing but the noise level."""

    workers: list[list[int]]  # per HIT, the annotators of its assignments in order
    bias: np.ndarray
    scale: np.ndarray
    z: np.ndarray  # per HIT, assignment, slot
    black: np.ndarray  # per HIT, assignment, slot: a careful rating of a black frame
    random: np.ndarray  # per HIT, assignment, slot: a careless annotator's rating


def _draw(n_hits: int, n_slots: int, cfg: PanelConfig, rng: np.random.Generator) -> _Draws:
    n_ann = cfg.annotators_per_variant
    if cfg.assignments_per_hit > n_ann:
        raise ValueError(f"panel: {cfg.assignments_per_hit} assignments per HIT need at least as many annotators (have {n_ann})")
    weights = 1.0 / np.arange(1, n_ann + 1) ** 0.7  # a few annotators do most HITs, as on MTurk
    weights /= weights.sum()
    workers = [list(rng.choice(n_ann, size=cfg.assignments_per_hit, replace=False, p=weights)) for _ in range(n_hits)]
    shape = (n_hits, cfg.assignments_per_hit, n_slots)
    return _Draws(
        workers=workers,
        bias=rng.normal(0, cfg.bias_sd, n_ann),
        scale=np.exp(rng.normal(0, cfg.scale_log_sd, n_ann)),
        z=rng.standard_normal(shape),
        black=rng.integers(0, 4, shape),
        random=rng.integers(0, 101, shape),
    )


def _rate(evidence: np.ndarray, black: np.ndarray, d: _Draws, noise: float, careless: set[int]) -> np.ndarray:
    """Ratings per HIT, assignment, slot (NaN where a slot has no image)."""
    w = np.asarray(d.workers)  # hits × assignments
    latent = 50 + d.scale[w][..., None] * (100 * evidence[:, None, :] - 50) + d.bias[w][..., None] + noise * d.z
    r = np.clip(np.rint(latent), 0, 100)
    r = np.where(black[:, None, :], d.black, r)
    if careless:
        r = np.where(np.isin(w, list(careless))[..., None], d.random, r)
    return np.where(np.isnan(evidence)[:, None, :], np.nan, r)


def _agreement(ratings: np.ndarray) -> tuple[float, float]:
    """(α, Spearman) over items (HIT, slot) × positions, as Table 7 computes them."""
    m = ratings.transpose(0, 2, 1).reshape(-1, ratings.shape[1])
    m = m[~np.isnan(m).all(axis=1)]
    return krippendorff_alpha_interval(m), spearman_pairs(m)


def calibrate_noise(evidence, black, d: _Draws, target: float, careless: set[int]) -> float:
    """The noise level at which the mean of α and Spearman equals `target` (both fall as noise grows)."""

    def score(noise: float) -> float:
        return float(np.mean(_agreement(_rate(evidence, black, d, noise, careless))))

    lo, hi = 0.0, 200.0
    if score(lo) <= target:
        return lo
    for _ in range(30):
        mid = (lo + hi) / 2
        if score(mid) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _evidence(hits: pl.DataFrame, slots: list[int], truth: dict, visible_min: float) -> tuple[np.ndarray, np.ndarray]:
    ev = np.full((len(hits), len(slots)), np.nan)
    black = np.zeros((len(hits), len(slots)), dtype=bool)
    for h, rec in enumerate(hits.iter_rows(named=True)):
        event = unneutralise(rec["event"])
        for k, i in enumerate(slots):
            img = unneutralise(rec[f"image_{i}_id"] or "")
            if not img:
                continue
            if img not in truth:
                raise KeyError(f"panel: image {img} of HIT {rec['hit_index']} has no row in truth.parquet")
            cond, weights = truth[img]
            ev[h, k] = weights.get(event, 0.0)
            black[h, k] = cond == "black" or max(weights.values(), default=0.0) < visible_min
    return ev, black


def _batch_frame(hits: pl.DataFrame, slots, ratings, d: _Draws, variant: str, tag: str, hit_rows=None) -> pl.DataFrame:
    rows = []
    hit_rows = range(len(hits)) if hit_rows is None else hit_rows
    recs = hits.rows(named=True)
    for h in hit_rows:
        rec = recs[h]
        for a, worker in enumerate(d.workers[h]):
            hit_id, worker_id = f"SIMULATED-{tag}{variant}-{int(rec['hit_index']):05d}", f"SIMULATED-{variant}-{worker + 1:02d}"
            row = {"HITId": hit_id, "AssignmentId": f"{hit_id}-{worker_id}", "WorkerId": worker_id, "AssignmentStatus": "Approved"}
            row |= {f"Input.{k}": ("" if v is None else str(v)) for k, v in rec.items()}
            row |= {
                f"Answer.rating_{i}": ("" if np.isnan(ratings[h, a, k]) else str(int(ratings[h, a, k])))
                for k, i in enumerate(slots)
            }
            rows.append(row)
    return pl.DataFrame(rows)


def simulate_panel(
    hits_by_variant: dict[str, pl.DataFrame], truth: pl.DataFrame, cfg: PanelConfig
) -> tuple[pl.DataFrame, pl.DataFrame, dict]:
    """Simulated MTurk batch results (all variants) and a repeat round; plus what was calibrated.

    `hits_by_variant` holds the batch input CSVs as read (strings, as MTurk would copy them into Input.*).
    """
    lookup = truth_lookup(truth)
    rng = np.random.default_rng(cfg.seed)
    draws, evid, blacks, slots_of = {}, {}, {}, {}
    for variant, hits in sorted(hits_by_variant.items()):
        slots_of[variant] = sorted(int(c.split("_")[1]) for c in hits.columns if c.startswith("image_") and c.endswith("_id"))
        evid[variant], blacks[variant] = _evidence(hits, slots_of[variant], lookup, cfg.visible_min)
        draws[variant] = _draw(len(hits), len(slots_of[variant]), cfg, rng)
    careless = set(range(cfg.annotators_per_variant - cfg.careless, cfg.annotators_per_variant))
    noise = cfg.noise_sd
    if noise is None:
        ref = "A" if "A" in draws else sorted(draws)[0]
        target = (cfg.target_alpha + cfg.target_spearman) / 2
        noise = calibrate_noise(evid[ref], blacks[ref], draws[ref], target, careless)
    batches, repeats = [], []
    for variant in sorted(draws):
        d = draws[variant]
        ratings = _rate(evid[variant], blacks[variant], d, noise, careless)
        batches.append(_batch_frame(hits_by_variant[variant], slots_of[variant], ratings, d, variant, ""))
        # repeat round: the most active annotators rate `repeat_hits` of their HITs again, fresh noise
        counts = np.bincount(np.ravel(d.workers), minlength=cfg.annotators_per_variant)
        top = [int(a) for a in np.argsort(-counts)[: cfg.repeat_annotators]]
        if top and cfg.repeat_hits > 0:
            again = _Draws(d.workers, d.bias, d.scale, rng.standard_normal(d.z.shape), d.black, d.random)
            r2 = _rate(evid[variant], blacks[variant], again, noise, careless)
            chosen = []
            for a in top:
                mine = [h for h, ws in enumerate(d.workers) if a in ws]
                chosen += [(h, a) for h in rng.permutation(mine)[: cfg.repeat_hits]]
            sub = _Draws([[a] for _, a in chosen], d.bias, d.scale, None, None, None)
            idx = [h for h, _ in chosen]
            pos = [d.workers[h].index(a) for h, a in chosen]
            r_sel = r2[idx, pos][:, None, :]
            hits_sel = hits_by_variant[variant][idx].with_row_index("_r")
            frame = _batch_frame(hits_sel.drop("_r"), slots_of[variant], r_sel, sub, variant, "REPEAT-")
            repeats.append(frame)
    log.info("simulated panel: noise level %.2f (targets α %.3f, Spearman %.3f)", noise, cfg.target_alpha, cfg.target_spearman)
    batch = pl.concat(batches, how="diagonal") if batches else pl.DataFrame()
    repeat = pl.concat(repeats, how="diagonal") if repeats else batch.clear()
    return batch, repeat, {"noise_sd": noise}
