"""A few comparison sets drawn as annotators see them (Sherlock (Hessel et al., 2022) §4.3 and Appendix E).

The Likert task shows an image with its highlighted region and a list of inferences to rate 1-3. Whether the sets are
any good — plausible for the region, yet different from each other — is judged by reading some. `sets_figure` draws
the most promising sets (set_rank 1 of each split first, as exported): the image with the region outlined and its
clue, and beside it the inferences in the order the greedy selection picked them (plausible yet diverse: not
sorted by plausibility) with the scorer's plausibility; inferences written for the same
image are marked, since they are the likely true statements among the hard negatives.
"""

from __future__ import annotations

import logging
import textwrap
from pathlib import Path

import numpy as np
import polars as pl

from squidflow.presentation import style

log = logging.getLogger(__name__)


def chosen_sets(sets: pl.DataFrame, n: int) -> list[str]:
    """The `n` query ids to draw: set_rank 1 of every split, then set_rank 2, …, splits in test, val, train order."""
    order = {"test": 0, "val": 1, "train": 2}
    queries = (
        sets.group_by("query_id", maintain_order=True)
        .agg(pl.col("split").first(), pl.col("set_rank").first())
        .with_columns(pl.col("split").replace_strict(order, default=3).alias("_split"))
        .sort(["set_rank", "_split", "query_id"])
    )
    return queries["query_id"].head(n).to_list()


def _load_image(source: str | None, cache_dir: str | Path | None, root: str | Path = "results"):
    """The image as an array: an http(s) URL fetched once into `cache_dir`, or a local file (a path or a file:// URL)
    under `root` (the run's results/: the frames corpus's images); None when it cannot be had or is refused. A
    Sherlock annotations file is data: a local path or file:// URL in it never reaches a file outside the run."""
    if not source:
        return None
    from urllib.parse import unquote, urlparse

    from PIL import Image

    from squidflow.contracts.paths import job_file
    from squidflow.fetch import fetch

    scheme = urlparse(source).scheme.lower()
    try:
        if scheme in ("http", "https"):
            if not cache_dir:
                return None
            path = fetch(source, cache_dir, retries=1, timeout_s=20)
        elif scheme in ("", "file"):
            local = Path(unquote(urlparse(source).path) if scheme == "file" else source)
            path = Path(job_file(local)).resolve()  # object storage: the job's local copy (squidflow.contracts.paths)
            base = Path(job_file(root)).resolve()
            if "\0" in source or path == base or not path.is_relative_to(base):
                log.warning("comparison image %r is outside %s: not drawn", source[:200], root)
                return None
        else:
            return None
        with Image.open(path) as image:
            return np.asarray(image.convert("RGB"))
    except (OSError, ValueError):
        return None


def sets_figure(
    sets: pl.DataFrame,
    corpus: pl.DataFrame,
    path: str | Path,
    *,
    n_sets: int = 3,
    cache_dir: str | Path | None = None,
    note: str = "",
    image_root: str | Path = "results",
) -> int:
    """Write `n_sets` comparison sets, one row each (image with region | ranked inferences); returns the panel count.
    Local images are drawn only from under `image_root` (the run's results/; see `_load_image`)."""
    queries = chosen_sets(sets, n_sets)
    info = corpus.select("instance_id", "image_id", "image", "width", "height", "bboxes", "clue")
    fig, axes = style.figure(
        max(len(queries), 1),
        2,
        width=style.PAGE_WIDTH_IN,
        height=max(2.4, 2.3 * len(queries)),
        gridspec_kw={"width_ratios": [2, 3]},
    )
    if not queries:
        axes[0][0].set_visible(False)
        axes[0][1].axis("off")
        axes[0][1].text(0.5, 0.5, "no comparison set was built", ha="center", va="center")
    image_of = dict(zip(info["instance_id"], info["image_id"], strict=True))
    for r, query in enumerate(queries):
        ax_img, ax_txt = axes[r]
        q = info.filter(pl.col("instance_id") == query)
        members = sets.filter(pl.col("query_id") == query).sort("rank")
        split, set_rank = members["split"][0], members["set_rank"][0]
        row = q.row(0, named=True) if q.height else {}
        _draw_image(ax_img, _load_image(row.get("image"), cache_dir, image_root), row)
        ax_img.set_title(f"{split} set {set_rank}: {query}", fontsize=style.FONT_SIZE)
        _draw_inferences(ax_txt, members, image_of, row.get("image_id"))
    fig.suptitle("Comparison sets as the annotators see them: the region (outlined) and the inferences to rate")
    style.note(fig, note)
    return style.save(
        fig,
        path,
        title="Comparison sets as annotators see them",
        description=f"{len(queries)} sets: {', '.join(queries)}",
    )


def _draw_image(ax, image: np.ndarray | None, row: dict) -> None:
    """The query's image with its region outlined (its boxes scaled to the image as loaded) and its clue below; a
    line saying so where the image is not available."""
    from matplotlib.patches import Rectangle

    if image is not None:
        ax.imshow(image)
        sx = image.shape[1] / float(row.get("width") or image.shape[1])
        sy = image.shape[0] / float(row.get("height") or image.shape[0])
        for box in row.get("bboxes") or []:
            ax.add_patch(
                Rectangle(
                    (box["left"] * sx, box["top"] * sy),
                    box["width"] * sx,
                    box["height"] * sy,
                    fill=False,
                    edgecolor=style.VERMILLION,
                    linewidth=2.5,
                )
            )
    else:
        ax.text(
            0.5,
            0.5,
            f"image not available\n{row.get('image', '')}",
            ha="center",
            va="center",
            fontsize=style.FONT_SIZE - 2,
            transform=ax.transAxes,
            wrap=True,
        )
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    ax.set_xlabel(textwrap.fill(f"clue: {row.get('clue') or '—'}", 50), fontsize=style.FONT_SIZE - 1)


def _draw_inferences(ax, members: pl.DataFrame, image_of: dict, image_id) -> None:
    """The set's inferences in the order picked, each with the scorer's plausibility; ★ where written for the image."""
    ax.axis("off")
    lines = []
    for m in members.iter_rows(named=True):
        same = image_of.get(m["candidate_id"]) == image_id
        mark = " ★" if same else ""
        text = textwrap.shorten(m["inference"] or "", 150, placeholder=" …")
        lines.append(
            textwrap.fill(f"{m['rank']:>2}. [{m['plausibility']:+.2f}]{mark} {text}", 78, subsequent_indent="      ")
        )
    ax.text(
        0.0,
        1.0,
        "\n".join(lines),
        ha="left",
        va="top",
        fontsize=style.FONT_SIZE - 1,
        transform=ax.transAxes,
        family="DejaVu Sans",
    )
    # `rank` is the order the greedy selection picked them in (plausibility traded against diversity), not an
    # order by plausibility: the title says so (issue 32)
    ax.set_title(
        "inferences to rate, in the order picked (plausible yet diverse); [scorer's plausibility]; "
        "★ written for this image",
        fontsize=style.FONT_SIZE - 1,
        loc="left",
    )
