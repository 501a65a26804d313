"""Featurization with the packaged EfficientNet-Lite0 (offline), the ResNet50 weights rule, and the on-device decoding
path (run here on the CPU; tests/e2e/test_gpu_paths.py runs it on a GPU)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import torch
from helpers.floats import assert_floats_close
from PIL import Image
from skimage import data

from squidflow.contracts import schemas
from squidflow.contracts.io import conform
from squidflow.encoders.pretrained import WeightsError, load_backbone, load_resnet50
from squidflow.frames.featurize import FeaturesConfig, embed_images, featurize_frames, load_image, pool

IMAGENET_CATS = range(281, 286)  # tabby, tiger cat, Persian, Siamese, Egyptian cat


@pytest.fixture(scope="module")
def lite0():
    torch.set_num_threads(1)
    return load_backbone("efficientnet_lite0")


def test_packaged_efficientnet_lite0_sees_a_cat_in_chelsea(lite0, tmp_path):
    path = tmp_path / "chelsea.jpg"
    Image.fromarray(data.chelsea()).save(path, quality=95)
    x = torch.from_numpy(load_image(str(path), 224)).permute(2, 0, 1)[None].float()
    x = (x / 255 - torch.tensor(lite0.mean).view(1, 3, 1, 1)) / torch.tensor(lite0.std).view(1, 3, 1, 1)
    with torch.inference_mode():
        probs = lite0.model(x).softmax(-1)[0]
    top5 = probs.topk(5).indices.tolist()
    assert top5[0] in IMAGENET_CATS, f"top-5 ImageNet classes {top5}"
    assert probs[list(IMAGENET_CATS)].sum() > 0.5


def test_features_are_avg_and_max_pools_concatenated(lite0, tmp_path):
    paths = []
    for i, img in enumerate((data.chelsea(), data.astronaut(), data.coffee())):
        p = tmp_path / f"{i}.jpg"
        Image.fromarray(img).save(p)
        paths.append(str(p))
    frames = pl.DataFrame(
        {
            "video_id": ["a", "a", "b"],
            "frame_index": [0, 5, 0],
            "pts_s": [0.0, 0.2, 0.0],
            "is_keyframe": [True, False, True],
            "image_path": paths,
        }
    )
    cfg = FeaturesConfig(batch_size=2)
    feats = featurize_frames(frames, cfg)
    conform(feats, schemas.FEATURES)
    x = feats["feature"].to_numpy()
    assert x.shape == (3, 2 * 1280) and x.dtype == np.float32
    avg, mx = x[:, :1280], x[:, 1280:]
    assert (mx >= avg - 1e-5).all()  # the max pool bounds the average pool channel by channel
    assert np.linalg.norm(x[0] - x[1]) > 1.0  # a cat and an astronaut differ
    # batching does not change the result
    single = featurize_frames(frames, FeaturesConfig(batch_size=1))["feature"].to_numpy()
    # float32 network outputs from other kernels (batch 1 against 2): rounding over sums as deep as a feature
    assert_floats_close(single, x, dtype=np.float32, terms=x.shape[1], scale=np.abs(x).max())
    only_avg = featurize_frames(frames[:1], FeaturesConfig(pooling=("avg",)))["feature"].to_numpy()
    assert_floats_close(only_avg[0], avg[0], dtype=np.float32, terms=x.shape[1], scale=np.abs(x).max())


def test_pool_rejects_unknown_pooling():
    with pytest.raises(ValueError, match="features.pooling"):
        pool(torch.zeros(1, 2, 3, 3), ["median"])


def test_resnet50_offline_without_cache_names_the_weights_file(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))  # an empty hub cache
    monkeypatch.setattr(torch.hub, "_hub_dir", None, raising=False)
    import urllib.request

    def offline(*args, **kwargs):
        raise OSError("network is unreachable")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    with pytest.raises(WeightsError) as err:
        load_resnet50("IMAGENET1K_V1")
    msg = str(err.value)
    assert "resnet50-0676ba61.pth" in msg and str(tmp_path) in msg and "efficientnet_lite0" in msg


def _cpu_features(paths: list[str], backbone, **kwargs) -> np.ndarray:
    return embed_images(paths, FeaturesConfig(batch_size=2), backbone=backbone, **kwargs)


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def test_on_device_decoding_path_matches_the_pil_path(lite0, tmp_path):
    """The GPU path's steps (decode, resize + centre crop, normalise on the device, batches made ahead) run here with
    device='cpu': the features agree with the PIL path's, in the same row order, JPEG and PNG alike."""
    paths = []
    for i, img in enumerate((data.chelsea(), data.astronaut(), data.coffee(), data.rocket())):
        p = tmp_path / f"{i}.jpg"
        Image.fromarray(img).save(p, quality=95)
        paths.append(str(p))
    png = tmp_path / "coffee.png"
    Image.fromarray(data.coffee()).save(png)
    paths.append(str(png))
    pil = _cpu_features(paths, lite0, decode="pil")
    stats: dict = {}
    device = _cpu_features(paths, lite0, decode="device", stats=stats)
    assert device.shape == pil.shape == (5, 2560)
    assert stats["images"] == 5 and stats["seconds"] > 0
    cos = _cosine(pil, device)
    assert cos.min() > 0.99, cos  # PIL's draft-mode JPEG shrink is the only difference
    others = _cosine(pil[[0, 1, 2, 3]], device[[1, 2, 3, 0]])
    assert others.max() < 0.9, others  # and every row is its own image's


def test_resize_center_crop_has_load_images_geometry(tmp_path):
    """Short side to `size`, centre crop, bilinear with antialiasing as PIL's: on a PNG (no draft mode) the device
    preprocessing equals load_image up to rounding."""
    from squidflow.frames.device_images import decode_images, read_encoded, resize_center_crop

    for name, img in (("wide", data.astronaut()[:300]), ("tall", data.astronaut()[:, :200])):
        path = tmp_path / f"{name}.png"
        Image.fromarray(img).save(path)
        ref = load_image(str(path), 96).astype(np.int16)
        got = resize_center_crop(decode_images([read_encoded(path)], "cpu"), 96)[0].permute(1, 2, 0).numpy()
        diff = np.abs(got.astype(np.int16) - ref)
        assert got.shape == ref.shape == (96, 96, 3)
        assert diff.max() <= 3 and diff.mean() < 0.5, (name, diff.max(), diff.mean())


def test_unreadable_image_names_its_file(tmp_path):
    from squidflow.frames.device_images import DeviceImageBatches

    empty = tmp_path / "empty.jpg"
    empty.write_bytes(b"")
    batches = DeviceImageBatches([str(empty)], size=32, batch_size=4, device="cpu", mean=(0.5,) * 3, std=(0.5,) * 3)
    with pytest.raises(ValueError, match="empty.jpg"):
        list(batches)
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"\xff\xd8\xff\xe0 not a jpeg")
    batches = DeviceImageBatches([str(broken)], size=32, batch_size=4, device="cpu", mean=(0.5,) * 3, std=(0.5,) * 3)
    with pytest.raises(ValueError, match="broken.jpg"):
        list(batches)
