"""What a published dataset folder holds, read back for the journeys' checks: a config's rows, Krippendorff's α
recomputed from them, and the α the card states."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl


def published(folder: Path, config: str) -> pl.DataFrame:
    return pl.concat([pl.read_parquet(p) for p in sorted((folder / "data" / config).glob("*.parquet"))])


def alpha_from_rows(rows: pl.DataFrame) -> float:
    """Krippendorff's interval α by the `krippendorff` package: a unit per image, prompt and task page."""
    import krippendorff

    units = {k: i for i, k in enumerate(rows.select("image_id", "prompt", "hit").unique().sort(pl.all()).iter_rows())}
    positions = sorted(rows["position"].unique().to_list())
    data = np.full((len(positions), len(units)), np.nan)
    for r in rows.iter_rows(named=True):
        data[positions.index(r["position"]), units[(r["image_id"], r["prompt"], r["hit"])]] = r["rating"]
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="interval"))


def card_alpha(card: str) -> dict[str, float]:
    out = {}
    for line in card.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] in ("A", "B", "A+B") and cells[2][:1] in "-0123456789":
            out[cells[0]] = float(cells[2].split()[0])
    return out
