"""Proof on planted faults (issue #36): how well each triage signal and the verdict find what the SIMULATED panel
planted (squidflow.demo.panel: careless, constant, extremes-only, reversed-scale and prior-copying raters; images
whose ratings were swapped with another image's).

Per signal: a suspicion score (higher = more suspect) for ROC AUC, and the signal's own flag (its threshold in
judgments.triage / judgments.crowd) for precision and recall, against the planted raters (or, for the image signal,
the swapped images). Over several panel seeds each number is given as its mean with the lowest and highest seed.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from squidflow.judgments.triage import TriageConfig
from squidflow.presentation.table_format import md_row, md_rule

COLUMNS = [
    "signal",
    "unit",
    "seeds",
    "planted",
    "honest",
    "precision",
    "precision_lo",
    "precision_hi",
    "recall",
    "recall_lo",
    "recall_hi",
    "roc_auc",
    "roc_auc_lo",
    "roc_auc_hi",
    "honest_flagged",
    "honest_flagged_lo",
    "honest_flagged_hi",
]


def _nan0(x: np.ndarray, fill: float) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return np.where(np.isfinite(x), x, fill)


def rater_signals(t: pl.DataFrame, cfg: TriageConfig, min_skill: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{signal: (score, flagged)} per row of a rater triage (schemas.RATER_TRIAGE)."""
    agree = t["agreement"].to_numpy().astype(float)
    hi = t["agreement_hi"].to_numpy().astype(float)
    out = {
        "agreement (leave-one-out r)": (1 - _nan0(agree, -1.0), ~(np.isfinite(agree) & (agree >= cfg.min_agreement))),
        "agreement interval below min_agreement": (-_nan0(hi, -1.0), _nan0(hi, -1.0) < cfg.min_agreement),
    }
    for name, c in (
        ("MACE competence", "mace_competence"),
        ("GLAD α", "glad_alpha"),
        ("Dawid–Skene diagonal", "dawid_skene_diagonal"),
        ("CROWDLAB quality", "crowdlab_quality"),
    ):
        s = t[c].to_numpy().astype(float)
        if np.isfinite(s).any():
            out[name] = (1 - _nan0(s, np.nanmedian(s)), _nan0(s, 1.0) < min_skill)
    modal = _nan0(t["modal_share"].to_numpy(), 0.0)
    out["constant rating"] = (modal, modal >= cfg.max_modal_share)
    ext = _nan0(t["extreme_share"].to_numpy(), 0.0)
    excess = ext - _nan0(t["others_extreme_share"].to_numpy(), 0.0)
    out["extremes only"] = (excess, (ext >= cfg.min_extreme_share) & (excess >= cfg.min_extreme_excess))
    hit = _nan0(t["hit_constant_share"].to_numpy(), 0.0)
    out["one rating per HIT"] = (hit, hit >= cfg.max_hit_constant_share)
    rubric = t["rubric_excluded"].to_numpy().astype(bool)
    out["rubric (SQUID-E §3.2)"] = (rubric.astype(float), rubric)
    verdict = t["verdict"].replace_strict({"ok": 0, "suspect": 1, "careless": 2}, default=0).to_numpy().astype(float)
    out["verdict"] = (verdict, verdict > 0)
    return out


def roc_auc(score: np.ndarray, truth: np.ndarray) -> float:
    """ROC AUC (ties count half), NaN unless both classes are present."""
    if truth.all() or not truth.any():
        return float("nan")
    from scipy.stats import mannwhitneyu

    pos, neg = score[truth], score[~truth]
    return float(mannwhitneyu(pos, neg).statistic / (len(pos) * len(neg)))


def _scores(score, flagged, truth) -> dict:
    tp = int((flagged & truth).sum())
    return {
        "planted": int(truth.sum()),
        "honest": int((~truth).sum()),
        "precision": tp / flagged.sum() if flagged.sum() else float("nan"),
        "recall": tp / truth.sum() if truth.sum() else float("nan"),
        "roc_auc": roc_auc(score, truth),
        "honest_flagged": float((flagged & ~truth).sum() / (~truth).sum()) if (~truth).sum() else float("nan"),
    }


def seed_scores(
    triage: pl.DataFrame, planted: pl.DataFrame, cfg: TriageConfig, min_skill: float, images: pl.DataFrame | None = None
) -> list[dict]:
    """One panel seed: per signal {signal, unit, planted, honest, precision, recall, roc_auc, honest_flagged}."""
    bad = set(planted.filter(pl.col("unit") == "annotator")["annotator"].to_list())
    truth = triage["annotator"].is_in(list(bad)).to_numpy()
    rows = [
        {"signal": name, "unit": "rater", **_scores(score, flagged, truth)}
        for name, (score, flagged) in rater_signals(triage, cfg, min_skill).items()
    ]
    swapped = planted.filter(pl.col("unit") == "image")
    if images is not None and not swapped.is_empty():
        keys = set(zip(swapped["image_id"].to_list(), swapped["event_prompt"].to_list(), strict=True))
        ids = (images["video_id"] + "_" + images["frame_index"].cast(pl.Utf8)).to_list()
        truth_i = np.array([(i, p) in keys for i, p in zip(ids, images["event_prompt"].to_list(), strict=True)])
        for name, col in (("image: spread", "spread"), ("image: variant gap A-B", "variant_gap")):
            s = _nan0(images[col].to_numpy(), 0.0)
            rows.append({"signal": name, "unit": "image", **_scores(s, s >= cfg.min_spread, truth_i)})
        s = images["triage"].is_in(["ambiguous", "contested"]).to_numpy()
        rows.append(
            {"signal": "image: ambiguous or contested", "unit": "image", **_scores(s.astype(float), s, truth_i)}
        )
    return rows


def validation_table(per_seed: list[list[dict]]) -> pl.DataFrame:
    """Seeds' rows -> one row per signal: each number's mean over seeds with the lowest and highest seed's."""
    frame = pl.DataFrame([r for rows in per_seed for r in rows])
    out = []
    for (signal, unit), g in frame.group_by(["signal", "unit"], maintain_order=True):
        row = {
            "signal": signal,
            "unit": unit,
            "seeds": len(g),
            "planted": int(g["planted"].sum()),
            "honest": int(g["honest"].sum()),
        }
        for m in ("precision", "recall", "roc_auc", "honest_flagged"):
            v = g[m].cast(pl.Float64).to_numpy()
            v = v[np.isfinite(v)]
            row[m], row[f"{m}_lo"], row[f"{m}_hi"] = (
                (float(v.mean()), float(v.min()), float(v.max())) if len(v) else (float("nan"),) * 3
            )
        out.append(row)
    return pl.DataFrame(out).select(COLUMNS)


def validation_markdown(table: pl.DataFrame, *, planted: dict, policy: str) -> str:
    from squidflow.statistics.intervals import format_interval

    kinds = ", ".join(f"{k} {v}" for k, v in planted.items() if v) or "none"
    lines = [
        "# Rater and image triage against planted faults — SIMULATED annotator panel",
        "",
        f"Planted per variant: {kinds}. Exclusion policy (judgments.quality.exclude): {policy}. Each number is "
        "the mean over the panel seeds with [lowest, highest]; a rater counts as flagged by the verdict when it "
        "is `suspect` or `careless`.",
        "",
        md_row(["signal", "unit", "seeds", "planted", "honest", "precision", "recall", "ROC AUC", "honest flagged"]),
        md_rule(9),
    ]
    for r in table.to_dicts():
        cells = [
            format_interval(r[m], r[f"{m}_lo"], r[f"{m}_hi"], 2)
            if r[f"{m}_lo"] != r[f"{m}_hi"]
            else format_interval(r[m], None, None, 2)
            for m in ("precision", "recall", "roc_auc", "honest_flagged")
        ]
        lines.append(md_row([r["signal"], r["unit"], r["seeds"], r["planted"], r["honest"], *cells]))
    return "\n".join(lines) + "\n"
