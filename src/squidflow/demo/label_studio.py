"""The demo's SIMULATED panel as Label Studio would give its judgments back (annotation.platform label_studio).

So that the demo runs the Label Studio path of ingestion without a server, the simulated panel's MTurk batch results
(squidflow.demo.panel) are written in Label Studio's JSON export format (squidflow.judgments.label_studio.tasks.
export_from_judgments), one export per variant and round, every task marked SIMULATED in its `meta`.
"""

from __future__ import annotations

import json
import logging

import polars as pl

from squidflow.judgments.label_studio.tasks import RATING_TASKS, export_from_judgments

log = logging.getLogger(__name__)


def simulated_exports(batches: dict[int, pl.DataFrame], *, images_per_hit: int = 6) -> dict[str, str]:
    """The demo: the SIMULATED panel's judgments per round (its MTurk batch results as read by
    judgments.ingest.read_mturk_batch) -> one Label Studio export's JSON text per variant and round (keys A, B,
    A_repeat, B_repeat), as Label Studio would give them back. One user id per annotator across all exports, as on one
    server."""
    users: dict[str, int] = {}
    next_task = 1
    out = {}
    for round_, judgments in sorted(batches.items()):
        for variant in RATING_TASKS:
            key = variant if round_ == 1 else f"{variant}_repeat"
            part = judgments.filter(pl.col("variant") == variant)
            export = export_from_judgments(part, images_per_hit=images_per_hit, first_task_id=next_task, user_ids=users)
            for t in export:
                t["meta"] = {"simulated": True, "note": "SIMULATED annotator panel (squidflow demo), not people"}
            next_task += len(export)
            out[key] = json.dumps(export, ensure_ascii=False) + "\n"
            log.info("SIMULATED variant %s round %d: %d tasks", variant, round_, len(export))
    return out
