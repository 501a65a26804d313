"""The README and the pages of docs/ as a reader follows them: sections by heading, GitHub's heading anchors, and
the relative links of a page (issue 60: the README is short and names the page each journey continues on)."""

from __future__ import annotations

import re
from pathlib import Path

FENCE = re.compile(r"^```.*?^```", flags=re.S | re.M)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def prose(text: str) -> str:
    """`text` without its fenced code blocks (a `# comment` there is no heading, a `[x](y)` no link)."""
    return FENCE.sub("", text)


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def headings(path: Path) -> list[str]:
    """The headings of a Markdown file, outside code blocks."""
    return re.findall(r"^#{1,6} +(.+?) *#*$", prose(path.read_text(encoding="utf-8")), flags=re.M)


def section(path: Path, heading: str) -> str:
    """The section `## heading` of a Markdown file, up to the next `## `."""
    text = path.read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def links(path: Path) -> list[str]:
    """The relative link targets of a Markdown file (no URL with a scheme), outside code blocks."""
    found = LINK.findall(prose(path.read_text(encoding="utf-8")))
    return [t for t in found if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def broken(path: Path) -> list[str]:
    """The relative links of `path` that do not resolve: no such file, or an `#anchor` no heading of it has."""
    problems = []
    for target in links(path):
        file, _, fragment = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            problems.append(f"{path.name}: {target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in {anchor(h) for h in headings(dest)}:
            problems.append(f"{path.name}: {target}: {dest.name} has no heading with that anchor")
    return problems


def followed(readme: Path, heading: str) -> tuple[Path, str]:
    """The docs page the README sends a reader to for `heading` (its link `docs/<page>.md#<anchor>`), and that
    page's section."""
    target = re.search(rf"\]\((docs/[\w.-]+\.md)#{re.escape(anchor(heading))}\)", readme.read_text(encoding="utf-8"))
    assert target, f"README.md links to no docs page's section {heading!r}"
    page = readme.parent / target.group(1)
    return page, section(page, heading)
