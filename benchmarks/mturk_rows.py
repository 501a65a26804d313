"""squidflow 0.3.0's MTurk batch reader: every row of the batch-results CSV read one by one in Python.

The library reads a batch with polars (`squidflow.judgments.ingest.read_mturk_batch`); this row-by-row reader is
kept here, outside the library, as its baseline and its reference: `benchmarks/ingest.py` times the two, and the
tests (tests/robustness/test_fuzz_readers.py, test_faults_hostile.py) check that they give the same judgments,
problems and rejected counts. Each row goes through the library's own row reader (`read_batch_row`), as the polars
reader sends it the rows that have a problem.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from squidflow.judgments.ingest import (
    MTURK_REQUIRED,
    Problem,
    _require,
    fail_on_problems,
    judgments_frame,
    open_mturk_batch,
    read_batch_row,
)


def read_mturk_batch_rows(
    path: str | Path,
    *,
    on_error: str = "stop",
    known_images: set[str] | None = None,
    source: str = "mturk",
    round_: int = 1,
    seen: dict[tuple, str] | None = None,
) -> tuple[pl.DataFrame, list[Problem], int]:
    """What `read_mturk_batch` returns, read row by row."""
    path = Path(path)
    raw, slots = open_mturk_batch(path, MTURK_REQUIRED, "results/annotation/hits_*.csv")
    _require(raw, [f"Answer.rating_{i}" for i in slots], path, "the answers of every image slot")
    seen = {} if seen is None else seen
    rows, problems, rejected = [], [], 0
    positions: dict[str, int] = {}
    for rec in raw.iter_rows(named=True):
        if (rec["AssignmentStatus"] or "").strip() == "Rejected":
            rejected += 1
            continue
        problem, row_judgments = read_batch_row(rec, slots, path, known_images, round_, seen)
        if problem:
            problems.append(problem)
            continue
        hit = (rec["HITId"] or "").strip()
        position = positions.get(hit, 0)
        positions[hit] = position + 1
        for key, vid, frame, rating in row_judgments:
            seen[key] = f"{path}:{rec['_line']}"
            rows.append(
                {
                    "video_id": vid,
                    "frame_index": frame,
                    "event_prompt": key[3],
                    "variant": key[4],
                    "annotator": key[0],
                    "position": position,
                    "hit": hit,
                    "rating": rating,
                    "round": round_,
                    "source": source,
                }
            )
    fail_on_problems(problems, on_error, "Fix or remove these rows in the batch-results CSV.")
    return judgments_frame(rows), problems, rejected
