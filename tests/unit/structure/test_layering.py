"""The library is a staircase: the shared floor imports no stage, a stage imports only the floor and the stages before
it in the pipeline (the Snakefile's include order), and `demo` sits on top (tools/layering.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers.tools import layering

ROOT, edges, stage_order, violations = layering.ROOT, layering.edges, layering.stage_order, layering.violations


def test_no_import_goes_the_wrong_way() -> None:
    problems = violations()
    assert not problems, "\n".join(problems)


def test_the_order_is_the_snakefiles_with_demo_on_top() -> None:
    order = stage_order()
    assert order[-1] == "demo" and order.index("videos") < order.index("frames") < order.index("training")
    assert set(order) == {p.stem for p in (ROOT / "workflow" / "rules").glob("*.smk")} - {"common"}


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    copy.mkdir()
    shutil.copy(ROOT / "Snakefile", copy / "Snakefile")
    shutil.copytree(ROOT / "workflow" / "rules", copy / "workflow" / "rules")
    shutil.copytree(ROOT / "src" / "squidflow", copy / "src" / "squidflow", ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_a_planted_sideways_import_is_caught(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    assert violations(copy) == []
    # judgments reaching forward into training's internals, inside a function (imports there count too)
    scores = copy / "src" / "squidflow" / "judgments" / "scores.py"
    scores.write_text(scores.read_text() + "\n\ndef _planted():\n    from squidflow.training.pools import se_pool\n\n"
                      "    return se_pool\n")
    # and the floor importing a stage
    (copy / "src" / "squidflow" / "planted.py").write_text("from squidflow import demo\n")
    found = violations(copy)
    assert len(found) == 2, found
    assert any("judgments/scores.py" in f and "stage judgments imports stage training" in f for f in found)
    assert any("planted.py:1" in f and "the shared floor imports stage demo" in f for f in found)


def test_the_floor_is_imported_by_every_stage_it_serves() -> None:
    """The vocabulary moved to the floor is read from there (one definition each), not from a stage."""
    src = ROOT / "src" / "squidflow"
    users = {(u, t) for u, t, _, _ in edges(src)}
    assert {("judgments", "floor"), ("training", "floor"), ("evaluation", "floor")} <= users
    for gone in ("evaluation/binning.py", "judgments/panel.py", "litmus/demo.py", "backbones.py", "report/style.py"):
        assert not (src / gone).exists(), f"{gone} moved to the floor or demo/; it must not come back"
