"""Result tables from seed-replicated runs: Table 1 (§5.1), Table 3 (§5.3) and Table 9 (D.4) as mean ± std.

`aggregate` turns per-run metrics into the long RESULT_TABLE (train_set, method, metric, mean, std, n_seeds: one
row per cell, easy to plot or join); `to_markdown` and `to_latex` lay it out the way the paper does. The std is the
sample standard deviation over seeds (ddof = 1); a metric that is undefined for a run (an empty certainty bin) is
left out of that cell, and n_seeds says how many runs it averages. `table_with_intervals` adds each cell's
image-bootstrap interval (lo, hi) and the paired comparison with the baseline row (diff, diff_lo, diff_hi,
p_value, p_holm; squidflow.training.table_intervals); the cells then read `0.61 ± 0.02 [0.57, 0.65]`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import polars as pl

from squidflow.encoders.backbone_names import BACKBONE_NAME, BACKBONE_PREFIX, model_label
from squidflow.presentation.table_format import latex_table, md_table, tex_escape, tex_row
from squidflow.statistics.certainty import CERTAINTY_BINS
from squidflow.statistics.intervals import BIAS_ADJUSTED


@dataclass(frozen=True)
class TableSpec:
    name: str
    experiment: str
    metrics: tuple[str, ...]
    headers: tuple[str, ...]
    title: str
    grouped: bool  # one column group per training set (Tables 3, 9) rather than one row per (train set, method)


TABLES = {
    "table1_training": TableSpec(
        "table1_training",
        "classification",
        tuple(f"acc_{b}" for b in CERTAINTY_BINS) + ("avg_acc", "sd_acc"),
        tuple(f"{b}%" for b in CERTAINTY_BINS) + ("Avg. Acc", "SD Acc"),
        "Table 1: accuracy on SQUID-E frames by certainty bin of the mean human judgment, average accuracy on judged "
        "SQUID-E frames, and accuracy on standard-data validation images (SQUID-E §5.1)",
        grouped=False,
    ),
    "table3_calibration": TableSpec(
        "table3_calibration",
        "calibration",
        ("sd_acc", "se_acc", "huj_mse", "ece", "ece_authors"),
        ("SD Acc", "SE Acc", "HUJ MSE", "ECE", "ECE (authors' code)"),
        "Table 3: uncertainty quantification methods against human judgments (SQUID-E §5.3)",
        grouped=True,
    ),
    "table9_kl": TableSpec(
        "table9_kl",
        "calibration",
        ("huj_mse", "kl", "ece", "ece_authors"),
        ("HUJ MSE", "KL", "ECE", "ECE (authors' code)"),
        "Table 9: MSE and KL divergence against human judgments, with ECE (SQUID-E supplement D.4)",
        grouped=True,
    ),
}
METRIC_NAMES = {m: h for spec in TABLES.values() for m, h in zip(spec.metrics, spec.headers, strict=True)}
TRAIN_SET_NAMES = {"SD": "Trained on SD", "SE": "Trained on SQUID-E"}


def aggregate_runs(runs: pl.DataFrame, spec: TableSpec) -> pl.DataFrame:
    """runs: train_set, method, seed, metric, value (one row per run and metric) -> the long RESULT_TABLE."""
    rows = []
    order = {m: i for i, m in enumerate(spec.metrics)}
    for (train_set, method), group in runs.group_by(["train_set", "method"], maintain_order=True):
        for metric in spec.metrics:
            values = group.filter(pl.col("metric") == metric)["value"].to_numpy().astype(float)
            values = values[~np.isnan(values)]
            rows.append(
                {
                    "train_set": train_set,
                    "method": method,
                    "metric": metric,
                    "mean": float(values.mean()) if len(values) else None,
                    "std": float(values.std(ddof=1)) if len(values) > 1 else (0.0 if len(values) else None),
                    "n_seeds": len(values),
                    "_order": order[metric],
                }
            )
    return pl.DataFrame(
        rows,
        schema={
            "train_set": pl.Utf8,
            "method": pl.Utf8,
            "metric": pl.Utf8,
            "mean": pl.Float64,
            "std": pl.Float64,
            "n_seeds": pl.Int64,
            "_order": pl.Int64,
        },
    ).drop("_order")


def _cell(mean, std, lo=None, hi=None, mark: str = "", *, tex: bool = False) -> str:
    """mean ± std over seeds, then the interval when there is one: `0.61 ± 0.02 [0.57, 0.65]`, and the paired
    comparison's mark (`*`: the difference with the baseline row excludes zero; `†`: also after Holm)."""
    if mean is None or np.isnan(mean):
        return "–"
    pm = r" $\pm$ " if tex else " ± "
    text = f"{mean:.2f}{pm}{std:.2f}"
    if lo is not None and hi is not None:
        text += f" [{lo:.2f}, {hi:.2f}]"
    if mark:
        text += "$^{" + mark.replace("†", r"\dagger").replace("‡", r"\ddagger") + "}$" if tex else mark
    return text


def _outside(value, lo, hi) -> bool:
    return None not in (value, lo, hi) and not np.isnan(value) and not lo - 1e-9 <= value <= hi + 1e-9


def outside_rows(table: pl.DataFrame) -> pl.DataFrame:
    """The rows whose estimate lies outside its own interval (the mean outside [lo, hi], or the paired difference
    outside [diff_lo, diff_hi]): the table marks them ‡ and its caption says why."""
    flags = [
        _outside(r["mean"], r.get("lo"), r.get("hi")) or _outside(r.get("diff"), r.get("diff_lo"), r.get("diff_hi"))
        for r in table.iter_rows(named=True)
    ]
    return table.filter(pl.Series(flags, dtype=pl.Boolean))


def _mark(row: dict, alpha: float) -> str:
    mark = ""
    if _outside(row["mean"], row.get("lo"), row.get("hi")) or _outside(
        row.get("diff"), row.get("diff_lo"), row.get("diff_hi")
    ):
        mark = "‡"
    lo, hi = row.get("diff_lo"), row.get("diff_hi")
    if lo is None or hi is None or not (lo > 0 or hi < 0):
        return mark
    p = row.get("p_holm")
    return ("*†" if p is not None and p < alpha else "*") + mark


def _layout(
    table: pl.DataFrame,
    spec: TableSpec,
    method_order: list[str],
    tex: bool,
    alpha: float = 0.05,
    backbone: str | None = None,
) -> tuple[list[str], list[list[str]]]:
    cells = {
        (r["train_set"], r["method"], r["metric"]): (r["mean"], r["std"], r.get("lo"), r.get("hi"), _mark(r, alpha))
        for r in table.iter_rows(named=True)
    }
    train_sets = [t for t in ("SD", "SE") if t in set(table["train_set"])]
    methods = [m for m in method_order if m in set(table["method"])] + sorted(set(table["method"]) - set(method_order))
    if not spec.grouped:
        header = ["Model", *spec.headers]
        body = [
            [model_label(backbone, m), *[_cell(*cells[(t, m, metric)], tex=tex) for metric in spec.metrics]]
            for t in train_sets
            for m in methods
            if (t, m, spec.metrics[0]) in cells
        ]
        return header, body
    header = ["Method", *[f"{h} ({TRAIN_SET_NAMES[t]})" for t in train_sets for h in spec.headers]]
    body = [
        [m, *[_cell(*cells.get((t, m, metric), (None, None)), tex=tex) for t in train_sets for metric in spec.metrics]]
        for m in methods
    ]
    return header, body


def interval_note(table: pl.DataFrame, intervals: Mapping | None, baseline: str | None) -> str:
    """The caption's sentence on what the intervals cover (empty when the table has none)."""
    if intervals is None or "lo" not in table.columns or table["lo"].is_null().all():
        return ""
    level = round(100 * intervals["level"])
    note = (
        f" [lo, hi]: {level}% {intervals['method']} bootstrap interval of the seed mean over the evaluation images "
        f"({intervals['resamples']} resamples, seed {intervals['seed']}, the same resampled images for every "
        "method, seed and measure); it covers the variation of the images only: run seeds are not resampled "
        "(their spread is the ± std) and the human means are held fixed."
    )
    if baseline and "diff" in table.columns and not table["diff"].is_null().all():
        note += (
            f" Paired with the baseline row {baseline} on the same resamples: * the {level}% interval of the "
            f"difference excludes zero, † also significant after Holm's correction over the methods (p < "
            f"{1 - intervals['level']:.2f}); the CSV has diff, diff_lo, diff_hi, p_value (two-sided paired "
            "bootstrap) and p_holm."
        )
    biased = (
        sorted(set(table.filter(pl.col("interval_method") == BIAS_ADJUSTED)["metric"]))
        if "interval_method" in table.columns
        else []
    )
    if biased:
        note += (
            f" {', '.join(METRIC_NAMES.get(m, m) for m in biased)}: binned ECE is biased upward on a resample "
            "(duplicated images fill bins unevenly; the authors' 16-image batches more so), so a percentile or "
            "BCa interval can lie wholly above its own estimate; these get the bias-adjusted percentile interval "
            "(the resampled values less their bootstrap bias, Efron & Tibshirani 1993 §10.2), which describes "
            "the measured value's spread at this number of images; the CSV's bias column is that bias (mean − "
            "bias: the debiased estimate), diff_bias the difference's."
        )
    if len(outside_rows(table)):
        note += (
            " ‡: the estimate lies outside its own interval (the resampled values fall on one side of it: a "
            "measure with few images or a boundary value); read the interval with care."
        )
    return note


def _caption(
    table: pl.DataFrame,
    spec: TableSpec,
    ece_bins: int,
    choices: Mapping | None = None,
    sets: Mapping | None = None,
    intervals: Mapping | None = None,
    baseline: str | None = None,
) -> str:
    seeds = sorted(set(table["n_seeds"].to_list()))
    note = f"Mean ± sample std over {'/'.join(map(str, seeds))} seed(s)."
    note += interval_note(table, intervals, baseline)
    if "ece" in spec.metrics:
        note += f" ECE: top-label, ground-truth labels, {ece_bins} equal-width bins."
    if "kl" in spec.metrics:
        note += " KL(human ‖ model) of Bernoulli distributions, probabilities clipped to [1e-6, 1 - 1e-6]."
    if choices is not None:
        methods = sorted(set(table["method"])) if len(table) else []
        note += " " + choices_text(spec, choices, sets, methods)
    return f"{spec.title}. {note}"


def _listed(names: list[str]) -> str:
    return ", ".join(names)


def choices_text(spec: TableSpec, choices: Mapping, sets: Mapping | None, methods: list[str]) -> str:
    """The sentences of a table's caption that name every definition choice behind its numbers (config key, value,
    and whether it is the SQUID-E authors' setting), the sets' sizes, and what differs from the configuration."""
    out = _sets_text(spec, choices, sets)
    if sets:
        out += _sizes_text(spec, sets)
    out += _trainable_text(choices, methods)
    if spec.experiment == "calibration":
        out += _calibration_text(spec, choices, methods)
    else:
        out += _augment_text(choices, methods)
    out += _models_text(spec, choices)
    return " ".join(out)


def _sets_text(spec: TableSpec, choices: Mapping, sets: Mapping | None) -> list[str]:
    """Where the image sets come from (training.sets), and the leaks of the authors' sets."""
    if choices["sets"] != "authors":
        return [
            "Image sets: clean (training.sets: clean): chosen by video, no SE evaluation image shares a video "
            "with a training image."
        ]
    lists = (
        "indices.json"
        if spec.experiment == "classification"
        else (f"indices_uq.json, target {choices.get('target_event')}")
    )
    out = [
        f"Image sets: the authors' (training.sets: authors): the SE images the release lists ({lists}), "
        "mapped to frames; SD images (not released) drawn by squidflow."
    ]
    for leak in (sets or {}).get("leaks", []):
        out.append(
            f"LEAK in the authors' sets: {leak['rated_in_train']} training images are rated evaluation "
            f"images of the release and {leak['val_sharing_video']} of {leak['n_val']} evaluation images "
            "share a video with a training image; training.sets: clean avoids this."
        )
    return out


def _sizes_text(spec: TableSpec, sets: Mapping) -> list[str]:
    """The sets' sizes, what differs from the configuration, and which human means the labels are."""
    out = []
    counts: dict[tuple, int] = {}
    for c in sets.get("counts", []):
        counts[(c["use"], c["dataset"])] = counts.get((c["use"], c["dataset"]), 0) + c["n"]
    if spec.experiment == "calibration":
        by = {(c["use"], c["dataset"], c["label"]): c["n"] for c in sets.get("counts", [])}
        size = lambda u, d: f"{by.get((u, d, 1), 0)} + {by.get((u, d, 0), 0)}"  # noqa: E731
        out.append(
            f"Sizes (target + other): training SD {size('train', 'SD')}, SE {size('train', 'SE')}; "
            f"evaluation SD {size('eval', 'SD')}, SE {size('eval', 'SE')}."
        )
    else:
        out.append("Sizes: " + ", ".join(f"{u} {d} {n}" for (u, d), n in sorted(counts.items())) + ".")
    if sets.get("notes"):
        out.append(
            "Differences from the configuration: " + " ".join(n if n.endswith(".") else n + "." for n in sets["notes"])
        )
    means = sets.get("human_means")
    if means:
        out.append(
            "Human judgments: "
            + (
                "the mean of every judgment of the image and prompt"
                if means == "all"
                else "means after the annotator-quality step"
            )
            + f" (training.human_means: {means})."
        )
    return out


def _trainable_text(choices: Mapping, methods: list[str]) -> list[str]:
    """Which layers each method trained (training.trainable)."""
    trainable = choices.get("trainable") or {}
    groups: dict[str, list[str]] = {}
    for m in methods:
        groups.setdefault(trainable.get(m, "?"), []).append(m)
    words = {
        "all": "every layer",
        "layer4": "the backbone's last stage (ResNet50 layer4, EfficientNet-Lite0 blocks 5-6) + head",
        "head": "the head only",
    }
    if not groups:
        return []
    return [
        "Trainable layers (training.trainable; the authors': layer4 + head, MC head only): "
        + "; ".join(f"{words.get(k, k)} for {_listed(v)}" for k, v in sorted(groups.items()))
        + "."
    ]


def _calibration_text(spec: TableSpec, choices: Mapping, methods: list[str]) -> list[str]:
    """The calibration experiment's choices: MC's passes and average, RS's scale and smoothing, the authors' ECE."""
    out = []
    if "MC" in methods:
        mc = choices["mc_average"]
        out.append(
            f"MC: {choices['mc_samples']} dropout passes, "
            + ("softmax of the mean logits (the authors')" if mc == "logits" else "mean of the softmax outputs")
            + f" (training.mc_average: {mc})."
        )
    if "RS" in methods:
        rs, ls = choices["rs_scale"], choices["rs_label_smoothing"]
        authors = rs == "raw" and ls == 0.2
        out.append(
            f"RS: logits × {'the raw extra output' if rs == 'raw' else 'softplus of the extra output'}, "
            f"label smoothing {ls} (training.rs_scale: {rs}, rs_label_smoothing: {ls}"
            + ("; the authors'" if authors else "; the authors': raw, 0.2")
            + ")."
        )
    if "ece_authors" in spec.metrics:
        out.append(
            f"ECE (authors' code): torchmetrics 0.8 binary calibration error of P(class 0) against the 0/1 "
            f"label, {choices['authors_ece_bins']} bins, averaged over shuffled batches of "
            f"{choices['authors_ece_batch']} — the quantity the paper's ECE column reports; it "
            "compares P(class 0) with the frequency of class 1, so a confident, correct model scores near 1 "
            "and a constant 0.5 near 0."
        )
    return out


def _augment_text(choices: Mapping, methods: list[str]) -> list[str]:
    """The classification experiment's augmentation geometry (training.augment_geometry), where GA or AU ran."""
    if not {"GA", "AU"} & set(methods):
        return []
    geometry = choices["augment_geometry"]
    return [
        "GA/AU geometry (training.augment_geometry: "
        + geometry
        + "): "
        + (
            "the whole frame resized to a 2·crop short side, RandomPerspective(0.5), RandomCrop(crop) (the authors')"
            if geometry == "whole_frame"
            else "on the cached centre crop (not the authors')"
        )
        + "."
    ]


def _models_text(spec: TableSpec, choices: Mapping) -> list[str]:
    """The backbone behind the classification rows' names, and the demo's warning."""
    out = []
    backbone = choices.get("backbone")
    if backbone and spec.experiment == "classification":
        out.append(
            f"Models: {BACKBONE_PREFIX.get(backbone, backbone)}+<method> = {BACKBONE_NAME.get(backbone, backbone)} "
            f"(training.backbone) trained with that method"
            + ("" if backbone == "resnet50" else " (the paper's RN+ rows are ResNet50)")
            + "."
        )
    if choices.get("judgments_source") == "simulated":
        out.append(
            "Demo: synthetic videos and a SIMULATED annotator panel; the numbers show that the pipeline runs, "
            "not how any model behaves."
        )
    return out


def _alpha(intervals: Mapping | None) -> float:
    return 1 - intervals["level"] if intervals else 0.05


def _baseline(table: pl.DataFrame, method_order: list[str]) -> str | None:
    return next((m for m in method_order if m in set(table["method"])), None)


def to_markdown(
    table: pl.DataFrame,
    spec: TableSpec,
    method_order: list[str],
    ece_bins: int = 10,
    choices: Mapping | None = None,
    sets: Mapping | None = None,
    intervals: Mapping | None = None,
) -> str:
    header, body = _layout(
        table, spec, method_order, tex=False, alpha=_alpha(intervals), backbone=(choices or {}).get("backbone")
    )
    text = _caption(table, spec, ece_bins, choices, sets, intervals, _baseline(table, method_order))
    lines = [f"**{text}**", "", *md_table(header, body)]
    return "\n".join(lines) + "\n"


def to_latex(
    table: pl.DataFrame,
    spec: TableSpec,
    method_order: list[str],
    ece_bins: int = 10,
    choices: Mapping | None = None,
    sets: Mapping | None = None,
    intervals: Mapping | None = None,
) -> str:
    header, body = _layout(
        table, spec, method_order, tex=True, alpha=_alpha(intervals), backbone=(choices or {}).get("backbone")
    )
    return latex_table(
        caption=_caption(table, spec, ece_bins, choices, sets, intervals, _baseline(table, method_order)),
        label=spec.name,
        columns="l" + "c" * (len(header) - 1),
        head=[tex_row(map(tex_escape, header)), r"\midrule"],
        body=[tex_row([tex_escape(row[0]), *row[1:]]) for row in body],
    )


def table_with_intervals(
    runs: pl.DataFrame,
    predictions: Mapping[str, pl.DataFrame],
    spec: TableSpec,
    method_order: list[str],
    intervals: Mapping,
    *,
    ece_bins: int = 10,
    kl_eps: float = 1e-6,
    choices: Mapping | None = None,
) -> pl.DataFrame:
    """The RESULT_TABLE of `runs` (runs_table) with each cell's image-bootstrap interval and the paired
    comparisons with the baseline row (squidflow.training.table_intervals); `predictions`: each run's
    predictions.parquet path -> its frame. The point values are the runs' metrics.json values, unchanged."""
    from squidflow.config.validation import from_section
    from squidflow.statistics.intervals import IntervalConfig
    from squidflow.training.table_intervals import add_intervals

    table = aggregate_runs(runs, spec)
    keyed = {run_of(path): frame for path, frame in predictions.items()}
    choices = choices or {}
    return add_intervals(
        table,
        keyed,
        spec.metrics,
        method_order,
        from_section(IntervalConfig, intervals),
        ece_bins=ece_bins,
        kl_eps=kl_eps,
        authors_ece_bins=choices.get("authors_ece_bins", 5),
        authors_ece_batch=choices.get("authors_ece_batch", 16),
        grouped=spec.grouped,
    )


def run_of(path) -> tuple[str, str, int]:
    """(train_set, method, seed) of a run's file …/runs/{experiment}/{train_set}/{method}/seed{seed}/<file>."""
    from pathlib import Path

    path = Path(path)
    return path.parents[2].name, path.parents[1].name, int(path.parent.name.removeprefix("seed"))


def runs_table(metrics) -> pl.DataFrame:
    """Runs' metrics.json contents, keyed by the file's path (…/runs/{experiment}/{train_set}/{method}/seed{seed}/
    metrics.json, which names the run), as long rows."""
    rows = []
    for path, values in metrics.items():
        train_set, method, seed = run_of(path)
        for metric, value in values.items():
            rows.append(
                {
                    "train_set": train_set,
                    "method": method,
                    "seed": seed,
                    "metric": metric,
                    "value": float("nan") if value is None else float(value),
                }
            )
    return pl.DataFrame(
        rows, schema={"train_set": pl.Utf8, "method": pl.Utf8, "seed": pl.Int64, "metric": pl.Utf8, "value": pl.Float64}
    )
