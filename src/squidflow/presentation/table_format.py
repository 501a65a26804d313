"""The one table writer: Markdown and LaTeX rows, each with its one escaper, for every table a stage writes.

Every results table (SQUID-E Tables 1-9, the keyword, litmus and comparison tables, the reports of what was dropped)
is read by people in two forms, Markdown beside the CSV and LaTeX for a paper. Written by hand in each module, the
tables drifted: four LaTeX escapers with four character sets, Markdown text from users or videos (ids, titles,
errors, config names) left unescaped in some. Here a table is a header and rows of cells; what a cell holds is the
caller's (numbers, intervals, ids), and the caller says which cells are text from outside: `md_escape` (squidflow.contracts.io,
the project's Markdown escaper) for Markdown, `tex_escape` for LaTeX.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from squidflow.contracts.io import md_escape

__all__ = ["RIGHT", "latex_table", "md_escape", "md_row", "md_rule", "md_table", "tex_escape", "tex_row"]

RIGHT = "---:"  # a right-aligned Markdown column's rule (counts)

# LaTeX's ten special characters, then the typographic characters the tables' captions and headers use, as pdflatex
# without extra packages writes them; one pass (str.translate), so a replacement is never escaped again.
_TEX = str.maketrans(
    {
        "\\": r"\textbackslash{}",
        "&": r"\&",
        "%": r"\%",
        "_": r"\_",
        "#": r"\#",
        "$": r"\$",
        "{": r"\{",
        "}": r"\}",
        "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}",
        "<": r"\textless{}",
        ">": r"\textgreater{}",
        "‖": r"$\|$",
        "ρ": r"$\rho$",
        "σ": r"$\sigma$",
        "·": r"$\cdot$",
        "²": "$^2$",
        "±": r"$\pm$",
        "×": r"$\times$",
        "†": r"$\dagger$",
        "→": r"$\rightarrow$",
        "…": r"\dots{}",
        "−": "-",
        "–": "--",
        "—": "---",
    }
)


def tex_escape(text: object) -> str:
    """Text as LaTeX that prints it: special characters escaped, typographic ones in their LaTeX spelling."""
    return str(text).translate(_TEX)


def md_row(cells: Iterable[object]) -> str:
    """One Markdown table row of already formatted cells."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def md_rule(columns: int | Sequence[str]) -> str:
    """The header's rule: `columns` left-aligned columns, or one marker per column ("---", RIGHT)."""
    marks = ["---"] * columns if isinstance(columns, int) else list(columns)
    return "|" + "|".join(marks) + "|"


def md_table(
    header: Sequence[object],
    rows: Iterable[Sequence[object]],
    *,
    align: Sequence[str] | None = None,
    data: Iterable[int] = (),
) -> list[str]:
    """A Markdown table's lines: header, rule, rows; the cells at the positions in `data` hold text from users or
    videos and are escaped (md_escape), the others are written as they are."""
    escaped = set(data)
    return [
        md_row(header),
        md_rule(align if align is not None else len(header)),
        *[md_row(md_escape(c) if i in escaped else c for i, c in enumerate(row)) for row in rows],
    ]


def tex_row(cells: Iterable[object]) -> str:
    """One LaTeX tabular row of already escaped cells."""
    return " & ".join(str(c) for c in cells) + r" \\"


def latex_table(
    *,
    caption: str,
    label: str,
    columns: str,
    head: Sequence[str],
    body: Iterable[str],
    small: bool = False,
    fit_width: bool = False,
) -> str:
    """A booktabs table float: `caption` (plain text, escaped here), `label` (tab:<label>), the tabular's `columns`
    spec, its `head` and `body` lines (rows already written with tex_row), \\small or scaled to the text width."""
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        *([r"\small"] if small else []),
        r"\caption{" + tex_escape(caption) + "}",
        r"\label{tab:" + label + "}",
        *([r"\resizebox{\textwidth}{!}{%"] if fit_width else []),
        r"\begin{tabular}{" + columns + "}",
        r"\toprule",
        *head,
        *body,
        r"\bottomrule",
        r"\end{tabular}" + ("}" if fit_width else ""),
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"
