"""The uncertainty core's two figures (squidflow.presentation.style).

- `reliability_figure`: per model, a reliability diagram of its top-label confidence: accuracy per equal-width bin
  (`evaluation.ece_bins`) with the percentile band of the image bootstrap (config `intervals`), and the smooth
  reliability curve (Błasiok & Nakkiran 2023: the residual smoothed with a Gaussian kernel reflected at 0 and 1, at
  the bandwidth σ* that smooth ECE chooses), with equal-width ECE and smooth ECE in the legend.
- `saturation_figure`: how each human-vs-model measure, the people's own leave-one-rater-out ceiling and
  Krippendorff's α (interval level) change as the raters per image are subsampled from 1 to all (without
  replacement, `repeats` draws per size; line = mean, band = the central `level` share of the draws): where the
  curves flatten, more raters per image stop changing the numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from squidflow.evaluation import uncertainty as U
from squidflow.evaluation.soft_labels import HEADERS, ModelPoints
from squidflow.judgments.agreement import krippendorff_alpha_interval
from squidflow.presentation import style
from squidflow.statistics.ece import equal_width_bin
from squidflow.statistics.intervals import IntervalConfig, counts, image_resamples

SATURATION_MEASURES = ("cross_entropy", "kl_human_model", "js_divergence", "total_variation", "brier", "wasserstein")


def reliability_bins(m: ModelPoints, n_bins: int, cfg: IntervalConfig) -> dict[str, np.ndarray]:
    """Per equal-width bin: mean confidence, accuracy, its bootstrap lo/hi, count (bins without data: NaN)."""
    n = len(m.confidence)
    bin_of = equal_width_bin(m.confidence, n_bins)
    member = np.zeros((n, n_bins))
    member[np.arange(n), bin_of] = 1.0
    w = counts(image_resamples(n, cfg), n)
    size = w @ member
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = (w @ (member * m.correct[:, None])) / size
        count = member.sum(axis=0)
        acc = (member * m.correct[:, None]).sum(axis=0) / count
        conf = (member * m.confidence[:, None]).sum(axis=0) / count
    alpha = (1 - cfg.level) / 2
    lo = np.full(n_bins, np.nan)
    hi = np.full(n_bins, np.nan)
    for b in range(n_bins):
        v = reps[:, b][np.isfinite(reps[:, b])]
        if count[b] and len(v):
            lo[b], hi[b] = np.quantile(v, [alpha, 1 - alpha])
    return {"confidence": conf, "accuracy": acc, "lo": lo, "hi": hi, "count": count}


def smooth_curve(m: ModelPoints, mesh: int = 200) -> tuple[np.ndarray, np.ndarray, float]:
    """(t, accuracy at t, σ*) of the smooth reliability curve: t minus the residual (confidence − correct)
    Nadaraya–Watson-smoothed with a Gaussian kernel reflected at 0 and 1, at the bandwidth σ* of smooth ECE."""
    sigma = U.smooth_ece_bandwidth(m.confidence, m.correct)
    t = np.linspace(0, 1, mesh)
    c = m.confidence[None, :]
    kernel = sum(np.exp(-((t[:, None] - x) ** 2) / (2 * sigma**2)) for x in (c, -c, 2 - c))  # reflections
    density = kernel.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        residual = kernel @ (m.confidence - m.correct) / density
    inside = (t >= m.confidence.min()) & (t <= m.confidence.max())
    curve = np.where(inside, t - residual, np.nan)  # drawn over the range of the data only
    return t, curve, sigma


def _reliability_panel(ax, m: ModelPoints, n_bins: int, cfg: IntervalConfig) -> None:
    """One model's reliability diagram: accuracy per bin with its bootstrap interval, the smooth curve, the ECEs."""
    ax.plot([0, 1], [0, 1], color=style.GREY, linewidth=0.8, linestyle=":", label="perfect calibration")
    if len(m.confidence):
        bins = reliability_bins(m, n_bins, cfg)
        ok = bins["count"] > 0
        acc, conf = bins["accuracy"][ok], bins["confidence"][ok]
        style.interval_bars(ax, conf, bins["lo"][ok], bins["hi"][ok], color=style.SKY_BLUE, linewidth=3)
        ax.plot(
            conf,
            acc,
            marker=style.MARKERS[0],
            color=style.BLUE,
            linestyle="none",
            label=f"accuracy per bin, {round(100 * cfg.level)}% bootstrap interval",
        )
        ece = U.ece_equal_width(m.confidence, m.correct, n_bins)
        t, curve, sigma = smooth_curve(m)
        smece = U.smooth_ece(m.confidence, m.correct, sigma=sigma)
        ax.plot(t, curve, color=style.VERMILLION, label="smooth reliability curve (at σ*)")
        ax.text(
            0.98,
            0.02,
            f"ECE {ece:.3f}\nsmECE {smece:.3f}\nσ* {sigma:.3f}",
            transform=ax.transAxes,
            ha="right",
            va="bottom",
            fontsize=style.FONT_SIZE - 1,
        )
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("confidence (rank-1 score)")
    ax.set_ylabel("accuracy")
    ax.set_title(f"{m.name} (n={len(m.confidence)})")


def reliability_figure(
    models: Sequence[ModelPoints],
    path: str | Path,
    cfg: IntervalConfig,
    *,
    n_bins: int,
    title: str = "",
    note: str = "",
) -> int:
    cols = min(3, max(1, len(models)))
    rows = max(1, -(-len(models) // cols))
    width = style.COLUMN_WIDTH_IN if cols == 1 else style.PAGE_WIDTH_IN
    fig, axes = style.figure(rows, cols, width=width, height=2.8 * rows + 0.6)
    for i, ax in enumerate(axes.ravel()):
        if i >= len(models):
            ax.set_visible(False)
            continue
        _reliability_panel(ax, models[i], n_bins, cfg)
        style.panel_letter(ax, i)
    handles, labels = axes.ravel()[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncols=min(3, len(labels)), frameon=False)
    style.note(fig, note)  # the title goes into the PNG's metadata: the legend holds the top
    return style.save(
        fig,
        path,
        title=title or "reliability diagrams",
        description=(
            f"Per model: accuracy per {n_bins} equal-width confidence bins with the {cfg.level:.0%} image-bootstrap band "
            "and the smooth-ECE reliability curve."
        ),
    )


def saturation(
    models: Sequence[ModelPoints], people: np.ndarray, *, repeats: int, seed: int, level: float
) -> dict[str, dict[str, np.ndarray]]:
    """{series: {measure: (max_raters, 3) mean, lo, hi over the draws}} for k = 1..max raters per image (an image
    with fewer ratings than k keeps all of its own); series are the models, "people" (the leave-one-rater-out
    ceiling, k >= 2) and "alpha" (Krippendorff's α, interval level, k >= 2)."""
    rng = np.random.default_rng(seed)
    width = max([people.shape[1], *[m.ratings.shape[1] for m in models]]) if len(people) else 0
    alpha_q = (1 - level) / 2
    out: dict[str, dict[str, list]] = {}

    def subsample(r: np.ndarray, k: int) -> np.ndarray:
        rated = ~np.isnan(r)
        keys = np.where(rated, rng.random(r.shape), np.inf)
        order = np.argsort(keys, axis=1)
        keep = np.zeros_like(rated)
        np.put_along_axis(keep, order[:, :k], True, axis=1)
        return np.where(keep & rated, r, np.nan)

    for k in range(1, width + 1):
        draws: dict[tuple[str, str], list[float]] = {}
        for _ in range(repeats):
            for m in models:
                values = U.soft_label_measures(m.prob, subsample(m.ratings, k))
                for measure in SATURATION_MEASURES:
                    draws.setdefault((m.name, measure), []).append(float(np.nanmean(values[measure])))
            if k >= 2 and len(people):
                sub = subsample(people, k)
                ceiling = U.people_ceiling(sub)
                for measure in SATURATION_MEASURES:
                    draws.setdefault(("people", measure), []).append(float(np.nanmean(ceiling[measure])))
                draws.setdefault(("alpha", "alpha"), []).append(krippendorff_alpha_interval(sub))
        for (series, measure), v in draws.items():
            arr = np.asarray(v)
            out.setdefault(series, {}).setdefault(measure, []).append(
                (k, arr.mean(), *np.quantile(arr, [alpha_q, 1 - alpha_q]))
            )
    return {s: {meas: np.asarray(v) for meas, v in d.items()} for s, d in out.items()}


def _saturation_curves(ax, curves: dict, series: list[str], measure: str) -> None:
    """Each series' curve of one measure against raters per image, with a band (or bars) of the central draws."""
    for j, name in enumerate(series):
        c = curves.get(name, {}).get(measure)
        if c is None or not len(c):
            continue
        colour = style.BLACK if name in ("people", "alpha") else style.SERIES[j % len(style.SERIES)]
        label = (
            "people (leave-one-rater-out)"
            if name == "people"
            else ("Krippendorff's α (interval)" if name == "alpha" else name)
        )
        if len(c) >= 3:  # a band where it has a shape; two or fewer sizes: error bars (no grey triangles)
            ax.fill_between(c[:, 0], c[:, 2], c[:, 3], color=colour, alpha=0.2)
        else:
            style.interval_bars(ax, c[:, 0], c[:, 2], c[:, 3], color=colour, cap=0.15)
        ax.plot(
            c[:, 0],
            c[:, 1],
            marker=style.MARKERS[j % len(style.MARKERS)],
            color=colour,
            label=label,
            linestyle="--" if name == "people" else "-",
        )


def _saturation_legend(axes, n_panels: int, level: float, repeats: int) -> None:
    """One legend for every panel, in the first unused panel's place (else in the first panel), the spare panels
    hidden."""
    handles: dict[str, object] = {}
    for ax in axes.ravel()[:n_panels]:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, h)
    from matplotlib.patches import Patch

    handles[f"band / bars: central {level:.0%}\nof {repeats} draws per size"] = Patch(color=style.BLACK, alpha=0.2)
    spare = axes.ravel()[n_panels:]
    for ax in spare:
        ax.set_visible(False)
    if spare.size:  # the legend in the first empty panel's place
        x0, y0, w, h = spare[0].get_position().bounds  # left-aligned, clear of the last panel's markers
        spare[0].figure.legend(
            list(handles.values()),
            list(handles),
            loc="center left",
            bbox_to_anchor=(x0 + 0.04, y0, w, h),
            frameon=False,
        )
    else:
        axes.ravel()[0].legend(list(handles.values()), list(handles), loc="best")


def saturation_figure(
    models: Sequence[ModelPoints],
    people: np.ndarray,
    path: str | Path,
    *,
    repeats: int = 20,
    seed: int = 0,
    level: float = 0.95,
    title: str = "",
    note: str = "",
) -> int:
    curves = saturation(models, people, repeats=repeats, seed=seed, level=level)
    panels = [*SATURATION_MEASURES, "alpha"]
    cols = 4
    rows = -(-len(panels) // cols)
    fig, axes = style.figure(rows, cols, height=2.2 * rows + 0.6)
    names = [m.name for m in models] + ["people"]
    for i, (ax, measure) in enumerate(zip(axes.ravel(), panels, strict=False)):
        _saturation_curves(ax, curves, ["alpha"] if measure == "alpha" else names, measure)
        ax.set_xlabel("raters per image")
        ax.set_title("Krippendorff's α" if measure == "alpha" else HEADERS[measure])
        ax.xaxis.get_major_locator().set_params(integer=True)
        style.panel_letter(ax, i)
    _saturation_legend(axes, len(panels), level, repeats)
    fig.suptitle(title or "How the measures change as raters per image are subsampled (more raters: flatter curves)")
    style.note(fig, note)
    return style.save(
        fig,
        path,
        title=title or "annotation saturation",
        description=(
            "Each human-vs-model measure, the people ceiling and Krippendorff's alpha as raters per image are subsampled "
            f"from 1 to all ({repeats} draws per size)."
        ),
    )
