"""What a figure saved by `squidflow.presentation.style.save` says about itself, read back from its PNG text chunks: the reader
the tests use to check a figure's size, panels, title and description (the library writes them, never reads them)."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from squidflow.presentation.style import DESCRIPTION_KEY, PANELS_KEY, TITLE_KEY


def figure_facts(path: str | Path) -> dict:
    """Width and height in pixels, panel count, title, description."""
    with Image.open(path) as image:
        image.load()
        info = dict(getattr(image, "text", {}) or image.info)
        width, height = image.size
    panels_text = info.get(PANELS_KEY)
    return {
        "width": width,
        "height": height,
        "panels": int(panels_text) if panels_text is not None else None,
        "title": info.get(TITLE_KEY, ""),
        "description": info.get(DESCRIPTION_KEY, ""),
    }
