"""Definitions that have one home in `src/squidflow/`, and a check that finds a second one (issue #33).

The layering check (tools/layering.py) keeps imports going one way; this one keeps a fact from being written twice,
so that a change of definition is one change. Each entry is the idea, the module that holds it, and what its code
looks like, read as text: the equal-width confidence bin (`np.clip(np.searchsorted(edges, ...) - 1, ...)` over
`np.linspace(0, 1, n_bins + 1)`), a LaTeX escaper (a string literal of backslash and one of LaTeX's specials), a
LaTeX table float written by hand (`\\begin{tabular}`), a Markdown escaper (a `|` replaced by `\\|`), a Markdown
table's rule row written by hand (`"|---`, `"---|"`, `"|".join("---" ...)`).
"""

from __future__ import annotations

import re
from pathlib import Path

from .tools import layering

ROOT = layering.ROOT

# idea -> (its one home under src/squidflow/, the patterns of its code)
DEFINITIONS: dict[str, tuple[str, tuple[re.Pattern, ...]]] = {
    "the equal-width bin index": (
        "statistics/ece.py",
        (
            re.compile(r"clip\(\s*(?:np\.)?searchsorted\([^)]*\)\s*-\s*1"),
            re.compile(r"linspace\(\s*0(?:\.0)?\s*,\s*1(?:\.0)?\s*,\s*\w+\s*\+\s*1\s*\)"),
        ),
    ),
    "a LaTeX escaper": ("presentation/table_format.py", (re.compile(r"""r["']\\[&%_#$]["']|["']\\\\[&%_#$]["']"""),)),
    "a LaTeX table written by hand": ("presentation/table_format.py", (re.compile(r"\\{1,2}begin\{tabular\}"),)),
    "a Markdown escaper": ("contracts/io.py", (re.compile(r"""replace\(\s*["']\|["']"""),)),
    "a Markdown table written by hand": (
        "presentation/table_format.py",
        (
            re.compile(r"""["']\|\s*-{3}"""),
            re.compile(r"""["']-{3}:?\|["']"""),
            re.compile(r"""join\(\s*["']-{3}["']"""),
        ),
    ),
}


def findings_in(relpath: str, text: str) -> list[str]:
    """`path:line: a second definition of <idea> (its home: <module>)` for each line of `text` that defines an idea
    whose home is elsewhere."""
    out = []
    for idea, (home, patterns) in DEFINITIONS.items():
        if relpath == home:
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            if any(p.search(line) for p in patterns):
                out.append(f"{relpath}:{lineno}: a second definition of {idea} (its home: squidflow/{home})")
    return out


def second_definitions(root: Path = ROOT) -> list[str]:
    """Every second definition in the package under `root`/src/squidflow."""
    src = root / "src" / "squidflow"
    out = []
    for path in sorted(src.rglob("*.py")):
        out += findings_in(path.relative_to(src).as_posix(), path.read_text(encoding="utf-8"))
    return out
