"""Sherlock's three task metrics (Sherlock §4.1–4.3), one small module per task, as in allenai/sherlock's
`leaderboard_eval/`: `retrieval` (mean rank both ways, P@1, over chunks of ~1K), `localization` (linear assignment
with ground-truth boxes, top-box IoU > 0.5 with proposals), `comparison` (pairwise accuracy against human Likert
ratings)."""

from squidflow.comparison.metrics_sherlock.comparison import comparison_accuracy, pairwise_accuracy
from squidflow.comparison.metrics_sherlock.localization import (
    assignment_accuracy,
    localization_gt,
    localization_proposals,
)
from squidflow.comparison.metrics_sherlock.retrieval import retrieval_chunk, retrieval_metrics

__all__ = [
    "assignment_accuracy",
    "comparison_accuracy",
    "localization_gt",
    "localization_proposals",
    "pairwise_accuracy",
    "retrieval_chunk",
    "retrieval_metrics",
]
