"""The keyword table: tf, tf·idf, random and the human upper bound under each preprocessing setting, scored with
the SemEval best/oot measures against people's keywords ("Apples to Oranges", its UNT results table).

Gold keywords are normalised by each setting as the system's terms are (a stemmed setting is compared with stemmed
gold); an annotator's repeated keyword counts once; only the first round of the keyword task is gold.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from squidflow.presentation.table_format import latex_table, md_escape, md_table, tex_escape, tex_row
from squidflow.text.keywords import SYSTEMS
from squidflow.text.preprocess import Normaliser, Preprocessing
from squidflow.text.semeval import MEASURES, human_upper_bound, system_scores

SCORE_COLUMNS = [f"{m}_{pr}" for m in MEASURES for pr in ("p", "r")]
TABLE_COLUMNS = ["system", "setting", "n_items", *SCORE_COLUMNS]
INTERVAL_TABLE_COLUMNS = [
    "system",
    "setting",
    "n_items",
    *[x for c in SCORE_COLUMNS for x in (c, f"{c}_lo", f"{c}_hi")],
]
TABLE_SCHEMA = {"system": pl.Utf8, "setting": pl.Utf8, "n_items": pl.Int64, **{c: pl.Float64 for c in SCORE_COLUMNS}}
SYSTEM_NAMES = {"tf": "tf", "tfidf": "tf·idf", "random": "random", "human": "human (leave one out)"}


def gold_by_annotator(
    gold: pl.DataFrame, setting: Preprocessing, *, language: str = "en"
) -> dict[str, dict[str, list[str]]]:
    """image -> annotator -> keywords normalised by `setting`, in the order typed (first round only)."""
    normaliser = Normaliser(setting, language)
    out: dict[str, dict[str, list[str]]] = {}
    rows = gold.filter(pl.col("round") == 1).sort("video_id", "frame_index", "annotator", "position")
    for vid, fi, annotator, normalised in rows.select("video_id", "frame_index", "annotator", "normalised").iter_rows():
        phrase = normaliser.phrase(normalised, language)
        if phrase:
            out.setdefault(f"{vid}_{fi}", {}).setdefault(annotator, []).append(phrase)
    return out


def keyword_table(
    keywords: pl.DataFrame,
    gold: pl.DataFrame,
    settings: list[Preprocessing],
    *,
    gold_language: str = "en",
    intervals=None,
) -> pl.DataFrame:
    """One row per (setting, system) with the eight SemEval scores in percent (CSV columns: TABLE_COLUMNS).

    With `intervals` (squidflow.statistics.intervals.IntervalConfig) each score has `<score>_lo` / `<score>_hi`: the percentile
    interval over resamples of the images (one index matrix for the table: every row, setting and system is scored on
    the same resampled images; the human row's held-out annotators come with their image).
    """
    from squidflow.text.semeval import gold_counts, human_terms, system_terms

    rows, terms = [], []
    for setting in settings:
        by_ann = gold_by_annotator(gold, setting, language=gold_language)
        counts = gold_counts(by_ann)
        mine = keywords.filter(pl.col("setting") == setting.name).sort("image_id", "system", "rank")
        for system in SYSTEMS:
            ranked: dict[str, list[str]] = {}
            for img, kw in mine.filter(pl.col("system") == system).select("image_id", "keyword").iter_rows():
                ranked.setdefault(img, []).append(kw)
            rows.append({"system": system, "setting": setting.name, **system_scores(counts, ranked)})
            terms.append(system_terms(counts, ranked))
        rows.append({"system": "human", "setting": setting.name, **human_upper_bound(by_ann)})
        terms.append(human_terms(by_ann))
    table = (
        pl.DataFrame(rows)
        .select("system", "setting", "n_items", *[(pl.col(c) * 100).alias(c) for c in SCORE_COLUMNS])
        .cast(pl.Schema(TABLE_SCHEMA))
    )
    if intervals is None:
        return table
    return _with_intervals(table, terms, intervals)


def _with_intervals(table: pl.DataFrame, terms: list[tuple[list[str], np.ndarray]], cfg) -> pl.DataFrame:
    from squidflow.statistics.intervals import counts, image_resamples, interval_from
    from squidflow.text.semeval import scores_from_terms

    images = sorted({i for items, _ in terms for i in items})
    position = {img: k for k, img in enumerate(images)}
    drawn = counts(image_resamples(len(images), cfg), len(images))  # B × images
    bounds = []
    for (items, row_terms), rec in zip(terms, table.iter_rows(named=True), strict=True):
        reps = scores_from_terms(row_terms, drawn[:, [position[i] for i in items]])
        row = {}
        for c in SCORE_COLUMNS:
            point = rec[c] if rec[c] is not None else float("nan")
            _, lo, hi = interval_from(point, 100 * reps[c], cfg)
            row[f"{c}_lo"], row[f"{c}_hi"] = lo, hi
        bounds.append(row)
    wide = pl.concat(
        [table, pl.DataFrame(bounds, schema={f"{c}_{e}": pl.Float64 for c in SCORE_COLUMNS for e in ("lo", "hi")})],
        how="horizontal",
    )
    return wide.select(INTERVAL_TABLE_COLUMNS)


def _fmt(v) -> str:
    return "–" if v is None else f"{v:.2f}"


def _cell(rec: dict, column: str) -> str:
    """`12.34 [10.10, 14.60]` where the row has the score's interval, the score alone otherwise."""
    from squidflow.statistics.intervals import format_interval

    if rec[column] is None or f"{column}_lo" not in rec:
        return _fmt(rec[column])
    return format_interval(rec[column], rec[f"{column}_lo"], rec[f"{column}_hi"], digits=2)


def intervals_sentence(level: float, resamples: int) -> str:
    """What the keyword table's intervals cover."""
    return (
        f" Brackets: {level:.0%} bootstrap intervals over images ({resamples} resamples of the images with replacement, "
        "the same draw for every row; the human row's held-out annotators come with their image). They cover which "
        "images were annotated, and the annotators who happened to annotate them; the keyword systems are "
        "deterministic (random: one seeded shuffle)."
    )


def caption(gold_source: str, n_annotators: int, top_k: int, intervals=None) -> str:
    who = {
        "simulated": "a SIMULATED annotator panel (offline demo: keywords drawn from each frame's known content)",
        "mturk": "MTurk workers (the keyword task, variant K)",
    }.get(gold_source, gold_source)
    return (
        "Keyword baselines from co-occurring text against human keywords (Apples to Oranges, UNT-style SemEval "
        f"scoring), in percent. Gold: keywords from {who}, {n_annotators} annotator(s). best = the system's first "
        f"keyword; oot = its first ten (top_k = {top_k}); mode measures only over images with a unique most frequent "
        "keyword; P over images the system answered, R over all images with gold. human = each annotator against the "
        "others (leave one out)."
        + (intervals_sentence(intervals.level, intervals.resamples) if intervals is not None else "")
    )


def to_markdown(table: pl.DataFrame, title: str) -> str:
    header = [
        "system",
        "setting",
        "images",
        "best P",
        "best R",
        "best mode P",
        "best mode R",
        "oot P",
        "oot R",
        "oot mode P",
        "oot mode R",
    ]
    rows = (
        [
            SYSTEM_NAMES.get(r["system"], r["system"]),
            r["setting"],
            str(r["n_items"]),
            *[_cell(r, c) for c in SCORE_COLUMNS],
        ]
        for r in table.iter_rows(named=True)
    )
    # system and setting names come from the config, the title from the data
    lines = [f"**{md_escape(title)}**", "", *md_table(header, rows, data=(0, 1))]
    return "\n".join(lines) + "\n"


def to_latex(table: pl.DataFrame, title: str) -> str:
    head = [
        r" & & & \multicolumn{2}{c}{best} & \multicolumn{2}{c}{best mode} & \multicolumn{2}{c}{oot} & "
        r"\multicolumn{2}{c}{oot mode} \\",
        r"system & setting & images & P & R & P & R & P & R & P & R \\",
        r"\midrule",
    ]
    body = [
        tex_row(
            tex_escape(c)
            for c in [
                SYSTEM_NAMES.get(r["system"], r["system"]),
                r["setting"],
                r["n_items"],
                *(_cell(r, c) for c in SCORE_COLUMNS),
            ]
        )
        for r in table.iter_rows(named=True)
    ]
    return latex_table(
        caption=title, label="text_keywords", columns="llr" + "r" * len(SCORE_COLUMNS), head=head, body=body, small=True
    )


def build_table(
    keywords: pl.DataFrame,
    gold: pl.DataFrame,
    *,
    settings: list[dict],
    top_k: int,
    gold_language: str,
    intervals=None,
    gold_name: str = "the gold keywords",
) -> tuple[pl.DataFrame, str, str]:
    """The rule's edge: the keywords and the gold keywords (KEYWORD_JUDGMENTS, named `gold_name` in the error when it is
    empty) -> (table, Markdown, LaTeX); `intervals` (squidflow.statistics.intervals.IntervalConfig) adds each score's bootstrap
    interval over images."""
    from squidflow.text.preprocess import settings_from_config

    if gold.height == 0:
        raise ValueError(
            f"{gold_name}: no gold keywords; the keyword table needs the keyword task's answers "
            "(text.gold.batches, or judgments.source: simulated for the demo)"
        )
    table = keyword_table(
        keywords, gold, settings_from_config(settings), gold_language=gold_language, intervals=intervals
    )
    sources = sorted(set(gold["source"].to_list()))
    title = caption("/".join(sources), gold.filter(pl.col("round") == 1)["annotator"].n_unique(), top_k, intervals)
    return table, to_markdown(table, title), to_latex(table, title)
