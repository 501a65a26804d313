"""One look for every squidflow figure: colours anyone can tell apart, type that reads in print, one way to save.

Why a shared module: the report puts figures of every stage side by side, and a reader who learned that orange means
"unavailable" or that variant B is drawn in orange on one figure should not have to relearn it on the next.

- Colours are the Okabe–Ito palette (Okabe and Ito, "Color Universal Design", 2008): its eight colours stay distinct
  under the common colour-vision deficiencies and in greyscale print, and each series also gets its own marker or
  hatch, so no figure relies on colour alone. Continuous values use `cividis` (perceptually uniform, colour-blind
  safe).
- Sizes are those of a printed page: `PAGE_WIDTH_IN` is the text width of a two-column paper (7.2 in), fonts are 8 pt
  at that size, and PNGs are written at `DPI` (200), so a figure pasted into a paper at full width stays sharp.
- `save` writes atomically (a killed job leaves no half-written PNG), and records in the PNG's text chunks how many
  panels the figure has and what it shows, so tests and people can check a figure without comparing pixels.
"""

from __future__ import annotations

from pathlib import Path

OKABE_ITO = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000")
ORANGE, SKY_BLUE, GREEN, YELLOW, BLUE, VERMILLION, PURPLE, BLACK = OKABE_ITO
GREY = "#999999"
# Lines and markers on white: the palette without its yellow, which is too light to read as a thin line in print.
SERIES = (BLUE, ORANGE, GREEN, VERMILLION, SKY_BLUE, PURPLE, BLACK)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
HATCHES = ("", "//", "..", "xx", "\\\\", "++", "oo", "--")
SEQUENTIAL_CMAP = "cividis"

# One colour per meaning, used by every figure that shows it.
STATUS_COLOURS = {"ok": GREEN, "unavailable": ORANGE, "failed": VERMILLION, "corrupt": PURPLE, "pending": GREY}
STATUS_HATCHES = {"ok": "", "unavailable": "//", "failed": "xx", "corrupt": "..", "pending": "--"}
VARIANT_COLOURS = {"A": BLUE, "B": ORANGE}
SPLIT_COLOURS = {"train": BLUE, "val": ORANGE, "test": GREEN}

PAGE_WIDTH_IN = 7.2  # full text width of a two-column paper
COLUMN_WIDTH_IN = 3.4  # one column
DPI = 200
FONT_SIZE = 8

RC = {
    "font.size": FONT_SIZE,
    "axes.titlesize": FONT_SIZE + 1,
    "axes.labelsize": FONT_SIZE,
    "xtick.labelsize": FONT_SIZE - 1,
    "ytick.labelsize": FONT_SIZE - 1,
    "legend.fontsize": FONT_SIZE - 1,
    "figure.titlesize": FONT_SIZE + 2,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.5,
    "lines.linewidth": 1.5,
    "lines.markersize": 4,
    "image.cmap": SEQUENTIAL_CMAP,
    "savefig.dpi": DPI,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.05,
    "figure.dpi": 100,
}

PANELS_KEY = "squidflow:panels"  # PNG text chunk: how many panels (axes) the figure has
TITLE_KEY = "Title"
DESCRIPTION_KEY = "Description"


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend, with the squidflow style applied (safe on headless nodes)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from cycler import cycler

    plt.rcParams.update(RC)
    plt.rcParams["axes.prop_cycle"] = cycler(color=SERIES)
    return plt


def figure(nrows: int = 1, ncols: int = 1, *, width: float = PAGE_WIDTH_IN, height: float | None = None, **kwargs):
    """A figure with `nrows` × `ncols` panels at print size; returns (fig, axes) as plt.subplots does."""
    plt = pyplot()
    height = height if height is not None else min(9.0, 2.4 * nrows + 0.6)
    kwargs.setdefault("constrained_layout", True)
    return plt.subplots(nrows, ncols, figsize=(width, height), squeeze=False, **kwargs)


def panel_letter(ax, index: int) -> None:
    """Bold (a), (b), ... in the panel's top-left corner, so a caption can refer to each panel."""
    title = ax.get_title()
    ax.set_title("")
    ax.set_title(f"({chr(ord('a') + index)}) {title}".rstrip(), loc="left", fontweight="bold")


def interval_bars(ax, x, lo, hi, *, color: str, linewidth: float = 1.0, cap: float = 0.0) -> None:
    """Vertical bars from `lo` to `hi` at `x`: an interval drawn as it is. Matplotlib's `errorbar` takes offsets
    from the estimate and refuses an interval that does not contain it (a bias-adjusted or percentile interval of a
    biased measure can lie beside its estimate); `cap` is the width of the caps in x units (0: none)."""
    import numpy as np

    x, lo, hi = (np.asarray(v, dtype=float) for v in (x, lo, hi))
    ax.vlines(x, lo, hi, colors=color, linewidth=linewidth)
    if cap:
        ends = np.concatenate([lo, hi])
        at = np.concatenate([x, x])
        ax.hlines(ends, at - cap / 2, at + cap / 2, colors=color, linewidth=linewidth)


def note(fig, text: str) -> None:
    """A one-line footnote under the figure (e.g. that the data are synthetic and the judgments simulated)."""
    if text:
        fig.text(0.0, -0.01, text, ha="left", va="top", fontsize=FONT_SIZE - 1, style="italic", wrap=True)


# the stages whose outputs show judgments: a run with none of them (videos + frames) has no judgments to call simulated
JUDGMENT_STAGES = ("judgments", "comparison", "training", "evaluation")


def report_note(kinds: tuple[str, ...], *, source_types: list[str], judgment_source: str, stages: list[str]) -> str:
    """What a figure or page says about its data, empty for real data: `videos` -> SYNTHETIC demo videos (a `demo`
    source); `judgments` (a figure of judgments) -> a SIMULATED annotator panel when they are simulated;
    `run_judgments` (a page about the whole run: the run summary) -> the same, only when the run makes or reads
    judgments (a stage of JUDGMENT_STAGES): a videos + frames run has none to call simulated."""
    notes = []
    if "videos" in kinds and "demo" in source_types:
        notes.append("The videos are SYNTHETIC, made by ffmpeg by the offline demo (squidflow.demo).")
    in_run = "judgments" in kinds or ("run_judgments" in kinds and set(stages) & set(JUDGMENT_STAGES))
    if in_run and judgment_source == "simulated":
        notes.append("The judgments come from a SIMULATED annotator panel, not from people.")
    return " ".join(notes)


def panels(fig) -> int:
    """The panels of `fig`: its visible axes, colour bars not counted."""
    return sum(1 for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>")


def save(fig, path: str | Path, *, title: str = "", description: str = "") -> int:
    """Write `fig` as a PNG at print resolution through io.atomic_path, with its panel count, title and description in
    the PNG's text chunks; close it. Returns the number of panels."""
    from squidflow.contracts.io import atomic_path

    plt = pyplot()
    n = panels(fig)
    metadata = {PANELS_KEY: str(n), "Software": "squidflow"}
    if title:
        metadata[TITLE_KEY] = title
    if description:
        metadata[DESCRIPTION_KEY] = description
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format="png", dpi=DPI, metadata=metadata)
    finally:
        plt.close(fig)
    return n
