"""Rater triage: ambiguity or noise? Each annotator with the evidence against them (issues #36, #50).

SQUID-E reads disagreement between people as signal (§3.2, §4): an image rated 30, 70 and 55 is ambiguous. A careless
or adversarial rater produces the same spread, so before spread is read as ambiguity each rater is checked, without
ground truth, per annotator and variant (round 1; the signals are computed in `squidflow.judgments.rater_signals`):

- agreement with the others: Pearson's r of the rater's ratings with the consensus of the same items (an item: an
  image under a prompt in one variant), with its bootstrap interval over the rater's items (`squidflow.statistics.intervals`,
  config `intervals`); an interval wholly below 0 is a reversed scale;
- crowd-kit's skills on the certainty bins (`squidflow.judgments.crowd.fit`: MACE's P(not spamming), GLAD's σ(α),
  Dawid–Skene's confusion diagonal), fit on the consensus raters' answers; skipped with the reason above
  `judgments.crowd.max_answers` answers or where crowd-kit cannot fit them;
- cleanlab's CROWDLAB annotator quality (`cleanlab.multiannotator.get_label_quality_multiannotator`) on the same
  bins, given a model's probability of each prompt's event (`model_bins`); skipped, with the reason, without one;
- response patterns: one rating for (nearly) everything, only the extremes (0-5, 95-100) where the consensus is not,
  one rating for every image of a HIT whose images the consensus tells apart, ratings that fit the neighbouring image
  of the same HIT better than their own (shifted answers), answers identical to another rater's HIT after HIT
  (colluders); work time per image is not ingested (judgments.parquet has no such column) and is listed as skipped;
- the paper's rubric (`quality.annotator_report`: blank images, control images; SQUID-E §3.2 "Selecting
  Annotators") as it stands: one signal among the others, since a dataset has blank controls only where its
  frames happen to include them.

The consensus (issue #50): round 1 measures every rater against all the others, as a leave-one-out mean. Each later
round leaves out of the consensus the raters the round before called `careless` (its mean over the remaining raters,
and the annotator models fit on their answers only), until no verdict changes (at most `max_rounds`; a cycle stops
it, said in the report). So a third of careless raters no longer drag honest raters' agreement and skills below the
thresholds; a verdict that changes between rounds says so in words (`rounds`). With three ratings per image (the
paper's design) a median breaks down as soon as one of the two others is careless, which is why the careless are
left out rather than outvoted.

The verdict: `careless` when a pattern, a reversed scale, an agreement interval wholly below `min_agreement` or the
rubric says so; `suspect` when the agreement itself is below `min_agreement`, or when at least two of the skill
models put the rater below `min_skill`; else `ok`. The reasons name the deciding signals in words. Which raters
aggregation leaves out is `judgments.quality.exclude`: `rubric` (the paper's, the default: Table 7 unchanged) or
`triage` (the careless ones and the rubric's). Where the raters are rating positions rather than people (the SQUID-E
release's huj_0..2), the signals that need rater identity are skipped with that reason.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeGuard, cast

import numpy as np
import polars as pl

from squidflow.config.validation import defaults_from_schema, from_section
from squidflow.contracts import schemas
from squidflow.judgments.pseudonyms import RAW_IDS, for_people, pseudonyms
from squidflow.judgments.rater_signals import (
    KEY,
    agreement,
    duplicate_answers,
    neighbour_agreement,
    patterns,
    with_consensus,
    with_slots,
)
from squidflow.presentation.table_format import md_row, md_rule
from squidflow.statistics.intervals import IntervalConfig

log = logging.getLogger(__name__)

POLICIES = ("rubric", "triage")
SKILL_MODELS = {"mace": "mace_competence", "glad": "glad_alpha", "dawid_skene": "dawid_skene_diagonal"}
NO_WORK_TIME = "work time per image: judgments.parquet carries no work time (WorkTimeInSeconds, lead_time not ingested)"
NO_IDENTITY = "raters are rating positions, not people (source {source}): {signal} needs rater identity"
BIN_CENTRES = np.array([10.0, 30.0, 50.0, 70.0, 90.0])


@dataclass(frozen=True)
@defaults_from_schema("judgments.triage")
class TriageConfig:
    """judgments.triage: every threshold's default and meaning is the schema's (config/README.md)."""

    min_agreement: float
    max_modal_share: float
    min_extreme_share: float
    min_extreme_excess: float
    max_hit_constant_share: float
    min_skill_models: int
    min_shift_gain: float
    max_duplicate_share: float
    max_rounds: int
    max_interval_width: float
    min_spread: float

    @classmethod
    def from_config(cls, cfg: dict | None) -> TriageConfig:
        return cls(**{k: v for k, v in (cfg or {}).items() if k in cls.__dataclass_fields__})


def item_key(j: pl.DataFrame) -> pl.Expr:
    return pl.concat_str(
        [pl.col("variant"), pl.col("video_id"), pl.col("frame_index").cast(pl.Utf8), pl.col("event_prompt")],
        separator="|",
    )


def first_round(judgments: pl.DataFrame) -> pl.DataFrame:
    return judgments.filter(pl.col("round") == 1).with_columns(item_key(judgments).alias("item"))


def skill_signals(
    r1: pl.DataFrame, *, n_iter: int = 20, seed: int = 0, mace_restarts: int = 2, max_answers: int | None = None
) -> tuple[pl.DataFrame | None, list[str]]:
    """crowd-kit's skills per annotator on the certainty bins: MACE, GLAD and Dawid–Skene (squidflow.judgments.crowd),
    and the reasons for the models not fit (too many answers, or crowd-kit could not fit them)."""
    from squidflow.judgments.crowd import fit_or_skip, rating_answers, too_many_answers

    answers = rating_answers(r1)
    too_many = too_many_answers(len(answers), max_answers)
    if too_many or answers.empty:
        return None, [f"crowd-kit skills: {too_many}"] if too_many else []
    out, skipped = pl.DataFrame({"annotator": pd_unique(answers["worker"])}), []
    for model, column in SKILL_MODELS.items():
        f, why = fit_or_skip(answers, model, n_iter=n_iter, seed=seed, mace_restarts=mace_restarts)
        skills = (
            np.full(out.height, np.nan) if f is None else f["skills"].reindex(out["annotator"].to_list()).to_numpy()
        )
        skipped += [f"crowd-kit skills: {why}"] if why else []
        out = out.with_columns(pl.Series(column, skills, pl.Float64))
    return out, skipped


def pd_unique(values) -> list[str]:
    import pandas as pd

    return [str(v) for v in pd.unique(values)]


def model_bins(probability: np.ndarray, width: float = 20.0) -> np.ndarray:
    """A model's probability p of the event (N,) -> (N, 5) probabilities over the certainty bins: a Gaussian of one
    bin's width around 100·p, normalised (CROWDLAB's pred_probs)."""
    p = 100 * np.asarray(probability, float)[:, None]
    w = np.exp(-((BIN_CENTRES[None, :] - p) ** 2) / (2 * width**2))
    return w / w.sum(axis=1, keepdims=True)


def crowdlab(r1: pl.DataFrame, probability: pl.DataFrame) -> dict:
    """cleanlab's CROWDLAB on the certainty bins of round 1, given the model's probability per (video_id,
    frame_index, event_prompt). -> {"annotators": frame annotator, crowdlab_quality; "items": frame item,
    crowdlab_consensus_quality} or {"skipped": reason}."""
    from cleanlab.multiannotator import get_label_quality_multiannotator

    j = r1.join(probability, on=["video_id", "frame_index", "event_prompt"], how="inner", maintain_order="left")
    if j.is_empty():
        return {"skipped": "CROWDLAB: the model predicts none of the judged images"}
    wide = j.with_columns(pl.Series("bin", _bin_index(j["rating"].to_numpy()))).pivot(
        on="annotator", index="item", values="bin", aggregate_function="first"
    )
    items = wide["item"].to_list()
    labels = wide.drop("item").to_pandas().astype(float)
    prob = dict(j.select("item", "probability").unique("item", maintain_order=True).iter_rows())
    pred = model_bins(np.array([prob[i] for i in items]))
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = get_label_quality_multiannotator(labels, pred, verbose=False)
    except (ValueError, AssertionError) as e:
        return {"skipped": f"CROWDLAB: cleanlab refused the labels ({e})"}
    stats = res["annotator_stats"]
    return {
        "annotators": pl.DataFrame(
            {
                "annotator": [str(a) for a in stats.index],
                "crowdlab_quality": stats["annotator_quality"].to_numpy(dtype=float),
            }
        ),
        "items": pl.DataFrame(
            {
                "item": items,
                "crowdlab_consensus_quality": res["label_quality"]["consensus_quality_score"].to_numpy(dtype=float),
            }
        ),
    }


def _bin_index(ratings: np.ndarray) -> np.ndarray:
    """Ratings 0-100 -> certainty bin index 0-4 (squidflow.statistics.certainty's five bins; 100 in the last)."""
    return np.minimum(np.asarray(ratings, dtype=int) // 20, 4)


def verdict(row: dict, cfg: TriageConfig, min_skill: float) -> tuple[str, list[str]]:
    """(verdict, reasons in words) from one rater's signals."""
    careless, suspect = [], []
    r, lo, hi = row["agreement"], row["agreement_lo"], row["agreement_hi"]
    if row["rubric_excluded"]:
        careless.append("the paper's rubric excludes them (" + "; ".join(row["rubric_flags"]) + ")")
    if _ok(row["modal_share"]) and row["modal_share"] >= cfg.max_modal_share:
        careless.append(f"constant: {row['modal_share']:.0%} of their ratings are one number")
    if (
        _ok(row["extreme_share"])
        and row["extreme_share"] >= cfg.min_extreme_share
        and row["extreme_share"] - np.nan_to_num(row["others_extreme_share"]) >= cfg.min_extreme_excess
    ):
        careless.append(
            f"extremes only: {row['extreme_share']:.0%} of ratings at 0-5 or 95-100, the others "
            f"{row['others_extreme_share']:.0%} on the same images"
        )
    if _ok(row["hit_constant_share"]) and row["hit_constant_share"] >= cfg.max_hit_constant_share:
        careless.append(
            f"one rating for every image of {row['hit_constant_share']:.0%} of their HITs that the others tell apart"
        )
    nb = row.get("neighbour_agreement")
    if _ok(nb) and nb >= cfg.min_agreement and nb - (r if _ok(r) else 0.0) >= cfg.min_shift_gain:
        careless.append(
            f"shifted answers: their ratings fit the consensus of the neighbouring image of the same HIT "
            f"(r = {nb:.2f}) better than their own image's (r = {r:.2f})"
        )
    dup = row.get("duplicate_share")
    if _ok(dup) and row.get("duplicate_hits", 0) >= 2 and dup >= cfg.max_duplicate_share:
        careless.append(
            f"identical answers: {row['duplicate_hits']} of their {row['n_hits_answered']} HITs answered "
            f"image for image as {row['duplicates']} did (colluding or copied)"
        )
    if _ok(hi) and hi < 0:
        careless.append(f"reversed scale: agreement r = {r:.2f} [{lo:.2f}, {hi:.2f}], below 0")
    elif _ok(hi) and hi < cfg.min_agreement:
        careless.append(f"no agreement with the others: r = {r:.2f} [{lo:.2f}, {hi:.2f}], below {cfg.min_agreement}")
    elif _ok(r) and r < cfg.min_agreement:
        suspect.append(f"low agreement with the others: r = {r:.2f} [{lo:.2f}, {hi:.2f}] (< {cfg.min_agreement})")
    low = [
        f"{name} {row[c]:.2f}"
        for name, c in (
            ("MACE", "mace_competence"),
            ("GLAD", "glad_alpha"),
            ("Dawid–Skene", "dawid_skene_diagonal"),
            ("CROWDLAB", "crowdlab_quality"),
        )
        if _ok(row.get(c)) and row[c] < min_skill
    ]
    if len(low) >= cfg.min_skill_models:
        suspect.append(f"low skill in {len(low)} annotator models ({', '.join(low)}; < {min_skill})")
    if careless:
        return "careless", careless + suspect
    if suspect:
        return "suspect", suspect
    return "ok", []


def _ok(v: float | None) -> TypeGuard[float]:
    return v is not None and np.isfinite(v)


def rater_identity(judgments: pl.DataFrame) -> bool:
    """False where the raters are rating positions (the SQUID-E release), not people."""
    return "squid-e-release" not in set(judgments["source"].unique().to_list())


SIGNALS = [
    "agreement",
    "agreement_lo",
    "agreement_hi",
    "modal_share",
    "extreme_share",
    "others_extreme_share",
    "hit_constant_share",
    "neighbour_agreement",
    "crowdlab_quality",
    *SKILL_MODELS.values(),
]


def _round_signals(r1: pl.DataFrame, consensus: set | None, intervals: IntervalConfig) -> dict[tuple, dict]:
    """One round's consensus-dependent signals per (annotator, variant): agreement with its interval, the response
    patterns and the shifted-answers pattern, against the mean of the raters in `consensus` (None: everyone)."""
    r = with_consensus(r1, consensus)
    out = {
        k: {"n_items": 0, "agreement": np.nan, "agreement_lo": np.nan, "agreement_hi": np.nan}
        for k in r.select(KEY).unique(maintain_order=True).iter_rows()
    }
    shared = r.filter(pl.col("n_others") > 0)
    for k, g in shared.partition_by(KEY, as_dict=True, maintain_order=True).items():
        out[k]["n_items"] = g.height
        out[k]["agreement"], out[k]["agreement_lo"], out[k]["agreement_hi"] = agreement(
            g["rating"].to_numpy(), g["loo"].to_numpy(), intervals
        )
    for frame in (patterns(r), neighbour_agreement(r)):
        for row in frame.iter_rows(named=True):
            out[(row["annotator"], row["variant"])].update({c: v for c, v in row.items() if c not in KEY})
    return out


MAX_CHANGES_SHOWN = 30  # verdict changes listed in the report (all are in rater_triage.csv)
MAX_MODEL_FITS = 3  # the annotator models are fit on at most this many rounds' consensus (GLAD alone takes seconds)


class _Skills:
    """The annotator models' skills per round, fit on the consensus raters' answers (one fit per consensus); a rater
    left out of the consensus keeps the skills of the last fit that included them."""

    def __init__(self, r1: pl.DataFrame, crowd: dict, probability: pl.DataFrame | None):
        self.r1, self.crowd, self.probability = r1, crowd, probability
        self.last: dict[str, dict] = {}
        self.skipped: dict[str, None] = {}
        self.fits = 0

    def of(self, consensus: set | None) -> dict[str, dict]:
        if self.fits >= MAX_MODEL_FITS:
            self.skipped[
                f"crowd-kit skills, CROWDLAB: fit on {MAX_MODEL_FITS} consensus rounds' raters at most (their "
                "cost); later rounds keep the last fit's skills"
            ] = None
            return self.last
        self.fits += 1
        r1 = (
            self.r1
            if consensus is None
            else self.r1.filter(
                pl.struct(KEY).is_in(
                    pl.Series(
                        [{"annotator": a, "variant": v} for a, v in sorted(consensus)],
                        dtype=pl.Struct({"annotator": pl.Utf8, "variant": pl.Utf8}),
                    ).implode()
                )
            )
        )
        skills, skipped = skill_signals(r1, **self.crowd)
        self.skipped.update(dict.fromkeys(skipped))
        if skills is not None:
            for row in skills.iter_rows(named=True):
                self.last.setdefault(row["annotator"], {}).update({c: row[c] for c in SKILL_MODELS.values()})
        if self.probability is not None:
            lab = crowdlab(r1, self.probability)
            if "skipped" in lab:
                self.skipped[lab["skipped"]] = None
            else:
                for a, q in lab["annotators"].iter_rows():
                    self.last.setdefault(a, {})["crowdlab_quality"] = q
        return self.last


def _names(keys, pseudonym: Mapping[str, str], most: int = 6) -> str:
    names = sorted(f"{pseudonym.get(a, 'Ann?')} ({v})" for a, v in keys)
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def _change(rnd: int, old: tuple, new: tuple, left_out: set, pseudonym: Mapping[str, str]) -> str:
    """A verdict that changed between rounds, in words (the raters left out by pseudonym)."""
    why = "; ".join(new[1]) if new[0] != "ok" else "no longer: " + "; ".join(old[1])
    return (
        f"round {rnd}: {old[0]} → {new[0]} against a consensus without the {len(left_out)} rater(s) round "
        f"{rnd - 1} called careless ({_names(left_out, pseudonym)}): {why}"
    )


def _skipped_signals(judgments: pl.DataFrame, probability: pl.DataFrame | None, no_model_reason: str) -> list[str]:
    """The signals that cannot be computed on these judgments, each with why (the report lists them)."""
    skipped = [NO_WORK_TIME]
    if not rater_identity(judgments):
        source = ",".join(sorted(judgments["source"].unique().to_list()))
        skipped += [
            NO_IDENTITY.format(source=source, signal=s)
            for s in ("agreement with the others", "crowd-kit skills", "CROWDLAB", "response patterns")
        ]
    elif probability is None:
        skipped.append(f"CROWDLAB: {no_model_reason or 'no model probabilities in this run'}")
    return skipped


def _base_rows(r1: pl.DataFrame, report: pl.DataFrame, pseudonym: Mapping[str, str], policy: str) -> dict[tuple, dict]:
    """Per (annotator, variant): the rubric's verdict and every signal still unmeasured (NaN, 0), which the consensus
    rounds fill in; a rater without identity keeps them so."""
    rubric = {a: (list(f), bool(e)) for a, f, e in report.select("annotator", "flags", "excluded").iter_rows()}
    base = {}
    for (annotator, variant), g in r1.group_by(KEY, maintain_order=True):
        flags, excluded = rubric.get(annotator, ([], False))
        base[(annotator, variant)] = {
            "annotator": annotator,
            "pseudonym": pseudonym[str(annotator)],
            "variant": variant,
            "n_judgments": g.height,
            "n_items": 0,
            "work_seconds_per_image": None,
            "policy": policy,
            "rubric_flags": flags,
            "rubric_excluded": excluded,
            **dict.fromkeys(SIGNALS, float("nan")),
            "neighbour_pairs": 0,
            "duplicate_share": float("nan"),
            "duplicate_hits": 0,
            "n_hits_answered": 0,
            "duplicates": None,
        }
    return base


@dataclass
class _Rounds:
    """The consensus rounds' outcome: the last verdict per rater, the changes in words, the consensus the last round
    was measured against (None: everyone), how many rounds ran and the notes on why they stopped."""

    verdicts: dict[tuple, tuple]
    changes: dict[tuple, list[str]]
    used: set | None = None
    n: int = 1
    skipped: list[str] = field(default_factory=list)


def _stop_note(following: set, consensus: set | None, keys: list, seen: set, n: int) -> str | None:
    """Why the rounds stop after round `n` ("" when the consensus is stable), or None to go on."""
    if following == (set(keys) if consensus is None else consensus):
        return ""
    if not following:
        return (
            f"consensus: round {n} calls every rater careless, so no consensus is left to measure a later round "
            f"against; round {n}'s verdicts are kept"
        )
    if frozenset(following) in seen:
        return (
            f"consensus: the verdicts cycle (round {n} repeats an earlier round's consensus); the last round's are kept"
        )
    return None


def _consensus_rounds(
    r1: pl.DataFrame,
    base: dict[tuple, dict],
    cfg: TriageConfig,
    *,
    crowd: dict,
    min_skill: float,
    probability: pl.DataFrame | None,
    intervals: IntervalConfig,
    pseudonym: Mapping[str, str],
) -> _Rounds:
    """The rounds of the module's docstring: each measures every rater against the consensus of the raters the round
    before did not call careless, filling `base` with the signals, until no verdict changes."""
    keys = sorted(base)
    out = _Rounds(verdicts={}, changes={k: [] for k in keys})
    consensus: set | None = None
    seen: set = set()
    r1 = with_slots(r1)
    for row in duplicate_answers(r1, pseudonym).iter_rows(named=True):
        base[(row["annotator"], row["variant"])].update({c: v for c, v in row.items() if c not in KEY})
    skills = _Skills(r1, crowd, probability)
    for out.n in range(1, cfg.max_rounds + 1):
        out.used = consensus
        signals, fitted, new = _round_signals(r1, consensus, intervals), skills.of(consensus), {}
        left_out = set(keys) - (set(keys) if consensus is None else consensus)
        for k in keys:
            base[k].update(signals.get(k, {}))
            base[k].update(fitted.get(k[0], {}))
            new[k] = verdict(base[k], cfg, min_skill)
            if k in out.verdicts and out.verdicts[k][0] != new[k][0]:
                out.changes[k].append(_change(out.n, out.verdicts[k], new[k], left_out, pseudonym))
        out.verdicts = new
        following = {k for k in keys if new[k][0] != "careless"}
        note = _stop_note(following, consensus, keys, seen, out.n)
        if note is not None:
            out.skipped += [note] if note else []
            break
        seen.add(frozenset(following))
        consensus = following
    else:
        out.skipped.append(
            f"consensus: verdicts still changed after judgments.triage.max_rounds = {cfg.max_rounds} "
            "rounds; the last round's are kept"
        )
    out.skipped += list(skills.skipped)
    return out


def rater_triage(
    judgments: pl.DataFrame,
    report: pl.DataFrame,
    cfg: TriageConfig,
    *,
    policy: str = "rubric",
    intervals: IntervalConfig | None = None,
    crowd: dict | None = None,
    probability: pl.DataFrame | None = None,
    no_model_reason: str = "",
) -> pl.DataFrame:
    """One row per annotator and variant (schemas.RATER_TRIAGE). `probability`: the model's probability of each
    prompt's event per (video_id, frame_index, event_prompt, probability), or None (CROWDLAB skipped, with
    `no_model_reason`). The consensus rounds are described in the module's docstring. Each rater's `pseudonym`
    (squidflow.judgments.pseudonyms) is the name every reason gives a partner rater: the reasons reach the report and
    the published `excluded_because`; `annotator` keeps the raw id, on this machine only."""
    if policy not in POLICIES:
        raise ValueError(f"judgments.quality.exclude = {policy!r}: one of {POLICIES}")
    crowd = dict(crowd or {})
    min_skill = float(crowd.pop("min_skill", 0.3))
    r1 = first_round(judgments)
    pseudonym = pseudonyms(judgments["annotator"].to_list())
    identity = rater_identity(judgments) and not r1.is_empty()
    source = ",".join(sorted(judgments["source"].unique().to_list()))
    skipped = _skipped_signals(judgments, probability, no_model_reason)
    base = _base_rows(r1, report, pseudonym, policy)
    rounds = _Rounds(verdicts={}, changes={k: [] for k in base})
    if identity:
        rounds = _consensus_rounds(
            r1,
            base,
            cfg,
            crowd=crowd,
            min_skill=min_skill,
            probability=probability,
            intervals=intervals or from_section(IntervalConfig, None),
            pseudonym=pseudonym,
        )
        skipped += rounds.skipped
    rows = []
    for k in sorted(base):
        row = base[k]
        row["verdict"], row["reasons"] = rounds.verdicts.get(k) or verdict(row, cfg, min_skill)
        if not identity and row["verdict"] == "ok":
            row["reasons"] = ["rubric only: " + NO_IDENTITY.format(source=source, signal="the other signals")]
        row["excluded"] = row["rubric_excluded"] or (policy == "triage" and row["verdict"] == "careless")
        row |= {
            "skipped": list(skipped),
            "rounds": rounds.changes[k],
            "consensus_rounds": rounds.n,
            "in_consensus": rounds.used is None or k in rounds.used,
        }
        rows.append(row)
    if not rows:
        return schemas.empty(schemas.RATER_TRIAGE)
    return pl.DataFrame(rows, schema=schemas.RATER_TRIAGE.columns, strict=False)


def exclusions(triage: pl.DataFrame, report: pl.DataFrame) -> pl.DataFrame:
    """The annotator report (schemas.ANNOTATOR_REPORT) under the triage policy: excluded when any of the rater's rows
    is excluded, with the triage's reasons added to the rubric's flags."""
    t = triage.group_by("annotator", maintain_order=True).agg(
        pl.col("excluded").any().alias("_x"),
        pl.col("reasons").list.explode(keep_nulls=False, empty_as_null=False).alias("_r"),
    )
    out = report.join(t, on="annotator", how="left", maintain_order="left").with_columns(
        (pl.col("excluded") | pl.col("_x").fill_null(False)).alias("excluded"),
        pl.when(pl.col("_x").fill_null(False) & ~pl.col("excluded"))
        .then(pl.concat_list(pl.col("flags"), pl.col("_r").list.eval(pl.lit("triage: ") + pl.element())))
        .otherwise(pl.col("flags"))
        .alias("flags"),
    )
    return out.select(list(schemas.ANNOTATOR_REPORT.columns))


def event_probabilities(
    predictions: pl.DataFrame, judgments: pl.DataFrame, events: list[str], events_config: dict | None = None
) -> pl.DataFrame:
    """A model's predictions (schemas.PREDICTIONS, labels = event ids) -> its probability of each judged prompt's
    event per (video_id, frame_index, event_prompt): the score of that label, 0 where the model does not list it."""
    from squidflow.vocabulary.events import PROMPTS, normalise_event, prompt_to_event

    to_event = prompt_to_event(events or list(PROMPTS), events_config)
    items = judgments.select("video_id", "frame_index", "event_prompt").unique(maintain_order=True)
    items = items.with_columns(
        pl.col("event_prompt")
        .map_elements(lambda p: to_event.get(normalise_event(p)), return_dtype=pl.Utf8)
        .alias("label")
    )
    scores = (
        predictions.drop_nulls(["video_id", "frame_index"])
        .group_by("video_id", "frame_index", "label", maintain_order=True)
        .agg(pl.col("score").max())
    )
    out = items.join(scores, on=["video_id", "frame_index", "label"], how="left", maintain_order="left")
    predicted = (
        predictions.select("video_id", "frame_index").unique(maintain_order=True).with_columns(pl.lit(True).alias("_p"))
    )
    out = out.join(
        predicted, on=["video_id", "frame_index"], how="inner", maintain_order="left"
    )  # only images the model saw
    return out.select(
        "video_id", "frame_index", "event_prompt", pl.col("score").fill_null(0.0).cast(pl.Float64).alias("probability")
    )


TRIAGE_COLUMNS = [
    "annotator",
    "variant",
    "ratings",
    "agreement r",
    "MACE",
    "GLAD",
    "D–S",
    "CROWDLAB",
    "verdict",
    "excluded",
    "why",
]


def _triage_header(t: pl.DataFrame, *, policy: str, source: str, note: str) -> list[str]:
    """The rater table's title and summary: verdict counts, who is excluded, the signals skipped."""
    from squidflow.contracts.io import md_escape

    sim = " — SIMULATED annotator panel" if "simulated" in source else ""
    counts = {v: int((t["verdict"] == v).sum()) for v in ("ok", "suspect", "careless")}
    excluded = t.filter(pl.col("excluded"))["annotator"].unique().sort().to_list()
    skipped = sorted({s for row in t["skipped"].to_list() for s in row})
    lines = [
        f"# Rater triage: ambiguity or noise{sim}",
        "",
        f"Judgments: {md_escape(source)}. Exclusion policy (judgments.quality.exclude): **{policy}**. Verdicts: "
        + ", ".join(f"{v} {n}" for v, n in counts.items())
        + ". Excluded from aggregation: "
        + (", ".join(md_escape(a) for a in excluded) if excluded else "none")
        + "."
        + (f" {note}" if note else ""),
        "",
        f"Raters are named by pseudonym (Ann<k>, as in the published dataset); their platform ids are in {RAW_IDS}.",
        "",
    ]
    if skipped:
        lines += ["Signals skipped:", *[f"- {md_escape(s)}" for s in skipped], ""]
    return lines


def _triage_rows(t: pl.DataFrame) -> list[str]:
    """The table itself: every rater not `ok` (or excluded) with the deciding signals."""
    from squidflow.contracts.io import md_escape
    from squidflow.statistics.intervals import format_interval

    def f(v):
        return "–" if v is None or not np.isfinite(v) else f"{v:.2f}"

    lines = [md_row(TRIAGE_COLUMNS), md_rule(len(TRIAGE_COLUMNS))]
    shown = t.filter((pl.col("verdict") != "ok") | pl.col("excluded")).sort("verdict", "annotator")
    for r in shown.to_dicts():
        lines.append(
            md_row(
                [
                    md_escape(r["annotator"]),
                    r["variant"],
                    r["n_judgments"],
                    format_interval(r["agreement"], r["agreement_lo"], r["agreement_hi"], 2),
                    f(r["mace_competence"]),
                    f(r["glad_alpha"]),
                    f(r["dawid_skene_diagonal"]),
                    f(r["crowdlab_quality"]),
                    r["verdict"],
                    "yes" if r["excluded"] else "no",
                    md_escape("; ".join(r["reasons"])),
                ]
            )
        )
    if shown.is_empty():
        lines.append("| (every rater ok) | | | | | | | | | | |")
    return lines


def _consensus_lines(t: pl.DataFrame) -> list[str]:
    """How many consensus rounds ran, and the verdicts that changed between them (the first MAX_CHANGES_SHOWN)."""
    from squidflow.contracts.io import md_escape

    if "consensus_rounds" not in t.columns or not len(t):
        return []
    changed = [(r["annotator"], c) for r in t.select("annotator", "rounds").to_dicts() for c in r["rounds"] or []]
    rounds = int(cast(int, t["consensus_rounds"].max()) or 1)
    out = t.filter(~pl.col("in_consensus").fill_null(True))
    lines = [
        "",
        f"Consensus (issue #50): {rounds} round(s); the last measured agreement and the annotator models "
        f"without the {out.height} rater(s) the round before called careless.",
    ]
    if changed:
        lines += [
            "",
            "Verdicts that changed between rounds:",
            *[f"- {md_escape(a)}: {md_escape(c)}" for a, c in changed[:MAX_CHANGES_SHOWN]],
        ]
        if len(changed) > MAX_CHANGES_SHOWN:
            lines.append(f"- … and {len(changed) - MAX_CHANGES_SHOWN} more (rater_triage.csv, column `rounds`)")
    return lines


def triage_markdown(t: pl.DataFrame, *, policy: str, source: str, note: str = "") -> str:
    """The report's rater table: verdict counts, then every rater not `ok` (or excluded) with the deciding signals;
    raters by pseudonym (the table is one of the report's: squidflow.judgments.pseudonyms)."""
    if "pseudonym" in t.columns:
        t = for_people(t)
    lines = _triage_header(t, policy=policy, source=source, note=note) + _triage_rows(t) + _consensus_lines(t)
    return "\n".join(lines) + "\n"
