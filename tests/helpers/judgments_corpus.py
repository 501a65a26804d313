"""A small demo-like corpus for the judgments tests and benchmarks/triage_sweep.py: frames.parquet, images and
truth.parquet as the demo and frames stages would leave them, and the HITs of both variants over it as CSV."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
from PIL import Image

from squidflow.contracts import schemas
from squidflow.contracts.io import write_csv, write_parquet
from squidflow.judgments.annotation import make_hits

DEMO_EVENTS = ["birthday_party", "wedding", "parade", "protest"]
PARTNER = {"birthday_party": "wedding", "wedding": "birthday_party", "parade": "protest", "protest": "parade"}


def make_corpus(root: Path, *, videos_per_event: int = 3, frames_per_video: int = 6, seed: int = 0) -> None:
    """Frames of synthetic videos with per-frame truth, as the demo and frames stages would leave them.

    Conditions and evidence mimic the demo's design: clean frames show their event, crossfades mix in the similar
    event, occlusion/blur/dark weaken the evidence, black frames show nothing.
    """
    rng = np.random.default_rng(seed)
    frames, truth = [], []
    conditions = ["clean", "crossfade", "occlusion", "blur", "dark", "black", "cut"]
    for e_idx, event in enumerate(DEMO_EVENTS):
        for v in range(videos_per_event):
            vid = f"{event}_{v:02d}"
            for k in range(frames_per_video):
                fi = 25 * k + int(rng.integers(0, 25))
                cond = str(rng.choice(conditions, p=[0.4, 0.15, 0.1, 0.1, 0.1, 0.05, 0.1]))
                amount = float(rng.uniform(0.1, 0.9))
                other = (
                    PARTNER[event] if rng.random() < 0.6 else str(rng.choice([e for e in DEMO_EVENTS if e != event]))
                )
                ev = {  # the demo's evidence model (squidflow.demo.videos): what is visible of each event
                    "clean": {event: 1.0},
                    "crossfade": {event: 1 - amount, other: amount},
                    "occlusion": {event: 1 - amount},
                    "blur": {event: 1 - 0.6 * amount},
                    "dark": {event: amount},
                    "black": {},
                    "cut": {other: 1.0},
                }[cond]
                ev = {e: ev.get(e, 0.0) for e in DEMO_EVENTS}
                rel = f"results/dataset/images/{vid}/{fi}.jpg"
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                if cond == "black":
                    pixels = np.zeros((24, 32, 3), np.uint8)
                else:
                    pixels = np.full((24, 32, 3), 50 * e_idx, np.uint8)
                    pixels[:, :, k % 3] += np.linspace(0, 120, 32, dtype=np.uint8)[None, :]  # a gradient: not blank
                Image.fromarray(pixels).save(root / rel, quality=90)
                frames.append(
                    {
                        "image_id": f"{vid}_{fi}",
                        "video_id": vid,
                        "event": event,
                        "frame_index": fi,
                        "pts_s": fi / 25,
                        "cluster": k,
                        "distance": 0.0,
                        "image_path": rel,
                        "split": "test",
                    }
                )
                truth.append(
                    {
                        "video_id": vid,
                        "event": event,
                        "frame_index": fi,
                        "pts_s": fi / 25,
                        "condition": cond,
                        "evidence": [{"event": e, "weight": w} for e, w in ev.items()],
                    }
                )
    write_parquet(pl.DataFrame(frames), root / "results/dataset/frames.parquet", schemas.FRAMES)
    write_parquet(pl.DataFrame(truth), root / "results/videos/demo/truth.parquet", schemas.TRUTH)


def hits_as_csv(frames: pl.DataFrame, tmp_path: Path) -> dict[str, pl.DataFrame]:
    """The HITs of variants A and B over `frames`, written as CSV and read back as text, as a batch file is."""
    out = {}
    for v in ("A", "B"):
        write_csv(make_hits(frames, v, pairs=PARTNER, seed=1), tmp_path / f"hits_{v}.csv")
        out[v] = pl.read_csv(tmp_path / f"hits_{v}.csv", infer_schema=False)
    return out
