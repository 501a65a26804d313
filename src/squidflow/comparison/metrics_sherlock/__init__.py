"""Sherlock's three task metrics (Sherlock §4.1–4.3), one small module per task, as in allenai/sherlock's
`leaderboard_eval/`, and equal to its scorers on the same scores: `retrieval` (mean rank both ways, P@1, per chunk
of ~1K and their mean), `localization` (lapjv assignment with ground-truth boxes; top-box IoU > 0.5 with proposals,
and its oracle), `comparison` (pairwise accuracy against human Likert ratings, with random and oracle baselines)."""

from squidflow.comparison.metrics_sherlock.comparison import comparison_accuracy, pairwise_accuracy, random_scores
from squidflow.comparison.metrics_sherlock.localization import (
    assignment,
    assignment_accuracy,
    localization_gt,
    localization_proposals,
    region_iou,
)
from squidflow.comparison.metrics_sherlock.retrieval import chunk_scores, retrieval_chunk, retrieval_metrics

__all__ = [
    "assignment",
    "assignment_accuracy",
    "chunk_scores",
    "comparison_accuracy",
    "localization_gt",
    "localization_proposals",
    "pairwise_accuracy",
    "random_scores",
    "region_iou",
    "retrieval_chunk",
    "retrieval_metrics",
]
