"""What a `snakemake -n` run plans, read from its output (shared by the workflow and the Slurm tests)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path


def planned_jobs(text: str) -> Counter:
    """The job counts of a dry run's 'Job stats' table, `all` included; empty when nothing is to be done."""
    counts: Counter = Counter()
    if "Job stats:" in text:
        for line in text.split("Job stats:", 1)[1].splitlines()[3:]:
            parts = line.split()
            if len(parts) != 2 or not parts[1].isdigit():
                break
            counts[parts[0]] = int(parts[1])
    counts.pop("total", None)
    return counts


def planned_outputs(text: str, rule: str) -> list[str]:
    """The output files of every planned job of `rule` in a dry run (its job blocks' `output:` lines)."""
    outputs: list[str] = []
    for block in re.split(r"\n(?=(?:local)?(?:rule|checkpoint) \w+:)", text):
        if re.match(rf"(?:local)?(?:rule|checkpoint) {rule}:", block.lstrip()):
            found = re.search(r"^\s+output: (.*)$", block, re.MULTILINE)
            outputs += found.group(1).split(", ") if found else []
    return outputs


def local_rules(rules_dir: Path) -> set[str]:
    """The workflow's `localrules:` (downloads run where Snakemake runs: never submitted to a cluster)."""
    names: set[str] = set()
    for smk in rules_dir.glob("*.smk"):
        for block in re.findall(r"^localrules:\n((?:[ \t]+\w+,?[ \t]*\n)+)", smk.read_text(), flags=re.M):
            names |= set(re.findall(r"\w+", block))
    return names
