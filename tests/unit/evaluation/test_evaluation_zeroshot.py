"""The zero-shot CLIP verb baseline: its real code path on a small randomly initialised open_clip model, and its
offline error."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from PIL import Image

from squidflow.contracts import io, schemas
from squidflow.encoders.clip import ClipWeightsUnavailable
from squidflow.evaluation.predictions import read_predictions
from squidflow.evaluation.zeroshot import prompts_for, zero_shot_predictions

open_clip = pytest.importorskip("open_clip")

TINY = {  # a real open_clip architecture, small enough to initialise in a fraction of a second
    "embed_dim": 32,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 64, "head_width": 32, "patch_size": 16},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}
VERBS = ["parading", "protesting", "marching", "celebrating", "cooking"]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("open_clip_cfg")
    (folder / "squidflow-tiny-test.json").write_text(json.dumps(TINY))
    open_clip.add_model_config(folder)
    return "squidflow-tiny-test"


@pytest.fixture
def frames(tmp_path: Path) -> pl.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for i, video in enumerate(["parade_01", "parade_01", "protest_02"]):
        path = tmp_path / "images" / video / f"{i * 10}.jpg"
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(rng.integers(0, 255, (48, 64, 3), dtype=np.uint8)).save(path)
        rows.append(
            {
                "image_id": f"{video}_{i * 10}",
                "video_id": video,
                "event": video.split("_")[0],
                "frame_index": i * 10,
                "pts_s": i / 10,
                "cluster": i,
                "distance": 0.0,
                "image_path": str(path),
                "split": "test",
            }
        )
    return io.conform(pl.DataFrame(rows), schemas.FRAMES)


def test_zero_shot_writes_a_valid_predictions_file(tiny_model, frames, tmp_path):
    preds = zero_shot_predictions(frames, VERBS, model_name=tiny_model, pretrained=None, batch_size=2, ranks=3)
    path = tmp_path / "zero_shot.parquet"
    io.write_parquet(preds, path, schemas.PREDICTIONS)
    back = read_predictions(path, cache_dir=tmp_path, known_images=frames.select("video_id", "frame_index"))
    assert len(back) == 3 * 3 and back["rank"].to_list() == [1, 2, 3] * 3
    assert set(back["label"]) <= set(VERBS)
    for _, image in back.group_by(["video_id", "frame_index"]):
        scores = image.sort("rank")["score"].to_numpy()
        assert np.all(np.diff(scores) <= 0) and np.all((scores > 0) & (scores < 1))
        assert image["label"].n_unique() == 3
    # all labels kept: the probabilities over the vocabulary sum to one
    full = zero_shot_predictions(frames.head(1), VERBS, model_name=tiny_model, pretrained=None, ranks=10)
    assert len(full) == len(VERBS) and full["score"].sum() == pytest.approx(1.0, abs=1e-5)


def test_prompts_need_the_label_placeholder():
    assert prompts_for(["riding_horse"], "a photo of people {label}.") == ["a photo of people riding horse."]
    with pytest.raises(ValueError, match=r"evaluation.zero_shot.prompt = 'a photo': must contain \{label\}"):
        prompts_for(VERBS, "a photo")


def test_offline_the_baseline_fails_like_the_comparison_scorer(frames, tmp_path):
    with pytest.raises(ClipWeightsUnavailable) as err:
        zero_shot_predictions(frames, VERBS, model_name="RN50", pretrained="openai", cache_dir=str(tmp_path / "clip"))
    msg = str(err.value)
    assert "evaluation.zero_shot" in msg and "RN50" in msg and "openai" in msg and str(tmp_path / "clip") in msg
    assert "enabled: false" in msg


def test_missing_frame_image_names_the_row(tiny_model, frames):
    broken = frames.with_columns(
        pl.when(pl.col("frame_index") == 10)
        .then(pl.lit("nope.jpg"))
        .otherwise(pl.col("image_path"))
        .alias("image_path")
    )
    with pytest.raises(FileNotFoundError, match=r"frame image nope.jpg \(frames.parquet row 2\)"):
        zero_shot_predictions(broken, VERBS, model_name=tiny_model, pretrained=None)
