"""Annotator models from crowd-kit beside squidflow's rubric: majority vote, Dawid–Skene, GLAD and MACE.

The crowdsourcing literature aggregates noisy categorical answers with models of the annotators: Dawid & Skene
(1979, a confusion matrix per annotator), GLAD (Whitehill et al., 2009: annotator skill × item difficulty), MACE
(Hovy et al., 2013: each annotator spams with some probability). Toloka's `crowd-kit` implements and tests them;
squidflow calls it (`crowdkit.aggregation`), it does not re-implement them (GLAD's and MACE's bookkeeping, not their
models, is rewritten for speed: `squidflow.judgments.crowd_models`). The answers they take here are
categorical:

- the certainty bins of the 0–100 ratings (SQUID-E's five bins of 20 points, `squidflow.statistics.certainty`): an
  item is an image under a prompt in one HIT of one variant (Table 7's item), its answers the bins of its ratings;
- the comparison sets' 1–3 plausibility ratings (Sherlock §4.3): an item is a (query, candidate) pair
  (`squidflow.comparison.rating_models` calls `fit` on them).

Each model gives an aggregated label per item with its probabilities (per-item uncertainty: 1 − the top
probability), and a skill per annotator on a 0–1 scale: majority vote's share of agreement with the majority;
Dawid–Skene's accuracy (Σ_k prior_k · P(answer k | true k)); GLAD's σ(α) (the chance of a right answer on an item
of unit easiness); MACE's posterior probability of not spamming. An annotator below `min_skill` is flagged by that
model. squidflow's rubric (SQUID-E §3.2, `quality.py`) stays the exclusion rule; the tables say how far the two
agree and how Table 7 changes if each model's flags were the exclusions instead. The comparison sets' ratings are
aggregated by the same models in the comparison stage (`squidflow.comparison.rating_models`).
"""

from __future__ import annotations

import logging
import warnings
from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd
import polars as pl

from squidflow.presentation.table_format import md_row, md_rule
from squidflow.statistics.certainty import CERTAINTY_BINS, certainty_bins

if TYPE_CHECKING:
    from crowdkit.aggregation import GLAD, MACE, DawidSkene, MajorityVote

    from squidflow.statistics.intervals import IntervalConfig

log = logging.getLogger(__name__)

MODELS = ("majority_vote", "dawid_skene", "glad", "mace")
ITEM = ["variant", "video_id", "frame_index", "event_prompt", "hit"]


def rating_answers(judgments: pl.DataFrame) -> pd.DataFrame:
    """First-round judgments -> crowd-kit's answers frame (task, worker, label): label = the rating's certainty bin."""
    j = judgments.filter(pl.col("round") == 1) if "round" in judgments.columns else judgments
    task = (
        j["variant"]
        + "|"
        + j["video_id"]
        + "_"
        + j["frame_index"].cast(pl.Utf8)
        + "|"
        + j["event_prompt"]
        + "|"
        + j["hit"]
    )
    return pd.DataFrame(
        {"task": task.to_numpy(), "worker": j["annotator"].to_numpy(), "label": certainty_bins(j["rating"].to_numpy())}
    )


def fit(answers: pd.DataFrame, model: str, *, n_iter: int = 20, seed: int = 0, mace_restarts: int = 2) -> dict:
    """One crowd-kit model on the answers -> {"labels": Series task -> label, "probas": DataFrame task × label,
    "skills": Series worker -> 0..1, "model": the fitted crowd-kit object}."""
    from crowdkit.aggregation import DawidSkene, MajorityVote

    from squidflow.judgments.crowd_models import crowd_kit_classes

    glad_model, mace_model = crowd_kit_classes()  # crowd-kit's, their bookkeeping as array operations

    workers = pd.Index(pd.unique(answers["worker"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # crowd-kit's tqdm/pandas future warnings
        m: MajorityVote | DawidSkene | GLAD | MACE
        if model == "majority_vote":
            m = mv = MajorityVote().fit(answers)
            if mv.skills_ is None:
                raise ValueError("crowd-kit's majority vote returned no worker skills")
            skills = mv.skills_
        elif model == "dawid_skene":
            m = ds = DawidSkene(n_iter=n_iter).fit(answers)
            priors, errors = ds.priors_, ds.errors_
            if priors is None or errors is None:
                raise ValueError("crowd-kit's Dawid-Skene returned no priors or error matrices")
            diag = {
                w: sum(priors[k] * errors.loc[(w, k), k] for k in priors.index if (w, k) in errors.index)
                for w in workers
            }
            skills = pd.Series(diag, name="skill")
        elif model == "glad":
            m = glad = glad_model(n_iter=n_iter).fit(answers)
            skills = 1.0 / (1.0 + np.exp(-glad.alphas_))
        elif model == "mace":
            m = mace = mace_model(n_iter=n_iter, n_restarts=mace_restarts, random_state=seed).fit(answers)
            skills = pd.Series(mace.spamming_[:, 1], index=workers, name="skill")  # factorize order = first appearance
        else:
            raise ValueError(f"unknown crowd-kit model {model!r}; one of {MODELS}")
    return {"labels": m.labels_, "probas": m.probas_, "skills": skills.reindex(workers).astype(float), "model": m}


MODEL_NAMES = {"majority_vote": "majority vote", "dawid_skene": "Dawid–Skene", "glad": "GLAD", "mace": "MACE"}
BOUNDED = ("dawid_skene", "glad", "mace")  # the EM models whose cost judgments.crowd.max_answers bounds


def too_many_answers(n: int, max_answers: int | None) -> str:
    """The reason the annotator models are not fit on `n` answers, or "" when they are."""
    if max_answers is None or n <= max_answers:
        return ""
    return (
        f"{n:,} answers are more than judgments.crowd.max_answers ({max_answers:,}): Dawid–Skene, GLAD and MACE "
        "were not fit (their cost grows faster than the answers; raise max_answers to fit them)"
    )


def fit_or_skip(answers: pd.DataFrame, model: str, **kw) -> tuple[dict | None, str]:
    """`fit`, or (None, the reason in words) when crowd-kit cannot fit the model on these answers (MACE's
    "Encountered all NA values" when items have hundreds of answers: its likelihood underflows)."""
    try:
        return fit(answers, model, **kw), ""
    except (ValueError, FloatingPointError, ZeroDivisionError, np.linalg.LinAlgError) as e:
        per_item = len(answers) / max(answers["task"].nunique(), 1)
        log.warning("crowd-kit %s failed on %d answers: %s", model, len(answers), e)
        return None, (
            f"{MODEL_NAMES.get(model, model)}: crowd-kit could not fit these answers ({e}; "
            f"{len(answers):,} answers, {per_item:,.0f} per item)"
        )


def fit_all(
    answers: pd.DataFrame, *, n_iter: int = 20, seed: int = 0, mace_restarts: int = 2, max_answers: int | None = None
) -> tuple[dict[str, dict], list[str]]:
    """The models crowd-kit could fit, and the reasons for those it did not (judgments.crowd.max_answers, or a
    failure of the model on these answers)."""
    too_many = too_many_answers(len(answers), max_answers)
    fits, skipped = {}, [too_many] if too_many else []
    for name in MODELS:
        if too_many and name in BOUNDED:
            continue
        f, why = fit_or_skip(answers, name, n_iter=n_iter, seed=seed, mace_restarts=mace_restarts)
        if f is None:
            skipped.append(why)
        else:
            fits[name] = f
    return fits, skipped


def item_table(answers: pd.DataFrame, fits: dict[str, dict], judgments: pl.DataFrame | None = None) -> pl.DataFrame:
    """Per item: its answers, the mean's bin (for ratings), and per model the label and uncertainty (1 − top prob)."""
    tasks = pd.Index(pd.unique(answers["task"]))
    out = {"item": tasks.to_numpy(), "n_answers": answers.groupby("task").size().reindex(tasks).to_numpy()}
    if judgments is not None:
        means = rating_means(judgments)
        out["mean_rating"] = means.reindex(tasks).to_numpy()
        out["mean_bin"] = certainty_bins(out["mean_rating"])
    for name, f in fits.items():
        out[f"{name}_label"] = f["labels"].reindex(tasks).astype(str).to_numpy()
        out[f"{name}_uncertainty"] = (1.0 - f["probas"].max(axis=1)).reindex(tasks).to_numpy()
    return pl.DataFrame(out)


def rating_means(judgments: pl.DataFrame) -> pd.Series:
    a = rating_answers(judgments)
    j = judgments.filter(pl.col("round") == 1) if "round" in judgments.columns else judgments
    return pd.Series(j["rating"].to_numpy(), index=a["task"]).groupby(level=0).mean()


def annotator_table(
    answers: pd.DataFrame,
    fits: dict[str, dict],
    report: pl.DataFrame | None,
    min_skill: float,
    judgments: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Per annotator: answers, squidflow's rubric (excluded, flags) and per model the skill and whether it flags."""
    workers = pd.Index(pd.unique(answers["worker"]))
    out = {
        "annotator": workers.astype(str).to_numpy(),
        "n_answers": answers.groupby("worker").size().reindex(workers).to_numpy(),
    }
    if judgments is not None:
        var = judgments.group_by("annotator", maintain_order=True).agg(pl.col("variant").unique().sort().str.join("+"))
        vmap = dict(var.iter_rows())
        out["variant"] = [vmap.get(w, "") for w in workers]
    if report is not None:
        excl = dict(report.select("annotator", "excluded").iter_rows())
        nflags = dict(report.select("annotator", pl.col("flags").list.len()).iter_rows())
        out["squidflow_excluded"] = [bool(excl.get(w, False)) for w in workers]
        out["squidflow_flags"] = [int(nflags.get(w, 0)) for w in workers]
    for name, f in fits.items():
        out[f"{name}_skill"] = f["skills"].reindex(workers).to_numpy()
        out[f"{name}_flagged"] = out[f"{name}_skill"] < min_skill
    return pl.DataFrame(out)


def agreement_with_rubric(annotators: pl.DataFrame, model: str) -> dict:
    """How far a model's flags and squidflow's exclusions agree: counts of each cell and Cohen's κ."""
    a = annotators["squidflow_excluded"].to_numpy().astype(bool)
    b = annotators[f"{model}_flagged"].to_numpy().astype(bool)
    n = len(a)
    both, only_sq, only_ck, neither = int((a & b).sum()), int((a & ~b).sum()), int((~a & b).sum()), int((~a & ~b).sum())
    po = (both + neither) / n if n else float("nan")
    pe = ((a.mean() * b.mean()) + ((1 - a.mean()) * (1 - b.mean()))) if n else float("nan")
    kappa = (po - pe) / (1 - pe) if n and pe < 1 else (1.0 if po == 1 else float("nan"))
    return {
        "flagged_both": both,
        "excluded_only_squidflow": only_sq,
        "flagged_only_crowdkit": only_ck,
        "neither": neither,
        "share_agree": po,
        "cohen_kappa": kappa,
    }


def _row_exclusion(
    name: str, rubric: list[str], items: pl.DataFrame, annotators: pl.DataFrame
) -> tuple[list[str], float, dict]:
    """One aggregation's excluded annotators, the share of items whose label equals the mean's bin, and its flags'
    agreement with the rubric (the `mean` row is the rubric itself)."""
    if name == "mean":
        return (
            rubric,
            1.0,
            {
                "flagged_both": len(rubric),
                "excluded_only_squidflow": 0,
                "flagged_only_crowdkit": 0,
                "neither": len(annotators) - len(rubric),
                "share_agree": 1.0,
                "cohen_kappa": 1.0,
            },
        )
    excluded = annotators.filter(pl.col(f"{name}_flagged"))["annotator"].to_list()
    same = float(cast(float, (items[f"{name}_label"] == items["mean_bin"]).mean())) if len(items) else float("nan")
    return excluded, same, agreement_with_rubric(annotators, name)


def _table7_columns(t7: dict[str, dict], kmax: int, with_intervals: bool) -> dict:
    """Table 7's α, Spearman and κ<kmax> per task (A, B, A+B) as one row's columns, `_lo`/`_hi` beside each."""
    row = {}
    for v in ("A", "B", "A+B"):
        r = t7.get(v, {})
        for column, measure in (("spearman", "spearman"), ("alpha", "alpha"), (f"kappa{kmax}", f"kappa_{kmax}")):
            row[f"{v}_{column}"] = r.get(measure)
            if with_intervals:
                row[f"{v}_{column}_lo"], row[f"{v}_{column}_hi"] = r.get(f"{measure}_lo"), r.get(f"{measure}_hi")
    return row


def aggregation_table(
    judgments: pl.DataFrame,
    report: pl.DataFrame,
    *,
    fits: dict[str, dict],
    items: pl.DataFrame,
    annotators: pl.DataFrame,
    pooling: str = "wide",
    kappa_bins=(3, 4, 5),
    default: str = "mean",
    intervals=None,
    table7: bool = True,
) -> pl.DataFrame:
    """One row per aggregation (`mean` = squidflow's rubric and mean, then each crowd-kit model): how many items'
    label equals the mean's bin, Table 7 (α, Spearman, κ) over the judgments left when that row's annotators are
    excluded and the agreement of its flags with the rubric. With `intervals` (squidflow.statistics.intervals.IntervalConfig)
    each Table 7 number has `<column>_lo` / `<column>_hi`: Table 7's own image bootstrap (agreement_intervals) over
    the judgments that row keeps. `table7` False leaves Table 7's columns empty (its Spearman over every pair of
    rating positions grows with their square: beyond judgments.crowd.max_answers it is not recomputed per row)."""
    from squidflow.judgments.agreement import agreement_table

    rows = []
    rubric = report.filter(pl.col("excluded"))["annotator"].to_list()
    for name in ("mean", *[m for m in MODELS if m in fits]):
        excluded, same, agree = _row_exclusion(name, rubric, items, annotators)
        kept = judgments.filter(~pl.col("annotator").is_in(excluded))
        t7 = (
            {
                r["variant"]: r
                for r in agreement_table(
                    kept, pooling=pooling, kappa_bins=tuple(kappa_bins), intervals=intervals
                ).to_dicts()
            }
            if table7
            else {}
        )
        row = {
            "aggregation": name,
            "default": name == default,
            "annotators_excluded": len(excluded),
            "items_label_equals_mean_bin": same,
            **_table7_columns(t7, max(kappa_bins), intervals is not None),
        }
        row.update(agree)
        rows.append(row)
    return pl.DataFrame(rows)


def aggregation_markdown(table: pl.DataFrame, *, source: str, min_skill: float, kmax: int, note: str = "") -> str:
    from squidflow.contracts.io import md_escape
    from squidflow.statistics.intervals import format_interval

    sim = " — SIMULATED annotator panel" if "simulated" in source else ""
    lines = [
        f"# Annotator models (crowd-kit) beside squidflow's rubric{sim}",
        "",
        f"Judgments: {md_escape(source)}. Answers: the certainty bins ({', '.join(CERTAINTY_BINS)}) of the 0–100 "
        "ratings. `mean` is squidflow's rubric (SQUID-E §3.2) and mean; each crowd-kit row excludes the "
        f"annotators whose skill in that model is below {min_skill} and recomputes Table 7 without them."
        + (f" {note}" if note else ""),
        "",
        md_row(
            [
                "aggregation",
                "excluded",
                "label = mean's bin",
                "A α",
                "B α",
                "A+B α",
                "A+B ρ",
                f"A+B κ{kmax}",
                "agree with rubric",
                "Cohen's κ",
            ]
        ),
        md_rule(10),
    ]

    def f(v, p=3):
        return "–" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:.{p}f}"

    def t7(r, column):  # a Table 7 number with its interval where the table has one
        v = r[column]
        if v is None or (isinstance(v, float) and np.isnan(v)):
            return "–"
        return format_interval(v, r.get(f"{column}_lo"), r.get(f"{column}_hi"), 3)

    for r in table.to_dicts():
        lines.append(
            md_row(
                [
                    f"{r['aggregation']}{' (default)' if r['default'] else ''}",
                    r["annotators_excluded"],
                    f(r["items_label_equals_mean_bin"]),
                    t7(r, "A_alpha"),
                    t7(r, "B_alpha"),
                    t7(r, "A+B_alpha"),
                    t7(r, "A+B_spearman"),
                    t7(r, f"A+B_kappa{kmax}"),
                    f(r["share_agree"]),
                    f(r["cohen_kappa"]),
                ]
            )
        )
    return "\n".join(lines) + "\n"


def _crowd_note(intervals: IntervalConfig | None, skipped: list[str], too_many: str) -> str:
    """What the aggregation table's numbers cover: the intervals, the models left out and why, Table 7 not
    recomputed above judgments.crowd.max_answers."""
    note = ""
    if intervals is not None:
        from squidflow.judgments.tables import intervals_note

        note = intervals_note(intervals.level, intervals.resamples)
    if skipped:
        note = (note + " " if note else "") + "Not in the table: " + "; ".join(skipped) + "."
    if too_many:
        note += (
            " Table 7 is not recomputed per aggregation either (its Spearman takes every pair of rating positions "
            "of an item); the agreement rule's Table 7 is the rubric's."
        )
    return note


def crowd_tables(
    judgments: pl.DataFrame,
    report: pl.DataFrame,
    *,
    min_skill: float = 0.3,
    n_iter: int = 20,
    mace_restarts: int = 2,
    seed: int = 0,
    default: str = "mean",
    pooling: str = "wide",
    kappa_bins=(3, 4, 5),
    intervals=None,
    max_answers: int | None = None,
) -> dict[str, pl.DataFrame | str]:
    """The rule's edge: judgments + annotator report -> the three tables ("annotators", "items", "table") and the
    table's Markdown ("markdown"). A model crowd-kit cannot fit, or every EM model above `max_answers` answers, is
    left out of the tables, and the Markdown says why."""
    import time

    answers = rating_answers(judgments)
    t0 = time.perf_counter()
    fits, skipped = fit_all(answers, n_iter=n_iter, seed=seed, mace_restarts=mace_restarts, max_answers=max_answers)
    log.info(
        "crowd-kit: %d models on %d answers in %.1f s%s",
        len(fits),
        len(answers),
        time.perf_counter() - t0,
        "".join(f"; {s}" for s in skipped),
    )
    items = item_table(answers, fits, judgments)
    annotators = annotator_table(answers, fits, report, min_skill, judgments)
    too_many = too_many_answers(len(answers), max_answers)
    table = aggregation_table(
        judgments,
        report,
        fits=fits,
        items=items,
        annotators=annotators,
        pooling=pooling,
        kappa_bins=kappa_bins,
        default=default,
        intervals=intervals,
        table7=not too_many,
    )
    source = ",".join(sorted(judgments["source"].unique().to_list())) or "none"
    note = _crowd_note(intervals, skipped, too_many)
    return {
        "annotators": annotators,
        "items": items,
        "table": table,
        "markdown": aggregation_markdown(table, source=source, min_skill=min_skill, kmax=max(kappa_bins), note=note),
    }
