"""One home per definition (issue #33): the equal-width bin index, the LaTeX and Markdown escapers and the Markdown
table are each written once in src/squidflow/ (tests/helpers/definitions.py), as the layering test keeps imports
going one way; a planted second definition is caught."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers.definitions import findings_in, second_definitions
from helpers.tools import layering

ROOT = layering.ROOT


def test_each_definition_has_one_home() -> None:
    found = second_definitions()
    assert not found, "\n".join(found)


def test_a_planted_bin_index_is_caught(tmp_path: Path) -> None:
    copy = tmp_path / "repo" / "src" / "squidflow"
    shutil.copytree(ROOT / "src" / "squidflow", copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert second_definitions(tmp_path / "repo") == []
    pools = copy / "training" / "pools.py"
    pools.write_text(
        pools.read_text() + "\n\ndef _planted(confidence, n_bins):\n"
        "    edges = np.linspace(0.0, 1.0, n_bins + 1)\n"
        "    return np.clip(np.searchsorted(edges, confidence, side='left') - 1, 0, n_bins - 1)\n"
    )
    found = second_definitions(tmp_path / "repo")
    assert len(found) == 2, found
    assert all(f.startswith("training/pools.py:") and "the equal-width bin index" in f for f in found)


def test_planted_escapers_and_tables_are_caught() -> None:
    planted = {
        "a LaTeX escaper": 'escape = lambda s: s.replace("%", r"\\%").replace("_", r"\\_")\n',
        "a Markdown escaper": 'cell = html.escape(name).replace("|", "\\\\|")\n',
        "a Markdown table written by hand": 'lines = ["| a | b |", "|---|---|"]\n',
        "a LaTeX table written by hand": 'lines = [r"\\begin{table}[t]", r"\\begin{tabular}{lc}", r"\\toprule"]\n',
    }
    for idea, text in planted.items():
        found = findings_in("evaluation/planted.py", text)
        assert any(idea in f and "evaluation/planted.py:1" in f for f in found), (idea, found)
    # in its home the definition is not a second one
    assert findings_in("presentation/table_format.py", planted["a LaTeX escaper"]) == []
    assert findings_in("statistics/ece.py", "np.clip(np.searchsorted(edges, c) - 1, 0, m - 1)\n") == []
