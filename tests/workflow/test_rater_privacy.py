"""Nothing that identifies a rater leaves the machine (issue 58 deliverable 6, issue 57 case 1), on the shared small
run: every table under results/tables/ and every file of the published dataset names raters by pseudonym only
(`Ann<k>`), never by the ids in results/judgments/judgments.parquet; results/judgments/ keeps the ids, and the rater
triage's table, caption and results/judgments/rater_triage.parquet say where."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl

from squidflow.judgments.pseudonyms import findable, raw_ids_in

CLI = str(Path(sys.executable).with_name("squidflow"))


def test_no_table_and_no_published_file_names_a_rater_by_id(small_workflow) -> None:
    results = small_workflow.results
    raw = findable(pl.read_parquet(results / "judgments" / "judgments.parquet")["annotator"].to_list())
    assert raw, "the small run's judgments name raters"
    readable = [*(results / "tables").rglob("*"), *(results / "publish").rglob("*")]
    leaks = {}
    for path in (p for p in readable if p.is_file()):
        if path.suffix == ".parquet":
            table = pl.read_parquet(path)
            text = "\n".join(str(v) for c, t in table.schema.items() if t == pl.Utf8 for v in table[c].unique())
        elif path.suffix in (".csv", ".md", ".tex", ".json", ".html", ".txt"):
            text = path.read_text(encoding="utf-8", errors="replace")
        else:
            continue
        found = raw_ids_in(text, raw)
        if found:
            leaks[str(path.relative_to(results))] = found[:3]
    assert not leaks, leaks
    triage = pl.read_parquet(results / "judgments" / "rater_triage.parquet")
    assert set(triage["annotator"]) <= set(pl.read_parquet(results / "judgments" / "judgments.parquet")["annotator"])
    assert triage["pseudonym"].str.starts_with("Ann").all()  # the owner's key, on this machine
    md = (results / "tables" / "rater_triage.md").read_text(encoding="utf-8")
    assert "results/judgments/rater_triage.parquet" in md
    for folder in sorted(p.parent for p in (results / "publish").glob("*/croissant.json")):
        res = subprocess.run([CLI, "publish", "check", str(folder), "--no-load"], capture_output=True, text=True,
                             timeout=600)  # fmt: skip
        assert "names a rater" not in res.stdout + res.stderr, (res.stdout + res.stderr)[-3000:]
