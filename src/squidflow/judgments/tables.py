"""Table 7 as a report (SQUID-E supplement Appendix C, Table 7; §4.2 for the intra-annotator Spearman).

`table7` is rule agreement_table's edge: the agreement of the annotators the quality checks keep
(`squidflow.judgments.agreement.agreement_table`, with its bootstrap intervals), the intra-annotator Spearman, the
share of high-certainty images and the excluded annotators, laid out as Markdown beside the paper's numbers
(`PAPER_TABLE7`) with notes on how each number is computed and where it differs from the paper. A variant whose every
annotator is excluded stops the run, or with `on_empty: skip` leaves its row empty with a note.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from squidflow.contracts.io import md_escape
from squidflow.contracts.paths import ANNOTATOR_REPORT_TABLE, recorded_path
from squidflow.judgments.agreement import ALPHA_LEVELS, agreement_table, intra_annotator_rhos
from squidflow.presentation.table_format import md_row, md_rule

PAPER_TABLE7 = {  # SQUID-E supplement, Table 7
    "A": {"spearman": 0.676, "alpha": 0.658, "kappa_3": 0.468, "kappa_4": 0.397, "kappa_5": 0.341},
    "B": {"spearman": 0.631, "alpha": 0.696, "kappa_3": 0.491, "kappa_4": 0.431, "kappa_5": 0.386},
    "A+B": {"spearman": 0.673, "alpha": 0.676, "kappa_3": 0.482, "kappa_4": 0.424, "kappa_5": 0.364},
}
METRICS = ["spearman", "alpha", "kappa_3", "kappa_4", "kappa_5"]

CLOSING_NOTE = """\
How the numbers are computed. An item is an image under one prompt in one HIT; its columns are annotator positions
(the release's huj_0..huj_2, MTurk's assignment order). Spearman is the mean over pairs of positions of the Spearman
correlation across items. α is Krippendorff's interval α. κ is Fleiss' κ on equal-width bins with the lower edge
inclusive and 100 in the last bin (floor(r·k/100)); ceiling binning (upper edge inclusive) gives κ(4), κ(5) 0.004
lower than the paper. A+B pools {pooling}.

Differences from the paper on the release (huj_annotations.csv): α and κ with 4 and 5 bins agree to 0.001 for A and B,
and every A+B value to 0.005 with the `wide` pooling (each image rated in both variants under the same prompt is one
item with six raters; stacking A's items on B's, `concat`, gives α .701 and κ(5) .386 instead, so the paper did not
pool that way). κ with 3 bins is .461 for A (paper .468). Spearman is .664 for A (paper .676) and .609 for B (paper
.631): the release has no annotator ids, only three rating positions per row, while the paper correlated real
annotators; a rating position mixes several workers, which lowers a rank correlation more than α (α does not depend
on who sits in which column).

High certainty: variant A's 16.3% matches the paper's 16%. Variant B's share is over all images shown, half of which
come from the similar event; the paper's 19% matches the share among the ~900 images of the prompted event (172 of
~900), so it was likely computed over those.
"""


def _fmt(v) -> str:
    return "" if v is None or (isinstance(v, float) and not np.isfinite(v)) else f"{v:.3f}"


def _cell(rec: dict, name: str) -> str:
    """`0.658 [0.640, 0.676]` where the row has the measure's interval, the point alone otherwise."""
    from squidflow.statistics.intervals import format_interval

    v, lo, hi = rec.get(name), rec.get(f"{name}_lo"), rec.get(f"{name}_hi")
    if not _fmt(v) or not _fmt(lo) or not _fmt(hi):
        return _fmt(v)
    return format_interval(v, lo, hi, digits=3)


LABELS = {
    "spearman": "Spearman",
    "alpha": "Alpha",
    "alpha_ordinal": "Alpha (ordinal)",
    "alpha_interval": "Alpha (interval, krippendorff pkg)",
}


def _label(name: str) -> str:
    return LABELS.get(name) or (f"Kappa ({name.split('_')[1]} bins)" if name.startswith("kappa_") else name)


def intervals_note(level: float, resamples: int) -> str:
    """What Table 7's intervals cover, for the Markdown and the caption."""
    return (
        f"Brackets: {level:.0%} bootstrap intervals, {resamples} resamples of the images with replacement (an image "
        "brings all its items and the people who rated them; the same draw in every row). They cover the variation "
        "over images and, as each image has its own raters, over raters; raters are not resampled again within an "
        "image (a rater drawn twice would agree with herself and inflate every measure)."
    )


def missing_intervals_note(table: pl.DataFrame) -> str:
    """A sentence for the rows whose measures have a value but no interval, saying which bound of
    squidflow.judgments.agreement left them out; empty when every interval is there."""
    from squidflow.judgments.agreement import INTERVAL_MAX_CELLS, SPEARMAN_INTERVAL_MAX_PAIRS

    if "spearman_lo" not in table.columns:
        return ""
    has_value = pl.col("alpha").is_not_nan() & pl.col("alpha_lo").is_nan()
    none = table.filter(has_value)["variant"].to_list()
    spearman = table.filter(~has_value & pl.col("spearman").is_not_nan() & pl.col("spearman_lo").is_nan())[
        "variant"
    ].to_list()
    out = ""
    if none:
        out += (
            f" Row(s) {', '.join(none)} have no intervals: ratings × resamples exceed {INTERVAL_MAX_CELLS:,} (a panel "
            "where hundreds of workers rated every image); the values are exact."
        )
    if spearman:
        out += (
            f" Spearman has no interval in row(s) {', '.join(spearman)}: more than {SPEARMAN_INTERVAL_MAX_PAIRS:,} "
            "pairs of annotator positions (one per assignment order of a HIT) for the bootstrap; its value is exact."
        )
    return out


def _table7_intro(source: str, note: str, skipped: dict[str, str] | None) -> list[str]:
    """The title, what the judgments are (the simulated panel said so in bold), the intervals' note, skipped rows."""
    simulated = source == "simulated"
    lines = ["# Table 7: inter-annotator agreement" + (" (SIMULATED annotator panel)" if simulated else ""), ""]
    if simulated:
        lines += [
            "**These judgments come from the simulated annotator panel of the offline demo (squidflow.demo.panel), not from",
            "people.** The panel's noise is calibrated on variant A to the release's α and Spearman (their mean); compare",
            "the paper's row to see how close it is.",
            "",
        ]
    lines += [f"Judgments: {md_escape(source)}. Items per row in `n_items`.", ""]
    if note:
        lines += [note, ""]
    for variant, why in (skipped or {}).items():
        lines += [f"**Variant {variant} skipped** (`on_empty: skip`): {md_escape(why)}", ""]
    return lines


def _table7_rows(table: pl.DataFrame) -> list[str]:
    """The table: a row per variant, each followed by the paper's numbers in the same columns where it has them."""
    shown_measures = [m for m in METRICS if m in table.columns]
    extra = [f"alpha_{lv}" for lv in ALPHA_LEVELS if f"alpha_{lv}" in table.columns]
    header = [_label(m) for m in shown_measures] + ["n_items"] + [_label(m) for m in extra]
    lines = [md_row(["Task", *header]), md_rule(len(header) + 1)]
    for rec in table.iter_rows(named=True):
        lines.append(
            md_row(
                [
                    rec["variant"],
                    *(_cell(rec, m) for m in shown_measures),
                    rec["n_items"],
                    *(_cell(rec, m) for m in extra),
                ]
            )
        )
        paper = PAPER_TABLE7.get(rec["variant"])
        if paper:  # the paper's numbers in the same columns, one row under ours
            lines.append(
                md_row(
                    [
                        f"{rec['variant']} (paper, SQUID-E supplement)",
                        *(_fmt(paper.get(m)) or "–" for m in shown_measures),
                        "–",
                        *("–" for _ in extra),
                    ]
                )
            )
    return lines + [""]


def _intra_line(intra: tuple) -> str:
    """Intra-annotator Spearman, `intra` = (mean, n) or (mean, n, lo, hi), against the paper's .788."""
    rho, n, *bounds = intra
    rho_text = f"{rho:.3f}" if not bounds else _cell({"r": rho, "r_lo": bounds[0], "r_hi": bounds[1]}, "r")
    return "Intra-annotator Spearman (SQUID-E §4.2; paper .788): " + (
        f"{rho_text} over {n} annotator(s) who rated the same images twice"
        + (" (interval: bootstrap over those annotators)." if bounds else ".")
        if n
        else "no repeated ratings."
    )


def table7_markdown(
    table: pl.DataFrame,
    *,
    source: str,
    pooling: str,
    intra: tuple = (float("nan"), 0),
    high_certainty: pl.DataFrame | None = None,
    excluded: Sequence[str] = (),
    skipped: dict[str, str] | None = None,
    note: str = "",
    policy: str = "rubric",
    report_name: str = ANNOTATOR_REPORT_TABLE,
) -> str:
    """Table 7 as Markdown; annotator ids and other data are escaped (squidflow.contracts.io.md_escape). `skipped` maps a
    variant to why its row is empty (`on_empty: skip`). `intra` is (mean, n) or (mean, n, lo, hi); `note` says what
    the intervals cover (intervals_note)."""
    lines = _table7_intro(source, note, skipped) + _table7_rows(table) + [_intra_line(intra)]
    if high_certainty is not None and len(high_certainty):
        parts = [
            f"{r['variant']}: {r['share']:.1%} of {r['n_images']} images" for r in high_certainty.iter_rows(named=True)
        ]
        lines += ["", "High-certainty images (mean ≥ 95; paper: A 16%, B 19%): " + "; ".join(parts) + "."]
    shown = ", ".join(md_escape(a) for a in excluded) or "none"
    checks = "quality checks" if policy == "rubric" else "quality checks and rater triage"
    lines += [
        "",
        f"Excluded annotators ({checks}, {md_escape(recorded_path(str(report_name)))}; policy judgments.quality.exclude: "
        f"{policy}): " + shown + ".",
    ]
    pooled = (
        "images rated in both variants under the same prompt as one item with six raters (A's positions and B's)"
        if pooling == "wide"
        else "A's items stacked on B's items (three positions each)"
    )
    lines += ["", "## Notes", "", CLOSING_NOTE.format(pooling=pooled)]
    return "\n".join(lines)


def empty_variants(
    judgments: pl.DataFrame, excluded: list[str], report_path: str = "annotator_report.parquet"
) -> dict[str, str]:
    """Variants with judgments whose every annotator is excluded, each with a sentence saying so and where to look.

    (A variant nobody was asked to rate is not listed: its row is simply empty.) With no judgment at all, both are.
    """
    out = {}
    if judgments.is_empty():
        return {v: "no judgment was read (results/judgments/ingest_report.md)." for v in ("A", "B")}
    for variant in ("A", "B"):
        raters = set(judgments.filter(pl.col("variant") == variant)["annotator"].to_list())
        if raters and raters <= set(excluded):
            out[variant] = (
                f"every one of its {len(raters)} annotator(s) is excluded by the quality checks (judgments.quality); "
                f"their flags are in {report_path}."
            )
    return out


def table7(
    judgments: pl.DataFrame,
    report: pl.DataFrame,
    high_certainty: pl.DataFrame,
    *,
    report_name: str = "annotator_report.parquet",
    pooling="wide",
    kappa_bins=(3, 4, 5),
    on_empty: str = "error",
    intervals=None,
    policy: str = "rubric",
) -> tuple[pl.DataFrame, str]:
    """The rule's edge: Table 7 over the judgments of annotators not excluded -> (the CSV's table, the Markdown).

    A variant whose every annotator is excluded stops the run (EmptyError naming `report_name`, the annotator
    report's file) unless `on_empty="skip"`, which leaves its row empty with a note in the Markdown. With `intervals`
    (squidflow.statistics.intervals.IntervalConfig) every measure has its interval (agreement_table) and so has the
    intra-annotator Spearman (bootstrap over the annotators who rated twice). `high_certainty` is
    results/judgments/high_certainty.csv as read.
    """
    from squidflow.errors import EmptyError
    from squidflow.judgments.waves import first_wave

    judgments = first_wave(judgments)  # Table 7 is the first wave's, as in the paper; next rounds are soft labels'
    excluded = report.filter(pl.col("excluded"))["annotator"].to_list()
    skipped = empty_variants(judgments, excluded, report_name)
    if skipped and on_empty != "skip":
        variant, why = next(iter(skipped.items()))
        raise EmptyError(
            f"Table 7, variant {variant}: {why} Loosen judgments.quality (max_violations, controls), or set "
            "`on_empty: skip` to write Table 7 without that row."
        )
    kept = judgments.filter(~pl.col("annotator").is_in(excluded))
    table = agreement_table(kept, pooling=pooling, kappa_bins=kappa_bins, intervals=intervals)
    source = ",".join(sorted(judgments["source"].unique().to_list())) or "none"
    rhos = intra_annotator_rhos(kept)
    intra: tuple[float, ...] = (float(np.mean(rhos)) if len(rhos) else float("nan"), len(rhos))
    if intervals is not None and len(rhos) >= 2:
        from squidflow.statistics.intervals import mean_interval

        intra = (*intra, *mean_interval(rhos, intervals)[1:])
    md = table7_markdown(
        table,
        source=source,
        pooling=pooling,
        intra=intra,
        high_certainty=high_certainty,
        excluded=excluded,
        skipped=skipped,
        note=(intervals_note(intervals.level, intervals.resamples) + missing_intervals_note(table))
        if intervals is not None
        else "",
        policy=policy,
        report_name=report_name,
    )
    return table.drop("n_items"), md
