"""Annotation waves: the first wave (the task, round 1, and its repeat, round 2: SQUID-E §4.2's intra-annotator
agreement) and each next round of ratings (annotation.next_round: the images whose next rating shrinks the
uncertainty most), ingested as a wave of its own, `round2`, `round3`, ...

A wave is not a `round`: `round: 2` stays SQUID-E's repeat of the same task by the same annotator. A next-round file
says its wave by its name (a Label Studio export of project `A_round2`, `A_round2.json`; an MTurk batch
`batch_results_round2.csv`) or by the `wave` key of its entry in judgments.label_studio.exports or judgments.batches.
The soft labels and image scores use every wave; Table 7 stays the first wave's, as in the paper.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

FIRST = "first"
_NEXT = re.compile(r"(?:^|[_\-.\s])round[_\-]?(\d+)$", re.IGNORECASE)


def wave_of(path) -> str:
    """`round<n>` (n >= 2) when a file's name ends so (A_round2.json, batch_results_round2.csv), else `first`."""
    m = _NEXT.search(Path(str(path)).stem)
    return f"round{int(m.group(1))}" if m and int(m.group(1)) >= 2 else FIRST


def first_wave(judgments: pl.DataFrame) -> pl.DataFrame:
    """Only the first wave's ratings (Table 7 and the quality checks that compare with the paper)."""
    if "wave" not in judgments.columns:
        return judgments
    return judgments.filter(pl.col("wave").fill_null(FIRST) == FIRST)


def per_wave(judgments: pl.DataFrame) -> dict[str, int]:
    """wave -> ratings, the first wave first."""
    if judgments.is_empty():
        return {}
    waves = judgments.select(
        pl.col("wave").fill_null(FIRST) if "wave" in judgments.columns else pl.lit(FIRST).alias("wave")
    )
    counts = dict(waves.group_by("wave").len().iter_rows())
    return {w: counts[w] for w in sorted(counts, key=lambda w: (w != FIRST, len(w), w))}
