"""Annotation task pages made self-contained, so they open inside the report exactly as annotators see them.

The task pages in results/annotation/ point at frames beside them (`../dataset/images/...`), which is right for a
page opened from disk or served with the images, but inside the report (a zip, or a page moved elsewhere) those
links break. `self_contained` inlines every local image as a data: URI; MTurk placeholders of a template
(`${image_1_url}`) become a labelled grey tile, so the template shows its layout instead of broken images. Remote
images (http/https, the Sherlock corpus) are kept as links. Only files under the run's `root` (results/) are
inlined: a page's src comes from data (a Sherlock annotation's `inputs.image.url`), and an absolute path or a `../..`
there must never copy a private file into the report; such an image becomes a tile saying so, and is named in the
rule's log.
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


REFUSED_TILE = (
    "data:image/svg+xml;base64,"
    + base64.b64encode(
        b"<svg xmlns='http://www.w3.org/2000/svg' width='320' height='240'><rect width='320' height='240' "
        b"fill='#eeeeee'/><text x='160' y='125' font-family='sans-serif' font-size='14' text-anchor='middle' "
        b"fill='#555555'>image outside results/: not inlined</text></svg>"
    ).decode()
)


def data_uri(path: Path) -> str:
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode()


def self_contained(page: str, base_dir: str | Path, root: str | Path | None = None) -> tuple[str, list[str], list[str]]:
    """`page` with each local <img src> (relative to `base_dir`) inlined and each ${placeholder} src replaced by a
    tile. Only files under `root` (default: `base_dir`'s parent, the results folder of a page in results/<stage>/)
    are inlined. Returns the new page, the sources that could not be read (left as they were) and the sources
    outside `root` (replaced by a tile that says so)."""
    base_dir = Path(base_dir)
    root = Path(root if root is not None else base_dir.parent).resolve()
    missing: list[str] = []
    refused: list[str] = []

    def replace(match: re.Match) -> str:
        head, quote, src = match.group(1), match.group(2), match.group(3)
        placeholder = PLACEHOLDER.fullmatch(src.strip())
        if placeholder:
            return f"{head}{quote}{placeholder_tile(placeholder.group(1))}{quote}"
        if re.match(r"^(data:|https?:|//)", src.strip(), re.IGNORECASE):
            return match.group(0)
        local = re.sub(r"^file://", "", src.strip(), flags=re.IGNORECASE)
        path = (base_dir / local).resolve() if "\0" not in local else root
        if path == root or not path.is_relative_to(root):
            refused.append(src)
            return f"{head}{quote}{REFUSED_TILE}{quote}"
        try:
            return f"{head}{quote}{data_uri(path)}{quote}" if path.is_file() else _missing(match, src)
        except OSError:  # a name too long, a file unreadable
            return _missing(match, src)

    def _missing(match: re.Match, src: str) -> str:
        missing.append(src)
        return match.group(0)

    return IMG_SRC.sub(replace, page), missing, refused
