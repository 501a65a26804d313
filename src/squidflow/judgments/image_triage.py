"""Image triage: each image with a reason (issue #36) — clear, ambiguous, contested or undecided.

Per image and prompt (round 1, both variants): the people's mean with its bootstrap interval over the image's own
raters (`squidflow.statistics.intervals.rater_resamples`, config `intervals`), their spread (standard deviation), the spread
once the raters the triage calls suspect or careless are left out, the gap between variants A and B, and where a model
exists its distance to the people and CROWDLAB's consensus quality. Then, in this order:

- `contested`: the people disagree (spread ≥ `judgments.triage.min_spread`), but not once suspect and careless raters
  are left out — the spread came from them;
- `undecided`: the interval of the mean is wider than `judgments.triage.max_interval_width` — too few ratings to say;
- `ambiguous`: the disagreement is there and survives leaving suspect raters out (SQUID-E's premise: real signal);
- `clear`: the people agree.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import numpy as np
import polars as pl

from squidflow.config.validation import from_section
from squidflow.contracts import schemas
from squidflow.contracts.paths import job_file
from squidflow.judgments.triage import TriageConfig, first_round
from squidflow.presentation.table_format import md_row, md_rule
from squidflow.statistics.intervals import IntervalConfig, rater_resamples

IMAGE = ["video_id", "frame_index", "event_prompt"]
CLASSES = ("clear", "ambiguous", "contested", "undecided")
CHUNK = 500  # images per bootstrap chunk: bounds memory on the release's 1,800 images


def mean_intervals(ratings: np.ndarray, cfg: IntervalConfig) -> tuple[np.ndarray, np.ndarray]:
    """(n, R) ratings with NaN -> (lo, hi) of each image's mean: its raters redrawn with replacement, B times."""
    lo, hi = np.full(len(ratings), np.nan), np.full(len(ratings), np.nan)
    q = [(1 - cfg.level) / 2, (1 + cfg.level) / 2]
    for start in range(0, len(ratings), CHUNK):
        r = ratings[start : start + CHUNK]
        index = np.broadcast_to(np.arange(len(r)), (cfg.resamples, len(r)))
        means = np.nanmean(rater_resamples(r, cfg, index, replace=True), axis=-1)  # (B, n)
        lo[start : start + CHUNK], hi[start : start + CHUNK] = np.quantile(means, q, axis=0)
    return lo, hi


def _padded(groups: list[list[float]]) -> np.ndarray:
    width = max((len(g) for g in groups), default=1)
    out = np.full((len(groups), max(width, 1)), np.nan)
    for i, g in enumerate(groups):
        out[i, : len(g)] = g
    return out


def classify(row: dict, cfg: TriageConfig) -> tuple[str, str]:
    spread, screened, width = row["spread"], row["spread_screened"], row["interval_width"]
    disagree = spread is not None and np.isfinite(spread) and spread >= cfg.min_spread
    removed = row["n_screened"] < row["n"]
    if disagree and removed and (screened is None or not np.isfinite(screened) or screened < cfg.min_spread):
        left = "too few ratings left" if screened is None or not np.isfinite(screened) else f"{screened:.0f}"
        return "contested", (
            f"spread {spread:.0f} comes from {row['n'] - row['n_screened']} suspect or careless "
            f"rater(s): without them {left}"
        )
    if width is None or not np.isfinite(width) or width > cfg.max_interval_width:
        w = "no interval" if width is None or not np.isfinite(width) else f"interval of the mean {width:.0f} wide"
        return "undecided", f"{w} (> {cfg.max_interval_width:g}) from {row['n']} rating(s)"
    if disagree:
        return "ambiguous", f"spread {spread:.0f} (≥ {cfg.min_spread:g}), {screened:.0f} without suspect raters"
    return "clear", f"spread {spread:.0f} (< {cfg.min_spread:g}), interval {width:.0f} wide"


def _screened(r1: pl.DataFrame, triage: pl.DataFrame, consensus: pl.DataFrame | None) -> pl.DataFrame:
    """First-round ratings with `_suspect` (the rater triage's verdict is not ok) and CROWDLAB's consensus quality
    of the item (null without a model)."""
    suspect = (
        triage.filter(pl.col("verdict") != "ok")
        .select("annotator", "variant")
        .with_columns(pl.lit(True).alias("_suspect"))
    )
    r1 = r1.join(suspect, on=["annotator", "variant"], how="left", maintain_order="left").with_columns(
        pl.col("_suspect").fill_null(False)
    )
    if consensus is not None:
        return r1.join(consensus, on="item", how="left", maintain_order="left")
    return r1.with_columns(pl.lit(None, pl.Float64).alias("crowdlab_consensus_quality"))


def _per_image(r1: pl.DataFrame, intervals: IntervalConfig) -> pl.DataFrame:
    """Per image and prompt: the people's mean with its interval, their spread with and without the suspect raters,
    the gap between variants A and B."""
    per = (
        r1.group_by(IMAGE, maintain_order=True)
        .agg(
            pl.len().alias("n"),
            pl.col("rating").cast(pl.Float64).alias("_r"),
            pl.col("rating").cast(pl.Float64).mean().alias("mean"),
            pl.col("rating").cast(pl.Float64).std().alias("spread"),
            pl.col("rating").filter(~pl.col("_suspect")).cast(pl.Float64).std().alias("spread_screened"),
            (~pl.col("_suspect")).sum().cast(pl.Int64).alias("n_screened"),
            pl.col("rating").filter(pl.col("variant") == "A").cast(pl.Float64).mean().alias("mean_A"),
            pl.col("rating").filter(pl.col("variant") == "B").cast(pl.Float64).mean().alias("mean_B"),
            pl.col("crowdlab_consensus_quality").mean(),
        )
        .sort(IMAGE)
    )
    lo, hi = mean_intervals(_padded(per["_r"].to_list()), intervals)
    return (
        per.drop("_r")
        .with_columns(pl.Series("mean_lo", lo), pl.Series("mean_hi", hi))
        .with_columns(
            (pl.col("mean_hi") - pl.col("mean_lo")).alias("interval_width"),
            (pl.col("mean_A") - pl.col("mean_B")).abs().alias("variant_gap"),
        )
    )


def image_triage(
    judgments: pl.DataFrame,
    triage: pl.DataFrame,
    cfg: TriageConfig,
    *,
    intervals: IntervalConfig | None = None,
    probability: pl.DataFrame | None = None,
    consensus: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """One row per image and prompt (schemas.IMAGE_TRIAGE). `triage`: schemas.RATER_TRIAGE (its verdicts screen);
    `probability`: (video_id, frame_index, event_prompt, probability) of a model; `consensus`: CROWDLAB's consensus
    quality per triage item (item, crowdlab_consensus_quality)."""
    r1 = first_round(judgments)
    if r1.is_empty():
        return schemas.empty(schemas.IMAGE_TRIAGE)
    per = _per_image(_screened(r1, triage, consensus), intervals or from_section(IntervalConfig, None))
    if probability is not None:
        per = per.join(
            probability.select(*IMAGE, pl.col("probability").alias("model_probability")),
            on=IMAGE,
            how="left",
            maintain_order="left",
        )
    else:
        per = per.with_columns(pl.lit(None, pl.Float64).alias("model_probability"))
    per = per.with_columns(((100 * pl.col("model_probability") - pl.col("mean")).abs() / 100).alias("model_distance"))
    classes = [classify(r, cfg) for r in per.iter_rows(named=True)]
    per = per.with_columns(
        pl.Series("triage", [c for c, _ in classes], pl.Utf8), pl.Series("reason", [r for _, r in classes], pl.Utf8)
    )
    return per.select(list(schemas.IMAGE_TRIAGE.columns)).cast(pl.Schema(schemas.IMAGE_TRIAGE.columns))


def _sheet_rows(images: pl.DataFrame, frames: pl.DataFrame | None, per_class: int) -> dict[str, pl.DataFrame]:
    """class -> its up to `per_class` images with a frame to show (`image_path`), the widest spreads first; a class
    with none is left out, so the contact sheet has no empty row."""
    if frames is None or frames.is_empty():
        return {}
    paths = frames.select("video_id", "frame_index", "image_path").unique(["video_id", "frame_index"], keep="first")
    shown = images.join(paths, on=["video_id", "frame_index"], how="inner", maintain_order="left").filter(
        pl.col("image_path").is_not_null()
    )
    rows = {
        c: shown.filter(pl.col("triage") == c).sort("spread", descending=True, nulls_last=True).head(per_class)
        for c in CLASSES
    }
    return {c: d for c, d in rows.items() if d.height}


def _image_title(c: str, r: dict) -> str:
    """A contact-sheet frame's title: its class, mean ± spread, and its event prompt in full (wrapped, two lines at
    most: the prompt is what the people rated the image against)."""
    import textwrap

    prompt = textwrap.fill(str(r["event_prompt"]), 26, max_lines=2, placeholder="…")
    return f"{c}: {r['mean']:.0f}±{r['spread']:.0f}\n{prompt}"


def triage_figure(
    images: pl.DataFrame, path: str | Path, *, frames: pl.DataFrame | None = None, per_class: int = 6, note: str = ""
) -> int:
    """Spread against the interval's width, coloured by class; with frames, a contact sheet of up to `per_class`
    images per class that has images to show (`_sheet_rows`), each titled with its prompt. Returns the panel count
    (style.save)."""
    from PIL import Image

    from squidflow.presentation import style

    sheet = _sheet_rows(images, frames, per_class)
    rows = 1 + len(sheet)
    fig, grid = style.figure(rows, per_class if sheet else 1, height=1.1 * rows + 1.4)
    spec = grid[0, 0].get_gridspec()
    for ax in grid[0]:
        ax.remove()
    top = fig.add_subplot(spec[0, :])
    colours = dict(zip(CLASSES, style.SERIES, strict=False))
    for c in CLASSES:
        d = images.filter(pl.col("triage") == c)
        top.scatter(
            d["interval_width"].to_numpy(), d["spread"].to_numpy(), s=6, color=colours[c], label=f"{c} ({len(d)})"
        )
    top.set_xlabel("width of the mean's interval (rating points)")
    top.set_ylabel("spread (SD)")
    top.legend(loc="best", fontsize=6)
    for k, (c, d) in enumerate(sheet.items(), start=1):
        for i, ax in enumerate(grid[k]):
            ax.set_axis_off()
            if i < d.height:
                r = d.row(i, named=True)
                with Image.open(job_file(r["image_path"])) as im:
                    ax.imshow(im.convert("RGB"))
                ax.set_title(_image_title(c, r), fontsize=5)
    if note:
        style.note(fig, note)
    counts = ", ".join(f"{(images['triage'] == c).sum()} {c}" for c in CLASSES)
    return style.save(fig, path, title="Image triage", description=f"{len(images)} images: {counts}")


def _median(d: pl.DataFrame, column: str) -> str:
    values = d[column].drop_nulls()
    return "–" if values.is_empty() else f"{cast(float, values.median()):.1f}"


def image_triage_markdown(
    images: pl.DataFrame, *, policy: str, source: str, cfg: TriageConfig, per_class: int = 5
) -> str:
    """Counts per class with the median spread and interval width, then the widest-spread images of each class."""
    from squidflow.contracts.io import md_escape

    sim = " — SIMULATED annotator panel" if "simulated" in source else ""
    lines = [
        f"# Image triage: clear, ambiguous, contested, undecided{sim}",
        "",
        f"Judgments: {md_escape(source)}; {len(images)} images × prompts. Disputed: spread ≥ {cfg.min_spread:g}; "
        f"undecided: the mean's interval wider than {cfg.max_interval_width:g}. Suspect and careless raters: "
        f"results/judgments/rater_triage.parquet (exclusion policy {policy}).",
        "",
        md_row(["class", "images", "share", "median spread", "median interval width"]),
        md_rule(5),
    ]
    for c in CLASSES:
        d = images.filter(pl.col("triage") == c)
        share = len(d) / len(images) if len(images) else float("nan")
        lines.append(md_row([c, len(d), f"{share:.1%}", _median(d, "spread"), _median(d, "interval_width")]))
    lines += ["", md_row(["class", "image", "prompt", "n", "mean", "spread", "reason"]), md_rule(7)]
    for c in CLASSES:
        d = images.filter(pl.col("triage") == c).sort("spread", descending=True, nulls_last=True).head(per_class)
        for r in d.to_dicts():
            lines.append(
                md_row(
                    [
                        c,
                        f"{md_escape(r['video_id'])}_{r['frame_index']}",
                        md_escape(r["event_prompt"]),
                        r["n"],
                        f"{r['mean']:.1f}",
                        r["spread"] if r["spread"] is None else round(r["spread"], 1),
                        md_escape(r["reason"]),
                    ]
                )
            )
    return "\n".join(lines) + "\n"
