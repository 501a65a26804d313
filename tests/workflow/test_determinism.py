"""Same inputs, same bytes (issue 37): the tables with bootstrap intervals do not depend on the order in which
polars groups rows, on Python's string hashing (PYTHONHASHSEED) or on anything else that changes between two runs of
one command. The small run is made under PYTHONHASHSEED=0 (tests/conftest.py); its interval tables are computed
again here under PYTHONHASHSEED=1 and must be byte for byte the same."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from helpers.runs import WorkflowRun, copy_run, cores, jobs_run, rule_blocks

from squidflow.judgments.agreement import agreement_table, intra_annotator_rhos
from squidflow.judgments.ingest import read_release
from squidflow.statistics.intervals import IntervalConfig

TABLE7 = """
import sys
from squidflow.statistics.intervals import IntervalConfig
from squidflow.judgments.agreement import agreement_table
from squidflow.judgments.ingest import read_release
from squidflow.judgments.tables import table7_markdown
judgments, _ = read_release(sys.argv[1])
table = agreement_table(judgments, intervals=IntervalConfig(resamples=200, seed=3))
sys.stdout.write(table.write_csv() + table7_markdown(table, source="release", pooling="wide", note="test"))
"""


def _table7(shared_data: Path, seed: str) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    res = subprocess.run(
        [sys.executable, "-c", TABLE7, str(shared_data / "squid-e" / "huj_annotations.csv")],
        capture_output=True,
        env=env,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr.decode()[-3000:]
    return res.stdout


def test_table7_from_the_release_is_the_same_bytes_under_two_hash_seeds(shared_data: Path) -> None:
    a, b = _table7(shared_data, "0"), _table7(shared_data, "1")
    assert a and a == b


def test_table7_and_its_intra_annotator_spearman_do_not_depend_on_the_judgments_row_order(shared_data: Path) -> None:
    """The release with a repeat round added (each rating position re-rates its first five items, ±5): Table 7 with
    intervals, and the per-annotator intra-annotator Spearman values that its bootstrap resamples, are the same
    whatever the order of the rows read (polars' joins and group_bys do not keep row order unless asked)."""
    judgments, _ = read_release(shared_data / "squid-e" / "huj_annotations.csv")
    rng = np.random.default_rng(0)
    repeat = judgments.group_by("annotator", maintain_order=True).head(5).select(judgments.columns)
    repeat = repeat.with_columns(
        pl.lit(2, dtype=judgments["round"].dtype).alias("round"),
        (pl.col("rating") + pl.Series(rng.integers(-5, 6, len(repeat))))
        .clip(0, 100)
        .cast(judgments["rating"].dtype)
        .alias("rating"),
    )
    both = pl.concat([judgments, repeat])
    cfg = IntervalConfig(resamples=100, seed=3)
    table, rhos = agreement_table(both, intervals=cfg).write_csv(), intra_annotator_rhos(both)
    assert len(rhos) >= 2
    for seed in range(3):
        shuffled = both.sample(fraction=1.0, shuffle=True, seed=seed)
        assert agreement_table(shuffled, intervals=cfg).write_csv() == table
        assert np.array_equal(intra_annotator_rhos(shuffled), rhos)


def _tables(results: Path) -> dict[str, bytes]:
    return {
        p.relative_to(results).as_posix(): p.read_bytes()
        for p in sorted((results / "tables").rglob("*"))
        if p.is_file()
    }


def _interval_table_rules(run: WorkflowRun) -> list[str]:
    """Every rule that writes a table under results/tables/ (Snakemake's own summary of the run: file, date, rule)
    and takes the intervals' settings (its params in the rules files), and nothing else."""
    res = run.snakemake("--summary", timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    writers = {
        cols[2]
        for line in res.stdout.splitlines()
        if len(cols := line.split("\t")) > 2 and "results/tables/" in cols[0]
    }
    takes_intervals = {rule for _, rule, block in rule_blocks() if 'intervals=config["intervals"]' in block}
    return sorted(writers & takes_intervals)


@pytest.mark.slow
def test_the_runs_interval_tables_are_the_same_bytes_when_made_again_under_another_hash_seed(
    small_workflow, tmp_path: Path
) -> None:
    before = _tables(small_workflow.results)
    assert any(name.endswith("table7_agreement.csv") for name in before)
    copy = copy_run(small_workflow, tmp_path / "run")
    table_rules = _interval_table_rules(copy)
    res = copy.snakemake(
        "--cores",
        str(cores()),
        "--forcerun",
        *table_rules,
        "--allowed-rules",
        *table_rules,
        env={"PYTHONHASHSEED": "1"},
        timeout=1200,
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    remade = jobs_run(res.stdout + res.stderr)
    assert {"agreement_table", "result_table", "evaluation_table"} <= remade, remade
    after = _tables(copy.results)
    assert after.keys() == before.keys()
    changed = [name for name in before if after[name] != before[name]]
    assert not changed, f"tables that changed when made again under another PYTHONHASHSEED: {changed}"
