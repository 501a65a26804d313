"""The GPU paths on a real device: featurization (nvJPEG decoding, GPU preprocessing, AMP, channels_last) against the
CPU path, and the featurize and train rules run through Snakemake with `--resources gpu=1` on the slot the
allocator hands out. Every test here is skipped, with the reason, on a machine without a CUDA device."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import torch
import yaml
from helpers.runs import SNAKEMAKE
from PIL import Image
from skimage import data

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet
from squidflow.encoders.pretrained import load_backbone
from squidflow.frames.featurize import FeaturesConfig, embed_images

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        not torch.cuda.is_available(),
        reason="no CUDA device on this machine (torch.cuda.is_available() "
        "is False): the GPU paths are tested where one is",
    ),
]

ROOT = Path(__file__).resolve().parents[2]
TRAIN_RUN = "results/runs/classification/SD/GA/seed0"


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> list[str]:
    d = tmp_path_factory.mktemp("images")
    paths = []
    for i, img in enumerate((data.chelsea(), data.astronaut(), data.coffee(), data.rocket(), data.cat())):
        p = d / f"{i}.jpg"
        Image.fromarray(img).save(p, quality=95)
        paths.append(str(p))
    return paths * 7  # 35 images: several batches and a partial last one


def test_gpu_featurization_matches_the_cpu_path(images):
    """nvJPEG + GPU resize + float16 autocast against PIL + float32 on the CPU: the same features within AMP's and
    the decoders' rounding, row for row; the GPU path keeps the model busy."""
    backbone = load_backbone("efficientnet_lite0")
    cfg = FeaturesConfig(batch_size=8, num_workers=2)
    cpu = embed_images(images, cfg, backbone=backbone)
    stats: dict = {}
    gpu = embed_images(images, cfg, device="cuda", backbone=backbone, stats=stats)
    backbone.model.to("cpu")
    assert gpu.shape == cpu.shape and gpu.dtype == np.float32
    cos = _cosine(cpu, gpu)
    assert cos.min() > 0.99, cos
    assert np.abs(gpu - cpu).max() / np.abs(cpu).max() < 0.1
    assert 0 < stats["busy_share"] <= 1.0 and stats["images"] == len(images)
    # AMP alone (same PIL decoding, model on the GPU in float16) is closer still
    amp_only = embed_images(images, cfg, device="cuda", backbone=backbone, decode="pil")
    backbone.model.to("cpu")
    assert _cosine(cpu, amp_only).min() > 0.999


def test_device_preprocessing_on_gpu_equals_cpu(images):
    from squidflow.frames.device_images import decode_images, read_encoded, resize_center_crop

    encoded = [read_encoded(p) for p in images[:5]]
    cpu = resize_center_crop(decode_images(encoded, "cpu"), 224)
    gpu = resize_center_crop(decode_images(encoded, "cuda"), 224).cpu()
    diff = (gpu - cpu).abs()
    assert diff.mean() < 1.0 and diff.max() <= 16, (float(diff.mean()), float(diff.max()))  # nvJPEG vs libjpeg IDCT


@pytest.mark.slow
def test_featurize_and_train_rules_run_on_the_gpu_slot(tmp_path):
    """`--resources gpu=1`: each GPU rule takes device 0 through the slot allocator and runs on cuda:0; its features
    equal the CPU path's within tolerance."""
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(
        yaml.safe_dump(
            {
                "demo": {
                    "events": ["birthday_party", "wedding", "parade", "protest"],
                    "videos_per_event": 2,
                    "seconds": 3,
                    "width": 160,
                    "height": 120,
                    "fps": 15,
                    "seed": 2,
                },
                "frames": {"n": 12, "shards": 1},
                "gpu": {"lock_dir": str(tmp_path / "slots")},
            }
        )
    )
    work = tmp_path / "work"
    features = "results/features/efficientnet_lite0.parquet"
    env = {k: v for k, v in os.environ.items() if k not in ("SQUIDFLOW_GPU_DEVICES", "CUDA_VISIBLE_DEVICES")}
    res = subprocess.run(
        [
            SNAKEMAKE,
            features,
            f"{TRAIN_RUN}/metrics.json",
            "--directory",
            str(work),
            "--configfile",
            str(ROOT / "config" / "config.yaml"),
            str(cfg),
            "--cores",
            "4",
            "--resources",
            "gpu=1",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-4000:]
    logs = [
        *sorted((work / "logs" / "featurize").glob("*.log")),
        work / "logs" / "train" / (TRAIN_RUN.split("runs/")[1] + ".log"),
    ]
    for log in logs:
        text = log.read_text()
        assert "GPU slot: device 0" in text and "-> cuda:0" in text, f"{log}: {text[-2000:]}"
    feats = read_parquet(work / features, schemas.FEATURES)
    frames = read_parquet(work / "results" / "frames" / "shard0.parquet", schemas.EXTRACTED_FRAMES)
    joined = frames.join(feats, on=["video_id", "frame_index"])
    cpu = embed_images([str(work / p) for p in joined["image_path"]], FeaturesConfig())
    gpu = joined["feature"].to_numpy()
    assert _cosine(cpu, gpu).min() > 0.99
    metrics = json.loads((work / TRAIN_RUN / "metrics.json").read_text())
    assert metrics, "the GPU training run wrote no metrics"
    predictions = pl.read_parquet(work / TRAIN_RUN / "predictions.parquet")
    assert predictions.height > 0
