"""A simulated annotator panel for the offline demo — everything it makes is labelled SIMULATED.

Real judgments need MTurk. So that the demo runs the very same path (task design → MTurk batch results → ingestion →
quality → aggregation → agreement), simulated annotators "see" each image through the demo's ground truth: the
evidence (0..1) that the frame shows the prompted event (schemas.TRUTH). Annotator a rates

    rating = clip(round(50 + scale_a * (100 * evidence - 50) + bias_a + noise * z), 0, 100)

with their own bias (~N(0, bias_sd)) and scale (~logN(0, scale_log_sd)) and fresh noise z ~ N(0, 1) per judgment.
Careful annotators rate a frame that shows nothing (black, or so dark that no event has `visible_min` evidence)
0-3, as the instructions ask; `careless` annotators per variant rate at
random (the quality checks should catch them). No annotator works on both variants (SQUID-E §3.2).

Planted faults (issue #36, the proof of the rater and image triage), each a count per variant: `constant` raters give
one rating to everything, `extremes` raters only 0 or 100 (their careful rating pushed to the nearer end),
`reversed` raters 100 minus their careful rating, `prior` raters copy the prompt's prior (the panel's mean evidence
of the event, the same number for every image of a HIT), `shifted` raters give each image of a HIT their careful
rating of the next image of that HIT (the last one the first's: an answer sheet off by one line), and `colluders`
give identical random answers (one draw per image, shared by all of them; wherever a colluder takes a HIT, another
colluder takes one of its other assignments, as accounts of one person pick the same HITs) (issue #50);
`swapped_images` pairs of images per variant have their
ratings swapped with each other's. The faulty annotators are the panel's last (least active) ones; what was planted
is returned as a table (`planted`). Their draws come from a stream of their own, so a panel without faults is the one
the demo always had, and the noise is calibrated on the careful and `careless` raters only.

The noise is calibrated on variant A so that the mean of the panel's Krippendorff's α and Spearman equals the mean
of the release's (.658 and .676, Table 7): both fall as noise grows, so a bisection over the noise level, with the
random draws held fixed, finds it. α is more sensitive than Spearman to a few extreme items (black frames), so the
two cannot both be hit exactly by one noise level; aiming at their mean keeps both close (a test checks ±0.05).

A repeat round (SQUID-E §4.2) has the most active annotators rate some of their HITs again, with fresh noise.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

import numpy as np
import polars as pl

from squidflow.config.validation import defaults_from_schema
from squidflow.contracts import schemas
from squidflow.contracts.io import unneutralise
from squidflow.judgments.agreement import krippendorff_alpha_interval, spearman_pairs

log = logging.getLogger(__name__)


@dataclass(frozen=True)
@defaults_from_schema("judgments.panel", assignments_per_hit="annotation.assignments_per_hit")
class PanelConfig:
    annotators_per_variant: int
    assignments_per_hit: int
    bias_sd: float
    scale_log_sd: float
    noise_sd: float | None  # None: calibrate to target_alpha
    target_alpha: float
    target_spearman: float
    visible_min: float  # below this evidence of every event, a frame shows nothing (black, nearly black)
    careless: int
    constant: int
    extremes: int
    reversed: int
    prior: int
    shifted: int
    colluders: int
    swapped_images: int
    repeat_annotators: int
    repeat_hits: int
    seed: int

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
    # None in a repeat round's frame (_batch_frame reads its workers only)
    z: np.ndarray | None  # per HIT, assignment, slot
    black: np.ndarray | None  # per HIT, assignment, slot: a careful rating of a black frame
    random: np.ndarray | None  # per HIT, assignment, slot: a careless annotator's rating


def _draw(n_hits: int, n_slots: int, cfg: PanelConfig, rng: np.random.Generator) -> _Draws:
    n_ann = cfg.annotators_per_variant
    if cfg.assignments_per_hit > n_ann:
        raise ValueError(
            f"panel: {cfg.assignments_per_hit} assignments per HIT need at least as many annotators (have {n_ann})"
        )
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


FAULT_KINDS = ("careless", "constant", "extremes", "reversed", "prior", "shifted", "colluders")  # PanelConfig's counts


def faulty_raters(cfg: PanelConfig) -> dict[int, str]:
    """Annotator index (0-based) -> its planted fault: the last `careless`, before them `constant`, `extremes`,
    `reversed`, `prior`, `shifted` and `colluders` ones (the panel's least active annotators)."""
    out, k = {}, cfg.annotators_per_variant
    for kind in reversed(FAULT_KINDS):
        for _ in range(getattr(cfg, kind)):
            k -= 1
            if k < 0:
                raise ValueError(
                    f"panel: {sum(getattr(cfg, f) for f in FAULT_KINDS)} faulty raters planted in a panel of "
                    f"{cfg.annotators_per_variant} per variant; raise judgments.panel.annotators_per_variant"
                )
            out[k] = kind
    return out


def _rate(
    evidence: np.ndarray,
    black: np.ndarray,
    d: _Draws,
    noise: float,
    careless: set[int],
    faults: dict[int, str] | None = None,
    prior: np.ndarray | None = None,
    constant: np.ndarray | None = None,
    collusion: np.ndarray | None = None,
) -> np.ndarray:
    """Ratings per HIT, assignment, slot (NaN where a slot has no image). `faults`: annotator -> planted fault other
    than careless (`prior`: per HIT the prompt's prior rating; `constant`: per annotator the constant rater's rating;
    `collusion`: per HIT and slot the colluders' shared random answer)."""
    if d.z is None or d.black is None or d.random is None:
        raise ValueError("_rate: these draws hold no noise (a repeat round's frame)")
    w = np.asarray(d.workers)  # hits × assignments
    latent = 50 + d.scale[w][..., None] * (100 * evidence[:, None, :] - 50) + d.bias[w][..., None] + noise * d.z
    r = np.clip(np.rint(latent), 0, 100)
    r = np.where(black[:, None, :], d.black, r)
    if careless:
        r = np.where(np.isin(w, list(careless))[..., None], d.random, r)
    for kind, faulty in _by_kind(faults or {}).items():
        hit = np.isin(w, faulty)[..., None]
        if kind == "constant":
            planted = np.broadcast_to(_given(constant, kind)[w][..., None], r.shape)
        elif kind == "extremes":
            planted = np.where(r >= 50, 100.0, 0.0)
        elif kind == "reversed":
            planted = 100.0 - r
        elif kind == "shifted":
            planted = _shift_within_hits(r, evidence)
        elif kind == "colluders":
            planted = np.broadcast_to(_given(collusion, kind)[:, None, :], r.shape)
        else:  # prior
            planted = np.broadcast_to(_given(prior, kind)[:, None, None], r.shape)
        r = np.where(hit, planted, r)
    return np.where(np.isnan(evidence)[:, None, :], np.nan, r)


def _shift_within_hits(r: np.ndarray, evidence: np.ndarray) -> np.ndarray:
    """Each filled slot of a HIT gets the rating of the next filled slot (the last slot the first's)."""
    out = r.copy()
    for h in range(r.shape[0]):
        filled = np.flatnonzero(~np.isnan(evidence[h]))
        if len(filled) > 1:
            out[h][:, filled] = r[h][:, np.roll(filled, -1)]
    return out


def _collude(d: _Draws, colluders: list[int]) -> _Draws:
    """Wherever a colluder takes a HIT alone, another colluder takes one of its other assignments (the first other
    colluder in turn, replacing the last non-colluding assignment), so that colluders share HITs."""
    if len(colluders) < 2:
        return d
    workers = []
    for ws in d.workers:
        ws = list(ws)
        mine = [w for w in ws if w in colluders]
        if len(mine) == 1 and len(ws) > 1:
            partner = colluders[(colluders.index(mine[0]) + 1) % len(colluders)]
            last = max(i for i, w in enumerate(ws) if w not in colluders)
            ws[last] = partner
        workers.append(ws)
    return _Draws(workers, d.bias, d.scale, d.z, d.black, d.random)


def _by_kind(faults: dict[int, str]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for a, kind in faults.items():
        if kind != "careless":
            out.setdefault(kind, []).append(a)
    return out


def _swap_pairs(
    evidence: np.ndarray, black: np.ndarray, n_pairs: int, rng: np.random.Generator
) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """`n_pairs` pairs of (HIT, slot) cells whose evidence differs by at least 0.5, each cell in one pair at most; no
    black frame (its swapped ratings would be the rubric's blank violations, charged to careful raters)."""
    cells = [tuple(c) for c in np.argwhere(~np.isnan(evidence) & ~black)]
    order = [cells[i] for i in rng.permutation(len(cells))]
    used: set[tuple] = set()
    pairs: list[tuple[tuple[int, int], tuple[int, int]]] = []
    for a in order:
        if len(pairs) >= n_pairs:
            break
        if a in used:
            continue
        for b in order:
            if b != a and b not in used and abs(evidence[a] - evidence[b]) >= 0.5:
                pairs.append((a, b))
                used |= {a, b}
                break
    return pairs


def _given(values: np.ndarray | None, kind: str) -> np.ndarray:
    """The planted answers a fault `kind` needs (_rate's caller passes them with the fault)."""
    if values is None:
        raise ValueError(f"_rate: the {kind} fault is planted without its answers")
    return values


def _swap(ratings: np.ndarray, pairs) -> np.ndarray:
    r = ratings.copy()
    for (h1, s1), (h2, s2) in pairs:
        r[h1, :, s1], r[h2, :, s2] = ratings[h2, :, s2], ratings[h1, :, s1]
    return r


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
            hit_id, worker_id = (
                f"SIMULATED-{tag}{variant}-{int(rec['hit_index']):05d}",
                f"SIMULATED-{variant}-{worker + 1:02d}",
            )
            row = {
                "HITId": hit_id,
                "AssignmentId": f"{hit_id}-{worker_id}",
                "WorkerId": worker_id,
                "AssignmentStatus": "Approved",
            }
            row |= {f"Input.{k}": ("" if v is None else str(v)) for k, v in rec.items()}
            row |= {
                f"Answer.rating_{i}": ("" if np.isnan(ratings[h, a, k]) else str(int(ratings[h, a, k])))
                for k, i in enumerate(slots)
            }
            rows.append(row)
    return pl.DataFrame(rows)


def _priors(truth: dict) -> dict[str, float]:
    """Each event's prior rating: 100 × its mean evidence over the demo's frames (what a `prior` rater copies)."""
    sums: dict[str, list[float]] = {}
    for _, weights in truth.values():
        for e, w in weights.items():
            sums.setdefault(e, []).append(w)
    return {e: float(np.rint(100 * np.mean(w))) for e, w in sums.items()}


def _planted(hits: pl.DataFrame, slots, variant: str, faults: dict[int, str], pairs) -> list[dict]:
    rows = [
        {
            "unit": "annotator",
            "annotator": f"SIMULATED-{variant}-{a + 1:02d}",
            "variant": variant,
            "image_id": None,
            "event_prompt": None,
            "fault": kind,
        }
        for a, kind in sorted(faults.items())
    ]
    recs = hits.rows(named=True)
    for pair in pairs:
        for h, k in pair:
            rows.append(
                {
                    "unit": "image",
                    "annotator": None,
                    "variant": variant,
                    "image_id": unneutralise(recs[h][f"image_{slots[k]}_id"]),
                    "event_prompt": unneutralise(recs[h]["event_prompt"]),
                    "fault": "swapped",
                }
            )
    return rows


def _video_of(image: str | None) -> str | None:
    if not image:
        return None
    text = unneutralise(image)
    return text.rsplit("_", 1)[0] if "_" in text else None


def without_videos(batch: pl.DataFrame, removed: frozenset[str]) -> pl.DataFrame:
    """A SIMULATED batch with every slot of a video taken down emptied (its image, URL, event and rating): the panel
    is simulated again on every run, so after a takedown it leaves the video's images unanswered rather than keep a
    file that names it. Your own batch files are yours and are read as given (ingestion leaves those answers out)."""
    if not removed or batch.is_empty():
        return batch
    columns = []
    for c in batch.columns:
        m = re.match(r"^Input\.image_([0-9]+)_id\Z", c)
        if m is None:
            continue
        i = m.group(1)
        gone = pl.col(c).map_elements(lambda s: _video_of(s) in removed, return_dtype=pl.Boolean).fill_null(False)
        for col in (c, f"Input.image_{i}_url", f"Input.image_{i}_event", f"Answer.rating_{i}"):
            if col in batch.columns:
                columns.append(pl.when(gone).then(pl.lit("")).otherwise(pl.col(col).cast(pl.Utf8)).alias(col))
    return batch.with_columns(columns)


def planted_without_videos(planted: pl.DataFrame, removed: frozenset[str]) -> pl.DataFrame:
    """The planted faults without the swapped images of a video taken down."""
    if not removed:
        return planted
    gone = pl.col("image_id").map_elements(lambda s: _video_of(s) in removed, return_dtype=pl.Boolean)
    return planted.filter(~gone.fill_null(False))


def _panel_draws(
    hits_by_variant: dict[str, pl.DataFrame], lookup: dict, cfg: PanelConfig, rng: np.random.Generator
) -> tuple[dict[str, list[int]], dict[str, np.ndarray], dict[str, np.ndarray], dict[str, _Draws]]:
    """Per variant, in order: its HITs' image slots, what each image shows of the prompt's event (and which are
    black), and the panel's random draws."""
    draws, evid, blacks, slots_of = {}, {}, {}, {}
    for variant, hits in sorted(hits_by_variant.items()):
        slots_of[variant] = sorted(
            int(c.split("_")[1]) for c in hits.columns if c.startswith("image_") and c.endswith("_id")
        )
        evid[variant], blacks[variant] = _evidence(hits, slots_of[variant], lookup, cfg.visible_min)
        draws[variant] = _draw(len(hits), len(slots_of[variant]), cfg, rng)
    return slots_of, evid, blacks, draws


def _repeat_frame(
    hits: pl.DataFrame, slots: list[int], r2: np.ndarray, d: _Draws, chosen: list[tuple[int, int]], variant: str
) -> pl.DataFrame:
    """The repeat round's batch: each chosen (HIT, annotator) with the annotator's second ratings of that HIT."""
    sub = _Draws([[a] for _, a in chosen], d.bias, d.scale, None, None, None)
    idx = [h for h, _ in chosen]
    pos = [d.workers[h].index(a) for h, a in chosen]
    return _batch_frame(hits[idx], slots, r2[idx, pos][:, None, :], sub, variant, "REPEAT-")


def _panel_frames(
    batches: list[pl.DataFrame], repeats: list[pl.DataFrame], planted: list[dict], noise: float
) -> tuple[pl.DataFrame, pl.DataFrame, dict]:
    """simulate_panel's result: every variant's batch as one, the repeat round's (an empty frame without one), and
    the noise level with the planted faults (schemas.PLANTED_FAULTS)."""
    batch = pl.concat(batches, how="diagonal") if batches else pl.DataFrame()
    repeat = pl.concat(repeats, how="diagonal") if repeats else batch.clear()
    planted_frame = (
        pl.DataFrame(planted, schema=schemas.PLANTED_FAULTS.columns)
        if planted
        else schemas.empty(schemas.PLANTED_FAULTS)
    )
    return batch, repeat, {"noise_sd": noise, "planted": planted_frame}


def simulate_panel(
    hits_by_variant: dict[str, pl.DataFrame], truth: pl.DataFrame, cfg: PanelConfig
) -> tuple[pl.DataFrame, pl.DataFrame, dict]:
    """Simulated MTurk batch results (all variants) and a repeat round; plus what was calibrated and what was planted
    (`info["planted"]`, schemas.PLANTED_FAULTS).

    `hits_by_variant` holds the batch input CSVs as read (strings, as MTurk would copy them into Input.*).
    """
    lookup = truth_lookup(truth)
    rng = np.random.default_rng(cfg.seed)
    fault_rng = np.random.default_rng([cfg.seed, 36])  # the planted faults' own stream: no faults, the demo's panel
    slots_of, evid, blacks, draws = _panel_draws(hits_by_variant, lookup, cfg, rng)
    faults = faulty_raters(cfg)
    careless = {a for a, kind in faults.items() if kind == "careless"}
    constant = fault_rng.integers(10, 91, cfg.annotators_per_variant).astype(float)
    colluders = sorted(a for a, kind in faults.items() if kind == "colluders")
    draws = {v: _collude(d, colluders) for v, d in draws.items()}
    priors = _priors(lookup)
    noise = cfg.noise_sd
    if noise is None:  # calibrated on variant A (else the first) to the release's α and Spearman, their mean
        ref = "A" if "A" in draws else sorted(draws)[0]
        noise = calibrate_noise(
            evid[ref], blacks[ref], draws[ref], (cfg.target_alpha + cfg.target_spearman) / 2, careless
        )
    batches, repeats, planted = [], [], []
    for variant in sorted(draws):
        d = draws[variant]
        prior = np.array([priors.get(unneutralise(e), 50.0) for e in hits_by_variant[variant]["event"].to_list()])
        pairs = _swap_pairs(evid[variant], blacks[variant], cfg.swapped_images, fault_rng)
        collusion = fault_rng.integers(0, 101, evid[variant].shape).astype(float) if colluders else None
        ratings = _swap(
            _rate(evid[variant], blacks[variant], d, noise, careless, faults, prior, constant, collusion), pairs
        )
        planted += _planted(hits_by_variant[variant], slots_of[variant], variant, faults, pairs)
        batches.append(_batch_frame(hits_by_variant[variant], slots_of[variant], ratings, d, variant, ""))
        # repeat round: the most active annotators rate `repeat_hits` of their HITs again, fresh noise
        counts = np.bincount(np.ravel(d.workers), minlength=cfg.annotators_per_variant)
        top = [int(a) for a in np.argsort(-counts)[: cfg.repeat_annotators]]
        if top and cfg.repeat_hits > 0:
            if d.z is None:
                raise ValueError("the repeat round needs the panel's noise draws")
            again = _Draws(d.workers, d.bias, d.scale, rng.standard_normal(d.z.shape), d.black, d.random)
            r2 = _swap(
                _rate(evid[variant], blacks[variant], again, noise, careless, faults, prior, constant, collusion), pairs
            )
            chosen = []
            for a in top:
                mine = [h for h, ws in enumerate(d.workers) if a in ws]
                chosen += [(h, a) for h in rng.permutation(mine)[: cfg.repeat_hits]]
            repeats.append(_repeat_frame(hits_by_variant[variant], slots_of[variant], r2, d, chosen, variant))
    log.info(
        "simulated panel: noise level %.2f (targets α %.3f, Spearman %.3f); planted %d faulty raters, %d swapped "
        "images",
        noise,
        cfg.target_alpha,
        cfg.target_spearman,
        len(faults) * len(draws),
        sum(r["unit"] == "image" for r in planted),
    )
    return _panel_frames(batches, repeats, planted, noise)
