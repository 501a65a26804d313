"""A bucket source without a server (squidflow.videos.storage): the layout rules a bucket shares with a local folder,
the error words its failures are classified by, the config check of an s3:// root, and what is published of such a
video (its `<event>/<file>`, never the bucket). The listing and reading against a real S3 API:
tests/e2e/test_storage_source.py."""

from __future__ import annotations

import polars as pl
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from squidflow.config.validation import ConfigError, load_config
from squidflow.publish.tables import _video_source
from squidflow.videos.failures import classify
from squidflow.videos.storage import StoredObject, _words, endpoint_hidden, is_storage_url, tree_layout


def obj(relative: str) -> StoredObject:
    return StoredObject(relative, f"s3://b/videos/{relative}", 10, 0.0)


def test_a_bucket_is_laid_out_like_a_local_folder():
    objects = [obj(k) for k in ("readme.txt", "wedding/a.mp4", "wedding/B.MKV", "wedding/notes.txt",
                                "wedding/extra/c.mp4", "wedding/extra/d.mp4", "parade/e.webm")]  # fmt: skip
    videos, skipped = tree_layout(objects, {"mp4", "mkv", "webm"})
    assert [(e, o.relative) for e, o in videos] == [
        ("wedding", "wedding/a.mp4"), ("wedding", "wedding/B.MKV"), ("parade", "parade/e.webm")]  # fmt: skip
    assert skipped == [
        ("s3://b/videos/readme.txt", "not in an event folder (expected <root>/<event>/<video>)"),
        ("s3://b/videos/wedding/notes.txt", "not a video (extensions: mkv, mp4, webm)"),
        ("s3://b/videos/wedding/extra", "a folder inside an event folder (not searched)"),  # named once
    ]


def test_storage_urls_and_error_words():
    assert is_storage_url("s3://bucket/prefix") and is_storage_url("s3://bucket")
    assert not is_storage_url("lib/videos") and not is_storage_url("https://x/y.mp4") and not is_storage_url(None)
    missing = ClientError({"Error": {"Code": "404", "Message": "Not Found"},
                           "ResponseMetadata": {"HTTPStatusCode": 404}}, "HeadObject")  # fmt: skip
    slow = ClientError({"Error": {"Code": "SlowDown", "Message": "Reduce your request rate"},
                        "ResponseMetadata": {"HTTPStatusCode": 503}}, "GetObject")  # fmt: skip
    assert classify(_words(missing)) == "http_4xx"
    assert classify(_words(slow)) == "http_5xx"
    down = EndpointConnectionError(endpoint_url="http://10.1.2.3:9000/b/k")
    assert classify(_words(down)) == "network"

    class Provider:
        class settings:  # noqa: N801 - the plugin's attribute name
            endpoint_url = "http://10.1.2.3:9000"

    hidden = endpoint_hidden(_words(down), Provider)
    assert "10.1.2.3" not in hidden and "<endpoint>" in hidden


def test_an_s3_root_passes_the_config_check_and_another_scheme_does_not(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text("stages: [videos, frames]\nsources: [{type: local, root: 's3://my-videos/2026/clips'}]\n")
    cfg = load_config(good, base_dir=tmp_path)  # no local folder of that name: not looked for
    assert cfg["sources"][0]["root"] == "s3://my-videos/2026/clips"
    for root in ("gs://my-videos/clips", "s3://My_Bucket/clips"):
        bad = tmp_path / "bad.yaml"
        bad.write_text(f"stages: [videos, frames]\nsources: [{{type: local, root: '{root}'}}]\n")
        with pytest.raises(ConfigError, match=r"sources\[0\]\.root"):
            load_config(bad, base_dir=tmp_path)
    missing = tmp_path / "missing.yaml"
    missing.write_text("stages: [videos, frames]\nsources: [{type: local, root: videos}]\n")
    with pytest.raises(ConfigError, match="no such folder"):  # a local root is still checked on disk
        load_config(missing, base_dir=tmp_path)


def test_a_bucket_video_is_published_as_event_and_file_not_as_its_bucket():
    videos = pl.DataFrame(
        {
            "video_id": ["cake", "home"],
            "source": ["storage", "local"],
            "url": ["s3://private-bucket/clips/birthday_party/cake.mp4", None],
            "webpage_url": [None, None],
            "path": ["results/videos/storage/cake.mp4", "/home/me/videos/wedding/home.mp4"],
            "license": ["cc-by-4.0", None],
        }
    )
    published = dict(_video_source(videos).select("video_id", "source").iter_rows())
    assert published == {"cake": "birthday_party/cake.mp4", "home": "wedding/home.mp4"}
