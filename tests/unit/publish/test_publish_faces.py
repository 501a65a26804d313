"""Faces blurred where pixels are shared (issue 48, deliverable 3): frames holding faces from scikit-image's packaged
`lfw_subset` pasted into photographs are published with `publish.images: embed`; the published JPEGs are blurred
where the detector found faces, the run's own frames are not touched, and the images config, the card and Croissant
count the blurred regions."""

from __future__ import annotations

import io
import json

import numpy as np
import polars as pl
import pytest
from helpers.publish_run import settings, small_run
from PIL import Image
from skimage import data
from skimage.transform import resize

from squidflow.publish.dataset import publish
from squidflow.publish.faces import blur_requested, detect

FACE = 96  # pasted face side, pixels
AT = (90, 200)  # top, left


def photograph(k: int) -> np.ndarray:
    """A real photograph without a face (scikit-image's coffee and rocket), 360 x 540."""
    img = (data.coffee(), data.rocket())[k % 2]
    return (resize(img, (360, 540), anti_aliasing=True) * 255).astype(np.uint8)


def with_face(rgb: np.ndarray, face: int) -> np.ndarray:
    grey = (resize(data.lfw_subset()[face], (FACE, FACE)) * 255).astype(np.uint8)
    out = rgb.copy()
    out[AT[0] : AT[0] + FACE, AT[1] : AT[1] + FACE] = grey[..., None]
    return out


def sharpness(rgb: np.ndarray) -> float:
    """Variance of the Laplacian of the grey image (what blurring takes away)."""
    g = rgb.astype(float).mean(axis=2)
    lap = g[1:-1, 1:-1] * 4 - g[:-2, 1:-1] - g[2:, 1:-1] - g[1:-1, :-2] - g[1:-1, 2:]
    return float(lap.var())


def test_blur_is_on_by_default_for_embedded_pixels_except_the_demos():
    assert blur_requested(None, mode="embed", demo=False) and not blur_requested(None, mode="embed", demo=True)
    assert not blur_requested(True, mode="reference", demo=False) and not blur_requested(
        False, mode="embed", demo=False
    )
    assert blur_requested(True, mode="embed", demo=True)


@pytest.fixture(scope="module")
def blurred(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("faces")
    run = small_run(tmp / "run")
    originals = {}
    for k, (image_id, path) in enumerate(zip(run.frames["image_id"], run.frames["image_path"], strict=True)):
        rgb = photograph(k)
        if k < 2:  # two frames with a face, two without
            rgb = with_face(rgb, face=k)
        Image.fromarray(rgb).save(path, quality=92)
        originals[image_id] = open(path, "rb").read()  # noqa: SIM115 - read once, closed by the GC
    folder = tmp / "out" / "faces"
    publish(folder, run, settings(images="embed", blur_faces=True))
    return folder, run, originals


def published_images(folder) -> pl.DataFrame:
    return pl.concat([pl.read_parquet(p) for p in sorted((folder / "data" / "images").glob("*.parquet"))])


def test_published_jpegs_are_blurred_where_faces_were_found_and_counted(blurred):
    folder, run, originals = blurred
    images = published_images(folder)
    counts = dict(zip(images["image_id"], images["faces_blurred"], strict=True))
    with_faces = run.frames["image_id"].to_list()[:2]
    for image_id, cell in zip(images["image_id"], images["image"], strict=True):
        before = np.asarray(Image.open(io.BytesIO(originals[image_id])).convert("RGB"))
        after = np.asarray(Image.open(io.BytesIO(cell["bytes"])).convert("RGB"))
        boxes = detect(before)
        assert counts[image_id] == len(boxes)
        if image_id in with_faces:
            assert any(
                abs(t + h / 2 - (AT[0] + FACE / 2)) < FACE / 2 and abs(lf + w / 2 - (AT[1] + FACE / 2)) < FACE / 2
                for t, lf, h, w in boxes
            ), (image_id, boxes)
        if not boxes:
            assert cell["bytes"] == originals[image_id]  # no face: the JPEG is published as it was
            continue
        for t, lf, h, w in boxes:
            face_before, face_after = before[t : t + h, lf : lf + w], after[t : t + h, lf : lf + w]
            assert sharpness(face_after) < 0.2 * sharpness(face_before), image_id
        far = (slice(300, 360), slice(0, 120))  # away from every box: only JPEG's rounding
        assert np.abs(after[far].astype(int) - before[far].astype(int)).mean() < 3
    # the run's own frames (training, annotation) are untouched
    for image_id, path in zip(run.frames["image_id"], run.frames["image_path"], strict=True):
        assert open(path, "rb").read() == originals[image_id]  # noqa: SIM115


def test_the_card_and_croissant_say_how_many_regions_were_blurred(blurred):
    folder, _, _ = blurred
    images = published_images(folder)
    regions, with_regions = int(images["faces_blurred"].sum()), int((images["faces_blurred"] > 0).sum())
    assert regions >= 2 and with_regions >= 2
    said = f"Faces blurred in the published JPEGs: {regions:,} regions in {with_regions:,} of {images.height:,} images"
    assert said in (folder / "README.md").read_text(encoding="utf-8")
    meta = json.loads((folder / "croissant.json").read_text(encoding="utf-8"))
    pii = meta["rai:personalSensitiveInformation"]
    assert any(said in line for line in (pii if isinstance(pii, list) else [pii]))
    fields = {f["name"] for rs in meta["recordSet"] if rs["name"] == "images" for f in rs["field"]}
    assert {"faces_blurred", "license", "uploader", "upload_date", "retrieved_at"} <= fields
