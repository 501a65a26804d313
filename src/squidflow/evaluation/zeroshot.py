"""A zero-shot verb baseline that needs no external model: CLIP scoring every frame against one prompt per label.

SQUID-E §5.2 evaluates three situation-recognition models (JSL, GSRTR, CoFormer) whose inference code lives in
their own repositories. So that Tables 2 and 8 have real rows without them, squidflow scores each frame against
prompts built from a label list — the 504 imSitu verbs at paper scale ("a photo of people parading.") — with an
open_clip model, and ranks the labels by softmax probability (CLIP's logit scale), writing the predictions format.
Weights come from open_clip's cache or download; offline it fails with the comparison stage's CLIP error.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from squidflow.contracts import schemas
from squidflow.contracts.paths import job_file
from squidflow.encoders.clip import load_clip

log = logging.getLogger(__name__)

CONFIG_KEY = "evaluation.zero_shot"


def prompts_for(labels: Sequence[str], template: str) -> list[str]:
    """One text prompt per label; the template holds `{label}` (imSitu verbs are written with spaces for `_`)."""
    if "{label}" not in template:
        raise ValueError(
            f"{CONFIG_KEY}.prompt = {template!r}: must contain {{label}}, e.g. 'a photo of people {{label}}.'"
        )
    return [template.format(label=str(lab).replace("_", " ")) for lab in labels]


def _image_batch(rows: list[dict], start: int, preprocess) -> list:
    """The frames of `rows` (rows `start` + 1, ... of frames.parquet), read and preprocessed for the model."""
    from PIL import Image

    batch = []
    for j, r in enumerate(rows):
        path = Path(job_file(r["image_path"]))
        if not path.exists():
            raise FileNotFoundError(
                f"{CONFIG_KEY}: frame image {path} (frames.parquet row {start + j + 1}) not "
                "found; rerun the frames stage (results/dataset/frames.parquet)"
            )
        with Image.open(path) as im:
            batch.append(preprocess(im.convert("RGB")))
    return batch


def _predictions(rows: list[dict], labels: list[str], top_p: list, top_i: list, ranks: int) -> pl.DataFrame:
    """The `ranks` most probable labels of each frame (batches of probabilities and label indices) as
    schemas.PREDICTIONS rows."""
    n = len(rows)
    p = np.concatenate(top_p) if top_p else np.zeros((0, ranks))
    i = np.concatenate(top_i) if top_i else np.zeros((0, ranks), dtype=int)
    return pl.DataFrame(
        {
            "video_id": np.repeat(np.asarray([r["video_id"] for r in rows], dtype=object), ranks),
            "frame_index": np.repeat(np.asarray([r["frame_index"] for r in rows], dtype=np.int64), ranks),
            "image": [None] * (n * ranks),
            "rank": np.tile(np.arange(1, ranks + 1), n),
            "label": np.asarray(labels, dtype=object)[i.ravel()] if n else np.asarray([], dtype=object),
            "score": p.ravel().astype(float),
        },
        schema=schemas.PREDICTIONS.columns,
    )


def zero_shot_predictions(
    frames: pl.DataFrame,
    labels: Sequence[str],
    *,
    model_name: str,
    pretrained: str | None,
    prompt: str = "a photo of people {label}.",
    cache_dir: str | None = None,
    batch_size: int = 64,
    ranks: int = 10,
    device: str = "cpu",
) -> pl.DataFrame:
    """frames (video_id, frame_index, image_path) -> the `ranks` most probable labels per frame (schemas.PREDICTIONS)."""
    import torch
    from tqdm import tqdm

    labels = list(dict.fromkeys(labels))
    if not labels:
        raise ValueError(
            f"{CONFIG_KEY}: the label list is empty; set evaluation.vocabulary to a label list (the imSitu verbs)"
        )
    ranks = min(ranks, len(labels))
    model, preprocess, tokenizer = load_clip(
        model_name,
        pretrained or None,
        cache_dir=cache_dir or None,
        device=device,
        config_key=CONFIG_KEY,
        alternative=f"set {CONFIG_KEY}.enabled: false",
    )
    texts = prompts_for(labels, prompt)
    rows = frames.select("video_id", "frame_index", "image_path").to_dicts()
    top_p, top_i = [], []
    with torch.no_grad():
        text_parts = []
        for start in range(0, len(texts), 256):
            text_parts.append(model.encode_text(tokenizer(texts[start : start + 256]).to(device)).float())
        text_feats = torch.nn.functional.normalize(torch.cat(text_parts), dim=1)
        scale = float(model.logit_scale.exp()) if hasattr(model, "logit_scale") else 100.0
        for start in tqdm(range(0, len(rows), batch_size), desc="zero-shot CLIP", mininterval=10):
            batch = _image_batch(rows[start : start + batch_size], start, preprocess)
            feats = torch.nn.functional.normalize(model.encode_image(torch.stack(batch).to(device)).float(), dim=1)
            probs = (scale * feats @ text_feats.T).softmax(dim=1)
            best_p, best_i = probs.topk(ranks, dim=1)
            top_p.append(best_p.cpu().numpy())
            top_i.append(best_i.cpu().numpy())
    log.info(
        "zero-shot CLIP %s (%s): %d frames against %d labels, top %d kept",
        model_name,
        pretrained,
        len(rows),
        len(labels),
        ranks,
    )
    return _predictions(rows, labels, top_p, top_i, ranks)
