"""The rater triage against planted faults, sweeping the share of faulty raters from 0 to 30% (issue #36).

    .venv/bin/python benchmarks/triage_sweep.py [--annotators 20] [--seeds 0 1 2] [--shares 0 0.1 0.2 0.3]

A demo-like corpus (tests/unit/judgments/test_judgments.make_corpus: 600 frames, four events) is rated by the SIMULATED panel
(squidflow.demo.panel) with `--annotators` raters per variant, of which a share is faulty, the kinds in turn
(careless, constant, extremes, reversed, prior). For each share and seed the rater triage runs
(squidflow.judgments.triage) and is scored against what was planted (squidflow.demo.triage_validation). Printed per
share: the verdict's ROC AUC, recall and share of honest raters flagged (mean [lowest, highest] over the seeds), and,
as the baseline measured in the same run, the ROC AUC of the paper's rubric alone (SQUID-E §3.2) and the ratio of the
two. Goal: verdict ROC AUC ≥ 0.95 and ≤ 5% honest raters flagged at every share ≥ 10%; ≤ 5% flagged at 0%.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests"), str(ROOT / "tests" / "unit" / "judgments")]

from test_judgments import _hits_as_csv, make_corpus  # noqa: E402

from squidflow import schemas  # noqa: E402
from squidflow.demo.panel import FAULT_KINDS, PanelConfig, simulate_panel  # noqa: E402
from squidflow.demo.triage_validation import seed_scores  # noqa: E402
from squidflow.intervals import IntervalConfig  # noqa: E402
from squidflow.io import read_parquet, write_csv  # noqa: E402
from squidflow.judgments.ingest import ingest  # noqa: E402
from squidflow.judgments.quality import QualityConfig, annotator_report, blank_images  # noqa: E402
from squidflow.judgments.triage import TriageConfig, rater_triage  # noqa: E402


def kinds_for(n_faulty: int) -> dict[str, int]:
    counts = dict.fromkeys(FAULT_KINDS, 0)
    for k in range(n_faulty):
        counts[FAULT_KINDS[k % len(FAULT_KINDS)]] += 1
    return counts


def fmt(values: list[float]) -> str:
    v = np.array([x for x in values if np.isfinite(x)])
    return "–" if not len(v) else f"{v.mean():.3f} [{v.min():.3f}, {v.max():.3f}]"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--annotators", type=int, default=20)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--shares", type=float, nargs="+", default=[0.0, 0.1, 0.2, 0.3])
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_corpus(root, videos_per_event=25, frames_per_video=6, seed=3)
        frames = read_parquet(root / "results/dataset/frames.parquet", schemas.FRAMES)
        truth = read_parquet(root / "results/videos/demo/truth.parquet", schemas.TRUTH)
        hits = _hits_as_csv(frames, root)
        blank = blank_images(frames, 4.0, root=root)
        print(f"{'share':>6} {'faulty':>6}  verdict ROC AUC          recall                   honest flagged"
              "           rubric ROC AUC (baseline)  ratio  seconds")
        for share in args.shares:
            n_faulty = int(round(share * args.annotators))
            res: dict[str, list[float]] = {"auc": [], "recall": [], "honest": [], "rubric": [], "flagged": []}
            t0 = time.perf_counter()
            for seed in args.seeds:
                cfg = PanelConfig(annotators_per_variant=args.annotators, seed=seed, **kinds_for(n_faulty))
                batch, _, info = simulate_panel(hits, truth, cfg)
                write_csv(batch, root / "batch.csv")
                j, _ = ingest(source="simulated", batches=[(root / "batch.csv", 1)],
                              known_images=set(frames["image_id"]))
                report = annotator_report(j, QualityConfig(), blank)
                t = rater_triage(j, report, TriageConfig(), intervals=IntervalConfig(resamples=300))
                rows = {r["signal"]: r for r in seed_scores(t, info["planted"], TriageConfig(), 0.3)}
                res["auc"].append(rows["verdict"]["roc_auc"])
                res["recall"].append(rows["verdict"]["recall"])
                res["honest"].append(rows["verdict"]["honest_flagged"])
                res["rubric"].append(rows["rubric (SQUID-E §3.2)"]["roc_auc"])
                res["flagged"].append(float((t["verdict"] != "ok").mean()))
            seconds = (time.perf_counter() - t0) / len(args.seeds)
            ratio = (np.nanmean(res["auc"]) / np.nanmean(res["rubric"])
                     if np.isfinite(res["rubric"]).any() and np.nanmean(res["rubric"]) else float("nan"))
            if n_faulty == 0:
                print(f"{share:>6.0%} {0:>6}  (none planted: raters flagged {fmt(res['flagged'])})"
                      f"{'':>40}{seconds:>8.1f}")
                continue
            print(f"{share:>6.0%} {n_faulty:>6}  {fmt(res['auc']):<24} {fmt(res['recall']):<24} "
                  f"{fmt(res['honest']):<24} {fmt(res['rubric']):<26} {ratio:>5.2f} {seconds:>8.1f}")


if __name__ == "__main__":
    main()
