"""Confidence intervals for every measure of a Table 3-shaped evaluation, against a per-measure scipy.stats.bootstrap
loop in the same run.

    .venv/bin/python -m benchmarks.evaluation [--images 1800] [--methods 6] [--seeds 8] [--resamples 2000]
                                              [--baseline-cells 1] [--baseline-resamples 100] [--bins 15]

Data: a simulated SQUID-E Table 3 shape (SQUID-E §5.3): `--images` images, each with a true propensity of the event,
three raters of its own (0..100, 10% of ratings missing), a 0/1 label; `--methods` × `--seeds` models ("cells"),
each the probability of the event with its own noise.

squidflow (the uncertainty core with squidflow.statistics.intervals): one image index matrix for the table (`--resamples`
rows), every measure of every cell on every resample (squidflow.evaluation.uncertainty.model_measures: the seven
soft-label measures, accuracy, entropy Pearson/Spearman, equal-width and equal-mass ECE, smooth ECE), then per method
the seed mean with its percentile interval, each method against the first with a paired difference, its interval and
p-value, Holm-corrected over the methods; and the people ceiling's seven measures with intervals.

Baseline: for each measure of a cell, one `scipy.stats.bootstrap` call (percentile, `--resamples`): the per-image
measures as a vectorised mean, the others as paired statistics called once per resample (ECE with the same scalar
functions, smooth ECE with relplot.smECE — which searches its bandwidth per resample — and the correlations with
scipy.stats.pearsonr/spearmanr); a second total replaces relplot.smECE by relplot.smECE_sigma at the full
sample's σ*, which is what squidflow's resamples use (a like-for-like ratio). It runs on `--baseline-cells` cells with `--baseline-resamples` resamples and is
extrapolated linearly to all cells and `--resamples` (the printout says so); it gives per-cell intervals only (no
seed means, paired tests or ceiling, which the squidflow time includes).

Times are CPU seconds of this process (wall time printed beside squidflow's): on a shared machine the wall time
grows with the other jobs' load, the CPU time much less (BLAS may use two threads for squidflow, so its CPU time can
exceed its wall time on an idle machine).

Goal: ratio >= 20 and squidflow under 60 s on 2 cores at the paper scale (1,800 × 6 × 8, 2,000 resamples).
"""

from __future__ import annotations

import argparse
import os
import time
from functools import partial

import numpy as np

from squidflow.evaluation import uncertainty as u
from squidflow.statistics import intervals as iv


def simulate(images: int, methods: int, seeds: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    theta = rng.beta(2, 2, size=images)
    ratings = np.round(100 * rng.beta(8 * theta[:, None] + 0.5, 8 * (1 - theta[:, None]) + 0.5, size=(images, 3)))
    ratings[rng.uniform(size=ratings.shape) < 0.1] = np.nan
    label = (rng.uniform(size=images) < theta).astype(float)
    logit = np.log(theta / (1 - theta))
    probs = np.empty((methods, seeds, images))
    for m in range(methods):
        for s in range(seeds):
            probs[m, s] = 1 / (1 + np.exp(-(logit * (0.8 + 0.1 * m) + rng.normal(0, 0.6, images))))
    correct = ((probs > 0.5) == (label > 0.5)).astype(float)
    return probs, ratings, correct


def run_squidflow(probs, ratings, correct, cfg: iv.IntervalConfig, bins: int) -> tuple[float, float, dict]:
    """Wall and CPU seconds, and the table's numbers."""
    methods, seeds, n = probs.shape
    start, cpu = time.perf_counter(), time.process_time()
    index = iv.image_resamples(n, cfg)
    weights = iv.counts(index, n)
    names = u.MODEL_MEASURES
    points = np.empty((methods, seeds, len(names)))
    reps = np.empty((methods, seeds, len(names), cfg.resamples))
    for m in range(methods):
        for s in range(seeds):
            sigma = u.smooth_ece_bandwidth(np.maximum(probs[m, s], 1 - probs[m, s]), correct[m, s])
            point = u.model_measures(probs[m, s], ratings, correct[m, s], n_bins=bins, sigma=sigma)
            rep = u.model_measures(probs[m, s], ratings, correct[m, s], n_bins=bins, weights=weights, sigma=sigma)
            points[m, s] = [point[k] for k in names]
            reps[m, s] = [rep[k] for k in names]
    # the table: seed means with intervals; each method against the first, Holm over the methods
    table = {}
    for m in range(methods):
        for j, name in enumerate(names):
            table[(m, name)] = iv.interval_from(points[m, :, j].mean(), reps[m, :, j].mean(axis=0), cfg)
    p_values = np.full((methods, len(names)), np.nan)
    for m in range(1, methods):
        for j in range(len(names)):
            diff = reps[m, :, j].mean(axis=0) - reps[0, :, j].mean(axis=0)
            p_values[m, j] = iv.bootstrap_p_value(points[m, :, j].mean() - points[0, :, j].mean(), diff)
    adjusted = np.stack([iv.holm(p_values[1:, j]) for j in range(len(names))], axis=1)
    ceiling = iv.intervals_table(u.people_ceiling(ratings), cfg, index=index)
    return (
        time.perf_counter() - start,
        time.process_time() - cpu,
        {"table": table, "holm": adjusted, "ceiling": ceiling},
    )


def run_scipy(probs, ratings, correct, cells: int, resamples: int, bins: int) -> dict[str, float]:
    """CPU seconds per measure for `cells` cells at `resamples` resamples, one scipy.stats.bootstrap call each (CPU
    time: the baseline is single-threaded, so on a shared machine it is what an idle one would take)."""
    import relplot
    from scipy.stats import bootstrap, pearsonr, spearmanr

    methods, seeds, n = probs.shape
    human = u.entropy(u.soft_label(ratings))
    rated = ~np.isnan(human)
    seconds: dict[str, float] = {k: 0.0 for k in (*u.MODEL_MEASURES, "smooth_ece_fixed_sigma")}
    for cell in range(cells):
        p, y = probs.reshape(-1, n)[cell], correct.reshape(-1, n)[cell]
        conf = np.maximum(p, 1 - p)
        per_image = u.soft_label_measures(p, ratings)
        per_image["accuracy"] = y
        model = u.entropy(p)
        paired = {
            "entropy_pearson": ((model[rated], human[rated]), lambda a, b: pearsonr(a, b).statistic),
            "entropy_spearman": ((model[rated], human[rated]), lambda a, b: spearmanr(a, b).statistic),
            "ece_equal_width": ((conf, y), lambda c, t: u.ece_equal_width(c, t, bins)),
            "ece_equal_mass": ((conf, y), lambda c, t: u.ece_equal_mass(c, t, bins)),
            "smooth_ece": ((conf, y), relplot.smECE),
            "smooth_ece_fixed_sigma": ((conf, y), partial(relplot.smECE_sigma, sigma=u.smooth_ece_bandwidth(conf, y))),
        }
        for name in seconds:
            start = time.process_time()
            if name in paired:
                data, stat = paired[name]
                bootstrap(
                    data, stat, paired=True, vectorized=False, n_resamples=resamples, method="percentile", rng=cell
                )
            else:
                v = per_image[name]
                bootstrap(
                    (v[np.isfinite(v)],), np.mean, vectorized=True, n_resamples=resamples, method="percentile", rng=cell
                )
            seconds[name] += time.process_time() - start
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--images", type=int, default=1800)
    ap.add_argument("--methods", type=int, default=6)
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--bins", type=int, default=15)
    ap.add_argument("--baseline-cells", type=int, default=1)
    ap.add_argument("--baseline-resamples", type=int, default=100)
    args = ap.parse_args()

    probs, ratings, correct = simulate(args.images, args.methods, args.seeds)
    cfg = iv.IntervalConfig(level=0.95, resamples=args.resamples, seed=0, method="percentile")
    cells = args.methods * args.seeds
    wall, ours, result = run_squidflow(probs, ratings, correct, cfg, args.bins)
    base_cells = min(args.baseline_cells, cells)
    base = run_scipy(probs, ratings, correct, base_cells, args.baseline_resamples, args.bins)
    scale = (cells / base_cells) * (args.resamples / args.baseline_resamples)
    baseline = sum(v for k, v in base.items() if k != "smooth_ece_fixed_sigma") * scale
    fixed = sum(v for k, v in base.items() if k != "smooth_ece") * scale

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"Table 3 shape: {args.images} images x {args.methods} methods x {args.seeds} seeds = {cells} cells, "
        f"{len(u.MODEL_MEASURES)} measures each + people ceiling ({len(u.SOFT_LABEL_MEASURES)}), "
        f"{args.resamples} resamples; {cores} cores, load average {load:.1f}"
    )
    print(
        f"squidflow (one index matrix, all measures, seed means, paired tests, Holm, ceiling): {ours:8.2f} s CPU "
        f"({wall:.2f} s wall)"
    )
    print(
        f"scipy.stats.bootstrap per measure, measured on {base_cells} cell(s) x {args.baseline_resamples} "
        f"resamples and extrapolated x{scale:g}: {baseline:10.1f} s CPU"
    )
    for name, sec in base.items():
        print(f"    {name:18s} {sec * scale:10.1f} s")
    print(f"ratio (CPU time): {baseline / ours:.1f}x  (goal >= 20x; squidflow goal < 60 s on 2 cores)")
    print(
        f"ratio with the baseline's smooth ECE at the full sample's bandwidth, as squidflow resamples it "
        f"(relplot.smECE_sigma): {fixed / ours:.1f}x"
    )
    first = result["table"][(0, "brier")]
    print(
        f"e.g. method 0 HUJ MSE (Brier) seed mean: {iv.format_interval(*first, digits=4)}; "
        f"Holm-adjusted p of method 1 vs 0: {result['holm'][0, u.MODEL_MEASURES.index('brier')]:.3g}"
    )


if __name__ == "__main__":
    main()
