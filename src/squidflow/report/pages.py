"""Annotation task pages made self-contained, so they open inside the report exactly as annotators see them.

The task pages in results/annotation/ point at frames beside them (`../dataset/images/...`), which is right for a
page opened from disk or served with the images, but inside the report (a zip, or a page moved elsewhere) those
links break. `self_contained` inlines every local image as a data: URI; MTurk placeholders of a template
(`${image_1_url}`) become a labelled grey tile, so the template shows its layout instead of broken images. Remote
images (http/https, the Sherlock corpus) are kept as links.
"""

from __future__ import annotations

import base64
import mimetypes
import re
from pathlib import Path

IMG_SRC = re.compile(r"""(<img\b[^>]*?\bsrc=)(["'])(.*?)\2""", re.IGNORECASE | re.DOTALL)
PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_]+)\}")


def placeholder_tile(name: str) -> str:
    """A grey 4:3 SVG tile naming the batch-CSV column MTurk fills in (data: URI)."""
    svg = (
        "<svg xmlns='http://www.w3.org/2000/svg' width='320' height='240' viewBox='0 0 320 240'>"
        "<rect width='320' height='240' fill='#dddddd'/><text x='160' y='115' font-family='sans-serif' "
        f"font-size='16' text-anchor='middle' fill='#555555'>${{{name}}}</text><text x='160' y='140' "
        "font-family='sans-serif' font-size='12' text-anchor='middle' fill='#555555'>filled in from the batch CSV"
        "</text></svg>"
    )
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


def data_uri(path: Path) -> str:
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode()


def self_contained(page: str, base_dir: str | Path) -> tuple[str, list[str]]:
    """`page` with each local <img src> (relative to `base_dir`) inlined and each ${placeholder} src replaced by a
    tile. Returns the new page and the sources that could not be read (left as they were)."""
    base_dir = Path(base_dir)
    missing: list[str] = []

    def replace(match: re.Match) -> str:
        head, quote, src = match.group(1), match.group(2), match.group(3)
        placeholder = PLACEHOLDER.fullmatch(src.strip())
        if placeholder:
            return f"{head}{quote}{placeholder_tile(placeholder.group(1))}{quote}"
        if re.match(r"^(data:|https?:|//)", src.strip(), re.IGNORECASE):
            return match.group(0)
        path = (base_dir / src.strip()).resolve()
        if not path.is_file():
            missing.append(src)
            return match.group(0)
        return f"{head}{quote}{data_uri(path)}{quote}"

    return IMG_SRC.sub(replace, page), missing
