"""Tables 2 and 8 of SQUID-E (Sanders et al., 2022): verb accuracy by certainty bin, §5.2 and supplement D.3.

The CSV is long (schemas.MODEL_ACCURACY: model, top, binning, bin, accuracy, n, lo, hi — lo/hi the
image-bootstrap interval of config `intervals`), one row per cell, easy to plot or join; Markdown and LaTeX lay it out the way the paper does: one block per `top` (1, then k), one row per model
(Table 8: per model and binning), the five certainty bins and the average as columns, each cell the accuracy with
its number of data points. Table 2 adds each model's `reference_accuracy` (the standard-data accuracy its paper
reports, SWiG for the situation-recognition models) when one is configured.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from squidflow.presentation.table_format import latex_table, md_table, tex_escape, tex_row
from squidflow.statistics.certainty import AVERAGE, CERTAINTY_BINS

TABLES = ("table2_verbs", "table8_alt_bins")
BINNING_NAMES = {"mean": "Mean", "alt": "Alt"}
SOURCES = {
    "simulated": "SIMULATED judgments (the offline demo's simulated annotator panel) on synthetic demo videos",
    "mturk": "MTurk judgments",
    "release": "the SQUID-E release's human judgments",
}


@dataclass(frozen=True)
class ModelInfo:
    name: str
    reference_accuracy: float | None = None
    demo: bool = False  # a classifier of the offline demo, trained on synthetic frames


def long_table(accuracies: list[pl.DataFrame], table: str) -> pl.DataFrame:
    """The models' MODEL_ACCURACY rows of one table: Table 2 keeps the mean binning, Table 8 both."""
    if table not in TABLES:
        raise ValueError(f"table {table!r}: must be one of {TABLES}")
    if not accuracies:
        return pl.DataFrame(
            schema={
                "model": pl.Utf8,
                "top": pl.Int64,
                "binning": pl.Utf8,
                "bin": pl.Utf8,
                "accuracy": pl.Float64,
                "n": pl.Int64,
                "lo": pl.Float64,
                "hi": pl.Float64,
            }
        )
    df = pl.concat(
        [
            a
            if "lo" in a.columns
            else a.with_columns(pl.lit(None, dtype=pl.Float64).alias("lo"), pl.lit(None, dtype=pl.Float64).alias("hi"))
            for a in accuracies
        ]
    )
    return df.filter(pl.col("binning") == "mean") if table == "table2_verbs" else df


def _cell(accuracy, n, lo=None, hi=None, tex: bool = False) -> str:
    """`0.61 (120)`, or with its interval `0.61 [0.57, 0.65] (120)`."""
    if accuracy is None or n == 0:
        return "–"
    if lo is None or hi is None:
        return f"{accuracy:.2f} ({n})"
    return f"{accuracy:.2f} [{lo:.2f}, {hi:.2f}] ({n})"


def image_groups(df: pl.DataFrame, models: list[ModelInfo]) -> dict[int, list[ModelInfo]]:
    """The models by how many images they were scored on (their top-1, mean-binning average's data points), in model
    order: classifiers scored on the test split's images and text baselines on every judged image do not share one
    average."""
    scored = (
        {
            r["model"]: r["n"]
            for r in df.filter((pl.col("bin") == AVERAGE) & (pl.col("binning") == "mean"))
            .sort("top")
            .unique("model", keep="first", maintain_order=True)
            .iter_rows(named=True)
        }
        if len(df)
        else {}
    )
    groups: dict[int, list[ModelInfo]] = {}
    for m in models:
        groups.setdefault(int(scored.get(m.name) or 0), []).append(m)
    return groups


def _rows(df: pl.DataFrame, models: list[ModelInfo], table: str, tex: bool) -> tuple[list[str], list[list[str]]]:
    cells = {
        (r["model"], r["top"], r["binning"], r["bin"]): (r["accuracy"], r["n"], r.get("lo"), r.get("hi"))
        for r in df.iter_rows(named=True)
    }
    with_reference = table == "table2_verbs" and any(m.reference_accuracy is not None for m in models)
    groups = image_groups(df, models)
    header = [
        "Model",
        *(["Bins"] if table == "table8_alt_bins" else []),
        *[f"{b}%" for b in CERTAINTY_BINS],
        "Avg." if len(groups) < 2 else "Avg. (own images)",
        *(["SD Acc."] if with_reference else []),
    ]
    tops = sorted(set(df["top"].to_list())) if len(df) else []
    binnings = ["mean"] if table == "table2_verbs" else ["mean", "alt"]
    body: list[list[str]] = []
    for top in tops:
        body.append([f"Accuracy (top {top})", *[""] * (len(header) - 1)])
        for binning in binnings:
            for n_images, group in groups.items():
                if len(groups) > 1:  # models scored on different images: one block each, never one average
                    body.append([f"scored on {n_images} images", *[""] * (len(header) - 1)])
                for m in group:
                    label = m.name + (" (demo)" if m.demo else "")
                    row = [label, *([BINNING_NAMES[binning]] if table == "table8_alt_bins" else [])]
                    row += [
                        _cell(*cells.get((m.name, top, binning, b), (None, 0, None, None)), tex=tex)
                        for b in (*CERTAINTY_BINS, AVERAGE)
                    ]
                    if with_reference:
                        row.append("–" if m.reference_accuracy is None else f"{m.reference_accuracy:.2f}")
                    body.append(row)
    return header, body


def _summary_notes(summaries: list[dict]) -> list[str]:
    """Per model, what was left out (judged images without prediction, labels outside the vocabulary), and the
    label-map labels no model can predict."""
    parts = []
    for s in summaries:
        notes = []
        if s.get("judged_images_without_prediction"):
            notes.append(
                f"{s['judged_images_without_prediction']} of {s['judged_images']} judged images without prediction (left out)"
            )
        outside = s.get("predicted_labels_outside_vocabulary") or []
        if s.get("vocabulary") is not None:
            notes.append(
                f"{len(outside)} predicted label(s) in {s['prediction_rows_outside_vocabulary']} rows outside the "
                f"{s['vocabulary_size']}-label vocabulary"
                + (f" ({', '.join(outside[:5])}{', …' if len(outside) > 5 else ''})" if outside else "")
            )
        if notes:
            parts.append(f"{s['model']}: " + "; ".join(notes) + ".")
    map_outside = sorted({lab for s in summaries for lab in (s.get("map_labels_outside_vocabulary") or [])})
    if map_outside:
        parts.append(f"Label-map labels outside the vocabulary (never predictable): {', '.join(map_outside)}.")
    return parts


def caption(
    table: str,
    models: list[ModelInfo],
    *,
    variant: str,
    top_k: int,
    label_map: dict,
    source: str,
    summaries: list[dict],
    intervals: dict | None = None,
    df: pl.DataFrame | None = None,
) -> str:
    """What the table reproduces, how its numbers are computed, what is simulated, and what was left out (`df`, the
    long table, says whether the models were scored on different images)."""
    title = (
        "Table 2: accuracy of models on SQUID-E images by certainty bin of the mean human judgment (SQUID-E §5.2)"
        if table == "table2_verbs"
        else "Table 8: accuracy by certainty bin, mean bins and alt bins where every (image, judgment) pair is its own "
        "data point (SQUID-E supplement D.3)"
    )
    events = ", ".join(f"{e} → {'/'.join(v)}" for e, v in label_map.items())
    parts = [
        f"{title}.",
        f"Images: those whose variant {variant} judgment prompts an event of the label map ({events}); a prediction "
        f"is correct when its rank-1 label (top 1) or any label ranked 1..{top_k} (top {top_k}) is one of its event's "
        "labels. Cells: accuracy (data points); Avg.: all data points."
        + (
            " The models were scored on different images (a classifier on its test split, a text baseline on every "
            "judged image): each block holds the models scored on that many images, and each Avg. is over the model's "
            "own images, so compare averages only within a block."
            if df is not None and len(image_groups(df, models)) > 1
            else ""
        ),
        f"Judgments: {SOURCES.get(source, source)}.",
    ]
    if table == "table8_alt_bins":
        parts.append("Alt rows count an image once per judgment, in that judgment's bin.")
    if intervals:
        parts.append(
            f"[lo, hi]: {round(100 * intervals['level'])}% {intervals['method']} bootstrap interval over the "
            f"model's scored images ({intervals['resamples']} resamples, seed {intervals['seed']}"
            + ("; an alt-binned image brings all its judgments" if table == "table8_alt_bins" else "")
            + "); it covers the variation of the images only: each image's certainty bin (the people's "
            "judgments) is held fixed."
        )
    if any(m.reference_accuracy is not None for m in models) and table == "table2_verbs":
        parts.append("SD Acc.: the standard-data accuracy reported for the model (configured, not measured here).")
    if any(m.demo for m in models):
        parts.append("(demo) models are this workflow's own, trained or run on the offline demo's synthetic videos.")
    parts += _summary_notes(summaries)
    if not models:
        parts.append(
            "No models: add predictions files under evaluation.models (docs/evaluation.md, 'Evaluate your own model')."
        )
    return " ".join(parts)


def to_markdown(df: pl.DataFrame, models: list[ModelInfo], table: str, text: str) -> str:
    header, body = _rows(df, models, table, tex=False)
    lines = [f"**{text}**", "", *md_table(header, body, data=(0,))]  # a model's name is data
    return "\n".join(lines) + "\n"


def to_latex(df: pl.DataFrame, models: list[ModelInfo], table: str, text: str) -> str:
    header, body = _rows(df, models, table, tex=True)
    lines = []
    for row in body:
        if row[0].startswith("Accuracy (top"):
            lines += [r"\midrule", r"\multicolumn{" + str(len(header)) + "}{l}{" + tex_escape(row[0]) + r"} \\"]
        else:
            lines.append(tex_row(map(tex_escape, row)))
    return latex_table(
        caption=text,
        label=table,
        columns="l" + "c" * (len(header) - 1),
        head=[tex_row(map(tex_escape, header))],
        body=lines,
    )


def build_table(
    accuracies: list[pl.DataFrame],
    summaries: list[dict],
    models: list[ModelInfo],
    table: str,
    *,
    variant: str,
    top_k: int,
    label_map: dict,
    source: str,
    intervals: dict | None = None,
) -> tuple[pl.DataFrame, str, str]:
    """(long CSV frame, Markdown, LaTeX) of Table 2 or 8, models in the configured order."""
    order = {m.name: i for i, m in enumerate(models)}
    df = long_table(accuracies, table)
    if len(df):
        bin_order = {b: i for i, b in enumerate((*CERTAINTY_BINS, AVERAGE))}
        df = (
            df.with_columns(
                pl.col("model").replace_strict(order, default=len(order)).alias("_m"),
                pl.col("bin").replace_strict(bin_order, default=99).alias("_b"),
                (pl.col("binning") == "alt").alias("_a"),
            )
            .sort("_m", "top", "_a", "_b")
            .drop("_m", "_b", "_a")
        )
    has_intervals = len(df) > 0 and "lo" in df.columns and not df["lo"].is_null().all()
    text = caption(
        table,
        models,
        variant=variant,
        top_k=top_k,
        label_map=label_map,
        source=source,
        summaries=summaries,
        intervals=intervals if has_intervals else None,
        df=df,
    )
    return df, to_markdown(df, models, table, text), to_latex(df, models, table, text)
