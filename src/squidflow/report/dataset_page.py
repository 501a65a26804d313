"""The published dataset's own page in the report (category "Published dataset"): its card rendered, its configs
with their row counts per split, croissant.json, and the LeWiDi files, from the published folder itself (what a
reader downloads), so the report shows what was published, not what the run meant to publish."""

from __future__ import annotations

import json
import re
from pathlib import Path

from squidflow.contracts.io import html_text
from squidflow.contracts.paths import recorded_path

STYLE = (
    "body{font-family:sans-serif;max-width:62rem;margin:1rem auto;line-height:1.4}table{border-collapse:collapse}"
    "td,th{border:1px solid #999;padding:.2rem .5rem}pre{background:#f4f4f4;padding:.5rem;overflow:auto}"
)


def _inline(text: str) -> str:
    out = html_text(text)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)


def markdown_html(text: str) -> str:
    """The card's Markdown as HTML: headings, tables, bullets, code blocks and paragraphs (every text escaped)."""
    out: list[str] = []
    table: list[str] = []
    code: list[str] | None = None
    para: list[str] = []

    def flush():
        nonlocal table, para
        if table:
            rows = [r for r in table if not re.fullmatch(r"\|?[\s:|-]+\|?", r)]
            cells = [[_inline(c.strip()) for c in r.strip().strip("|").split("|")] for r in rows]
            out.append(
                "<table>" + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in cells) + "</table>"
            )
            table = []
        if para:
            out.append("<p>" + _inline(" ".join(para)) + "</p>")
            para = []

    for line in text.splitlines():
        if code is not None:
            if line.startswith("```"):
                out.append("<pre>" + html_text("\n".join(code)) + "</pre>")
                code = None
            else:
                code.append(line)
            continue
        if line.startswith("```"):
            flush()
            code = []
        elif line.startswith("|"):
            table.append(line)
        elif m := re.match(r"(#{1,6}) (.*)", line):
            flush()
            out.append(f"<h{len(m.group(1))}>{_inline(m.group(2))}</h{len(m.group(1))}>")
        elif line.startswith("- "):
            flush()
            out.append(f"<ul><li>{_inline(line[2:])}</li></ul>")
        elif not line.strip():
            flush()
        else:
            para.append(line)
    flush()
    return "\n".join(out)


def config_rows(folder: Path) -> list[tuple[str, str, int]]:
    """(config, split, rows) of every shard under data/, from the Parquet footers."""
    import pyarrow.parquet as pq

    counts: dict[tuple[str, str], int] = {}
    for shard in sorted(folder.glob("data/*/*.parquet")):
        key = (shard.parent.name, shard.name.split("-", 1)[0])
        counts[key] = counts.get(key, 0) + pq.ParquetFile(shard).metadata.num_rows
    return [(c, s, n) for (c, s), n in sorted(counts.items())]


def dataset_page(folder: str | Path) -> str:
    """The page (self-contained HTML) of a published folder."""
    folder = Path(folder)
    card = (folder / "README.md").read_text(encoding="utf-8")
    body = card.split("---", 2)[2] if card.startswith("---") and card.count("---") >= 2 else card
    header = card[: len(card) - len(body)]
    rows = "".join(
        f"<tr><td><code>{html_text(c)}</code></td><td>{html_text(s)}</td><td>{n:,}</td></tr>"
        for c, s, n in config_rows(folder)
    )
    lewidi = sorted((folder / "lewidi").glob("*.json")) if (folder / "lewidi").is_dir() else []
    files = "".join(
        f"<li><code>lewidi/{html_text(p.name)}</code> ({p.stat().st_size:,} bytes, "
        f"{len(json.loads(p.read_text(encoding='utf-8'))):,} items)</li>"
        for p in lewidi
    )
    croissant = (folder / "croissant.json").read_text(encoding="utf-8") if (folder / "croissant.json").exists() else ""
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html_text(folder.name)}</title>"
        f"<style>{STYLE}</style></head><body>"
        f"<p>The published dataset <code>{html_text(recorded_path(str(folder)))}</code>, as a reader downloads it.</p>"
        "<h2>Configs</h2><table><tr><th>config</th><th>split</th><th>rows</th></tr>" + rows + "</table>"
        "<h2>The card (README.md)</h2><pre>"
        + html_text(header.strip())
        + "</pre>"
        + markdown_html(body)
        + "<h2>croissant.json</h2><pre>"
        + html_text(croissant)
        + "</pre>"
        "<h2>LeWiDi files</h2><ul>" + (files or "<li>none</li>") + "</ul></body></html>\n"
    )
