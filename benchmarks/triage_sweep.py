"""The rater triage against planted faults, sweeping the share of faulty raters from 0 to 40% (issues #36, #50).

    .venv/bin/python -m benchmarks.triage_sweep [--annotators 20] [--seeds 0 1] [--shares 0 0.1 0.2 0.3 0.4]
                                                [--blank both|with|without]

A demo-like corpus (tests/helpers/judgments_corpus.make_corpus: 600 frames, four events) is rated by the SIMULATED panel
(squidflow.demo.panel) with `--annotators` raters per variant, of which a share is faulty: from six faulty raters on,
three colluders (identical random answers, sharing HITs), the others the kinds constant, reversed, shifted by one
image and random (`careless`) in turn. Each share runs with the corpus's blank frames as the rubric's controls (SQUID-E
§3.2) and without them (a dataset built with squidflow has them only where its frames happen to be blank). For each
share and seed the rater triage runs (squidflow.judgments.triage) and is scored against what was planted
(squidflow.demo.triage_validation). Printed per share: the verdict's ROC AUC, recall and share of honest raters
flagged (`suspect` or `careless`; mean [lowest, highest] over the seeds), the consensus rounds, and, as the baseline
measured in the same run, the ROC AUC of the paper's rubric alone and the ratio of the two. Goal: ≤ 5% honest raters
flagged and every planted rater flagged at every share up to 40%, with or without blank controls; none flagged at 0%.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet, write_csv
from squidflow.demo.panel import FAULT_KINDS, PanelConfig, simulate_panel
from squidflow.demo.triage_validation import seed_scores
from squidflow.judgments.ingest import ingest
from squidflow.judgments.quality import QualityConfig, annotator_report, blank_images
from squidflow.judgments.triage import TriageConfig, rater_triage
from squidflow.statistics.intervals import IntervalConfig
from tests.helpers.judgments_corpus import hits_as_csv, make_corpus

KINDS = ("constant", "reversed", "shifted", "careless")  # in turn; "careless" rates at random
COLLUDERS = 3


def kinds_for(n_faulty: int) -> dict[str, int]:
    """Planted counts per variant: three colluders from six faulty raters on, the rest KINDS in turn."""
    counts = dict.fromkeys(FAULT_KINDS, 0)
    counts["colluders"] = COLLUDERS if n_faulty >= 2 * COLLUDERS else 0
    for k in range(n_faulty - counts["colluders"]):
        counts[KINDS[k % len(KINDS)]] += 1
    return counts


def fmt(values: list[float]) -> str:
    v = np.array([x for x in values if np.isfinite(x)])
    return "–" if not len(v) else f"{v.mean():.3f} [{v.min():.3f}, {v.max():.3f}]"


def run_share(root, frames, truth, hits, blank, share: float, args) -> dict[str, list[float]]:
    n_faulty = int(round(share * args.annotators))
    res: dict[str, list[float]] = {"auc": [], "recall": [], "honest": [], "rubric": [], "flagged": [], "rounds": []}
    for seed in args.seeds:
        cfg = PanelConfig(annotators_per_variant=args.annotators, seed=seed, **kinds_for(n_faulty))
        batch, _, info = simulate_panel(hits, truth, cfg)
        write_csv(batch, root / "batch.csv")
        j, _ = ingest(source="simulated", batches=[(root / "batch.csv", 1)], known_images=set(frames["image_id"]))
        report = annotator_report(j, QualityConfig(), blank)
        t = rater_triage(j, report, TriageConfig(), intervals=IntervalConfig(resamples=300))
        rows = {r["signal"]: r for r in seed_scores(t, info["planted"], TriageConfig(), 0.3)}
        res["auc"].append(rows["verdict"]["roc_auc"])
        res["recall"].append(rows["verdict"]["recall"])
        res["honest"].append(rows["verdict"]["honest_flagged"])
        res["rubric"].append(rows["rubric (SQUID-E §3.2)"]["roc_auc"])
        res["flagged"].append(float((t["verdict"] != "ok").mean()))
        res["rounds"].append(float(t["consensus_rounds"].max()))
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--annotators", type=int, default=20)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--shares", type=float, nargs="+", default=[0.0, 0.1, 0.2, 0.3, 0.4])
    ap.add_argument("--blank", choices=["both", "with", "without"], default="both")
    args = ap.parse_args()
    blanks = {"both": [True, False], "with": [True], "without": [False]}[args.blank]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_corpus(root, videos_per_event=25, frames_per_video=6, seed=3)
        frames = read_parquet(root / "results/dataset/frames.parquet", schemas.FRAMES)
        truth = read_parquet(root / "results/videos/demo/truth.parquet", schemas.TRUTH)
        hits = hits_as_csv(frames, root)
        blank_ids = blank_images(frames, 4.0, root=root)
        print(f"{args.annotators} raters per variant, seeds {args.seeds}; {len(blank_ids)} blank frames")
        print(
            f"{'share':>6} {'faulty':>6} {'blank':>6}  {'verdict ROC AUC':<24} {'recall':<24} {'honest flagged':<24} "
            f"{'rubric ROC AUC (baseline)':<26} {'ratio':>5} {'rounds':>6} {'seconds':>8}"
        )
        for share in args.shares:
            for with_blank in blanks:
                t0 = time.perf_counter()
                res = run_share(root, frames, truth, hits, blank_ids if with_blank else set(), share, args)
                seconds = (time.perf_counter() - t0) / len(args.seeds)
                n_faulty = int(round(share * args.annotators))
                kinds = ", ".join(f"{k} {v}" for k, v in kinds_for(n_faulty).items() if v) or "none"
                yes = "yes" if with_blank else "no"
                if n_faulty == 0:
                    print(
                        f"{share:>6.1%} {0:>6} {yes:>6}  (none planted: raters flagged {fmt(res['flagged'])})"
                        f"{'':>52} {fmt(res['rounds'])[:5]:>6} {seconds:>8.1f}",
                        flush=True,
                    )
                    continue
                rubric = np.nanmean(res["rubric"]) if np.isfinite(res["rubric"]).any() else float("nan")
                ratio = np.nanmean(res["auc"]) / rubric if np.isfinite(rubric) and rubric else float("nan")
                print(
                    f"{share:>6.1%} {n_faulty:>6} {yes:>6}  {fmt(res['auc']):<24} {fmt(res['recall']):<24} "
                    f"{fmt(res['honest']):<24} {fmt(res['rubric']):<26} {ratio:>5.2f} {fmt(res['rounds'])[:5]:>6} "
                    f"{seconds:>8.1f}   ({kinds})",
                    flush=True,
                )


if __name__ == "__main__":
    main()
