"""RAI fields that say something (issue 48, deliverable 5): `publish check` fails a folder whose Croissant RAI fields
are missing or empty, or say "not collected" where the folder itself shows the answer (faces blurred, the videos'
licences, the annotation platform and pay), naming the field."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from helpers.publish_run import settings, small_run
from PIL import Image
from skimage import data
from skimage.transform import resize

from squidflow.publish.check import check_folder, check_rai_known
from squidflow.publish.dataset import publish


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rai")
    run = small_run(tmp / "run")
    face = (resize(data.lfw_subset()[0], (96, 96)) * 255).astype(np.uint8)
    for path in run.frames["image_path"].to_list():  # a photograph with a face, so blurring has something to count
        rgb = (resize(data.coffee(), (360, 540), anti_aliasing=True) * 255).astype(np.uint8)
        rgb[90:186, 200:296] = face[..., None]
        Image.fromarray(rgb).save(path, quality=92)
    folder = tmp / "out" / "rai"
    publish(folder, run, settings(images="embed", blur_faces=True, pay="US$0.10 per task of six images"))
    return folder


def edited(folder, tmp_path, **fields):
    copy = tmp_path / folder.name
    shutil.copytree(folder, copy)
    meta = json.loads((copy / "croissant.json").read_text(encoding="utf-8"))
    for key, value in fields.items():
        key = key.replace("__", ":")
        if value is None:
            meta.pop(key, None)
        else:
            meta[key] = value
    (copy / "croissant.json").write_text(json.dumps(meta), encoding="utf-8")
    return copy


def test_what_squidflow_publishes_passes(published):
    assert check_rai_known(published, json.loads((published / "croissant.json").read_text())) == []
    assert check_folder(published, load=False) == []


@pytest.mark.parametrize(("fields", "needle"), [
    ({"rai__personalSensitiveInformation": ["not collected"]},
     "rai:personalSensitiveInformation does not say that faces were blurred, though the images config's faces_blurred counts"),
    ({"rai__personalSensitiveInformation": ["People appear in the videos."]},
     "rai:personalSensitiveInformation does not say that faces were blurred"),
    ({"rai__personalSensitiveInformation": None}, "rai:personalSensitiveInformation is empty"),
    ({"license": "unknown"}, "license is empty or says nothing, though the images config's license column"),
    ({"rai__dataAnnotationPlatform": ["Not collected"]}, "rai:annotationPlatform says 'Not collected'"),
    ({"rai__dataAnnotationProtocol": ["Each image was rated 0-100. Pay: not collected."]},
     "rai:annotationProtocol does not say what annotators were paid, though the card does ('US$0.10 per task"),
    ({"rai__dataReleaseMaintenancePlan": ""}, "rai:dataReleaseMaintenancePlan is empty"),
])  # fmt: skip
def test_a_field_that_says_nothing_where_the_folder_knows_fails_naming_it(published, tmp_path, fields, needle):
    folder = edited(published, tmp_path, **fields)
    problems = check_folder(folder, load=False)
    assert any(needle in p for p in problems), problems
