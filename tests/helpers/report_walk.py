"""The workflow's rule outputs with their `report()` flags, read through Snakemake's public interfaces (for the
report tests): a Snakefile that includes the workflow's reads its `workflow` object's rules."""

from __future__ import annotations

import fnmatch
import json
import re
import tempfile
from pathlib import Path

from .runs import DEMO_CONFIG, ROOT, snakemake

# A Snakefile that includes the workflow's and then writes every rule output with its report flag to the file named
# by $SQUIDFLOW_WALK_OUT: it reads only the Snakefile's public `workflow` object (its rules and report text) and the
# `report()` flags through snakemake.io's public functions. `snakemake --list-rules` parses it (no job, no DAG).
WALK = r"""
include: {snakefile!r}

import json, os
from snakemake.io import get_flag_value, is_flagged

_walked = []
for _rule in workflow.rules:
    for _f in _rule.output:
        _flag = get_flag_value(_f, "report") if is_flagged(_f, "report") else None
        _info = None
        if _flag is not None:
            _labels = _flag.labels
            _info = {{
                "caption": None if _flag.caption is None else _flag.caption.get_path_or_uri(secret_free=True),
                "category": None if _flag.category is None else repr(_flag.category),
                "subcategory": None if _flag.subcategory is None else repr(_flag.subcategory),
                "labels": _labels if isinstance(_labels, dict) else repr(_labels),
                "patterns": list(_flag.patterns or []),
            }}
        _walked.append({{"rule": _rule.name, "output": str(_f), "report": _info}})
_text = workflow.report_text
with open(os.environ["SQUIDFLOW_WALK_OUT"], "w") as _out:
    json.dump({{"report_text": None if _text is None else _text.get_path_or_uri(secret_free=True), "outputs": _walked}}, _out)
"""


def walk(configfile: Path = DEMO_CONFIG) -> dict:
    """{"report_text": ..., "outputs": [{"rule", "output", "report": {caption, category, ...} or None}]}."""
    folder = Path(tempfile.mkdtemp(prefix="squidflow-walk-"))
    (folder / "Snakefile").write_text(WALK.format(snakefile=str(ROOT / "Snakefile")))
    out = folder / "walked.json"
    res = snakemake(
        "--snakefile",
        folder / "Snakefile",
        "--configfile",
        configfile,
        "--list-rules",
        timeout=300,
        env={"SQUIDFLOW_WALK_OUT": str(out)},
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(out.read_text())


def reported_categories(walked: dict, run: Path) -> set[str]:
    """The report categories of the outputs a finished run in `run` holds (a wildcard matches any name)."""
    files = [p.relative_to(run).as_posix() for p in (run / "results").rglob("*")]
    found = set()
    for o in walked["outputs"]:
        category = (o["report"] or {}).get("category") or ""
        if category and not category.startswith("<"):  # a category a function gives per file: the page decides
            pattern = re.sub(r"\{[^}]+\}", "*", o["output"])
            if any(fnmatch.fnmatch(f, pattern) for f in files):
                found.add(category.strip("'\""))
    return found
