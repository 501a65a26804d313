"""Videos from a bucket (issue 49, deliverable 4): `sources: [{type: local, root: s3://bucket/prefix}]` against a real
S3 API on 127.0.0.1 (moto in server mode, tests/helpers/moto_s3.py; not a mock of boto3). The bucket is listed and
its objects read through Snakemake's S3 storage plugin (squidflow.videos.storage), the endpoint and the throw-away
credentials only in the environment.

The run: three clips made by ffmpeg in two event folders of the bucket, beside a file at the root and a text file in
an event folder (both named as skipped), through the videos and frames stages: every acquired video holds the
uploaded bytes, the journal records each one, the frames are extracted, and neither the endpoint nor a key is in any
file the run wrote. The same run on the S3 server without a shared filesystem (`--default-storage-provider s3
--shared-fs-usage none`, issue 49 deliverable 1): the downloaded videos reach the bucket in the download jobs'
declared shard folders, frame extraction reads them from there, the frames equal the local run's, and the working
directory keeps nothing but Snakemake's own state. The small in-process tests: a missing object is `unavailable`
with reason `http_4xx`, a bucket that is not there stops the listing naming the root, neither message naming the
endpoint."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import polars as pl
import pytest
import yaml
from helpers.moto_s3 import s3_server
from helpers.runs import SNAKEMAKE, cores
from helpers.storage_run import RERUN_TRIGGERS, left_in_workdir
from helpers.videotools import make_clip

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet
from squidflow.errors import InputError
from squidflow.videos.download import DownloadOptions, download
from squidflow.videos.sources import list_candidates

ROOT = Path(__file__).resolve().parents[2]
BUCKET = "squidflow-videos"
RUN_BUCKET = "squidflow-run"  # the run's files on storage (--default-storage-prefix s3://squidflow-run/run)
CLIPS = {"clips/birthday_party/cake.mp4": 0, "clips/birthday_party/candles.mp4": 90, "clips/wedding/vows.mp4": 200}
OTHERS = {"clips/readme.txt": b"not in an event folder", "clips/wedding/notes.txt": b"not a video"}


@pytest.fixture(scope="module")
def s3():
    with s3_server() as server:
        yield server


@pytest.fixture
def environment(s3, monkeypatch):
    for key, value in s3.env.items():
        monkeypatch.setenv(key, value)
    return s3


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("bucket_clips")
    return {key: make_clip(d / key, seconds=2, hue=hue) for key, hue in CLIPS.items()}


def test_a_missing_object_is_an_unavailable_video_and_a_missing_bucket_names_the_root(environment, clips, tmp_path):
    s3 = environment
    s3.upload("present", {"clips/x/one.mp4": next(iter(clips.values()))})
    res = download("s3://present/clips/x/gone.mp4", tmp_path / "gone.mp4", DownloadOptions())
    assert (res.status, res.reason) == ("unavailable", "http_4xx"), res
    assert "404" in res.error and s3.endpoint.split("//")[1] not in res.error
    assert not list(tmp_path.iterdir())  # no partial file left

    ok = download("s3://present/clips/x/one.mp4", tmp_path / "one.mp4", DownloadOptions())
    assert ok.status == "ok" and (tmp_path / "one.mp4").read_bytes() == next(iter(clips.values())).read_bytes()

    with pytest.raises(InputError) as err:
        list_candidates([{"type": "local", "root": "s3://no-such-bucket/clips"}])
    assert "s3://no-such-bucket/clips/" in str(err.value) and s3.endpoint.split("//")[1] not in str(err.value)


def bucket_config(work: Path) -> Path:
    cfg = {
        "stages": ["videos", "frames"],
        "sources": [{"type": "local", "root": f"s3://{BUCKET}/clips", "license": "cc-by-4.0"}],
        "download": {"shards": 2},
    }
    (work / "run.yaml").write_text(yaml.safe_dump(cfg))
    return work / "run.yaml"


@pytest.fixture(scope="module")
def bucket(s3, clips):
    """The source bucket: the clips and two files that are no videos."""
    s3.upload(BUCKET, {**clips})
    c = s3.client()
    for key, data in OTHERS.items():
        c.put_object(Bucket=BUCKET, Key=key, Body=data)
    return s3


@pytest.fixture(scope="module")
def local_run(bucket, tmp_path_factory) -> Path:
    """The videos and frames stages from the bucket, results on the local disk."""
    work = tmp_path_factory.mktemp("local") / "work"
    work.mkdir()
    run_yaml = bucket_config(work)
    env = {**os.environ, **bucket.env}
    res = subprocess.run(
        [SNAKEMAKE, "--directory", str(work), "--configfile", str(ROOT / "config/config.yaml"), str(run_yaml),
         "--cores", str(cores())],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1200, env=env,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout[-6000:]
    return work


@pytest.mark.slow  # runs Snakemake jobs
def test_videos_listed_and_read_from_a_bucket_through_the_storage_plugin(s3, clips, local_run):
    work = local_run
    env = {**os.environ, **s3.env}

    videos = read_parquet(work / "results/videos/videos.parquet", schemas.VIDEOS).sort("video_id")
    assert videos["video_id"].to_list() == ["cake", "candles", "vows"]
    assert set(videos["status"]) == {"ok"} and set(videos["source"]) == {"storage"}
    assert dict(zip(videos["video_id"], videos["event"], strict=True)) == {
        "cake": "birthday_party", "candles": "birthday_party", "vows": "wedding"}  # fmt: skip
    assert videos["url"].to_list() == [f"s3://{BUCKET}/{k}" for k in sorted(CLIPS)]
    assert set(videos["license"]) == {"cc-by-4.0"}
    paths = dict(zip(videos["video_id"], videos["path"], strict=True))
    for key, local in clips.items():  # the acquired files are the uploaded bytes, in the download jobs' shard folders
        vid = Path(key).stem
        assert paths[vid].startswith("results/videos/downloads/shard") and paths[vid].endswith(f".g0/{vid}.mp4")
        assert (work / paths[vid]).read_bytes() == local.read_bytes(), key
    for folder in (work / "results/videos/downloads").iterdir():  # never empty: a marker file in each
        assert (folder / ".squidflow-videos").is_file(), folder

    journal = {}  # every acquisition journal line (squidflow.videos.download_shards), wherever the shard jobs keep them
    for p in sorted((work / "results/videos").rglob("*.jsonl")):
        if "journal" in str(p.relative_to(work)):
            for line in p.read_text().splitlines():
                rec = json.loads(line)
                journal[rec["video_id"]] = rec
    assert {v: r["status"] for v, r in journal.items()} == {"cake": "ok", "candles": "ok", "vows": "ok"}
    assert all(r["attempts"] == 1 and r["n_frames"] > 0 for r in journal.values())

    notes = (work / "results/videos/candidates_notes.txt").read_text()
    assert f"s3://{BUCKET}/clips/readme.txt: not in an event folder" in notes
    assert f"s3://{BUCKET}/clips/wedding/notes.txt: not a video" in notes

    checked = read_parquet(work / "results/videos/videos_checked.parquet", schemas.VIDEOS)
    assert set(checked["status"]) == {"ok"}
    frames = pl.read_parquet(work / "results/dataset/frames.parquet")
    assert set(frames["video_id"]) == {"cake", "candles", "vows"}

    # the endpoint and the keys were in the environment only
    assert s3.secrets_in(work) == []

    # nothing changed: a second run runs no job
    again = subprocess.run(
        [SNAKEMAKE, "--directory", str(work), "--configfile", str(ROOT / "config/config.yaml"), str(work / "run.yaml"),
         "--cores", str(cores()), "--dry-run"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert again.returncode == 0 and "Nothing to be done" in again.stdout, again.stdout[-3000:]


@pytest.mark.slow  # runs Snakemake jobs
def test_on_the_bucket_without_a_shared_filesystem_the_frames_are_the_local_runs(bucket, clips, local_run, tmp_path):
    """The same config with the run's files on the S3 server (`--shared-fs-usage none`): the downloaded videos reach
    frame extraction only as the download jobs' declared shard folders, nothing is left in the working directory but
    Snakemake's state, and the frames (rows and image bytes) equal the local run's."""
    s3 = bucket
    client = s3.client()
    client.create_bucket(Bucket=RUN_BUCKET)
    work = tmp_path / "work"
    work.mkdir()
    run_yaml = bucket_config(tmp_path)  # beside the working directory: it must hold nothing of the run's own
    env = {**os.environ, **s3.env, "PYTHONHASHSEED": "0"}
    command = [
        SNAKEMAKE, "--snakefile", str(ROOT / "Snakefile"), "--configfile", str(ROOT / "config/config.yaml"),
        str(run_yaml), "--cores", str(cores()), "--default-storage-provider", "s3", "--default-storage-prefix",
        f"s3://{RUN_BUCKET}/run", "--shared-fs-usage", "none", *RERUN_TRIGGERS,
    ]  # fmt: skip
    res = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=1800, env=env)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-8000:]
    assert left_in_workdir(work) == [], "files no rule declares were written beside the run"

    keys = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=RUN_BUCKET, Prefix="run/"):
        keys += [o["Key"] for o in page.get("Contents", [])]
    downloaded = tmp_path / "bucket"
    for key in keys:
        dest = downloaded / key.removeprefix("run/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        client.download_file(RUN_BUCKET, key, str(dest))

    # the videos are in the bucket, in the shard folders the manifest names, with the uploaded bytes
    videos = read_parquet(downloaded / "results/videos/videos.parquet", schemas.VIDEOS).sort("video_id")
    local_videos = read_parquet(local_run / "results/videos/videos.parquet", schemas.VIDEOS).sort("video_id")
    assert videos["path"].to_list() == local_videos["path"].to_list()
    uploaded = {Path(k).stem: p.read_bytes() for k, p in clips.items()}
    for vid, path in zip(videos["video_id"], videos["path"], strict=True):
        assert (downloaded / path).read_bytes() == uploaded[vid], path
    # the frames: the same rows, the same image bytes
    frames = pl.read_parquet(downloaded / "results/dataset/frames.parquet")
    local_frames = pl.read_parquet(local_run / "results/dataset/frames.parquet")
    assert frames.to_dicts() == local_frames.to_dicts()
    extracted = sorted(p.relative_to(local_run) for p in (local_run / "results/frames").rglob("*") if p.is_file())
    assert extracted and extracted == sorted(
        p.relative_to(downloaded) for p in (downloaded / "results/frames").rglob("*") if p.is_file()
    )
    for rel in extracted:
        if rel.suffix in (".jpg", ".png"):
            assert (downloaded / rel).read_bytes() == (local_run / rel).read_bytes(), rel
    assert s3.secrets_in(work) == [] and s3.secrets_in(downloaded) == []
