"""The demo corpus is real H.264 video whose truth table matches what its frames show (real ffmpeg, OpenCV, ffprobe)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import cv2
import numpy as np
import polars as pl
import pytest
import yaml
from helpers.runs import SNAKEMAKE
from helpers.videotools import opencv_frames

from squidflow.config.validation import check_config, load_schema
from squidflow.contracts import schemas
from squidflow.contracts.io import conform, read_parquet
from squidflow.demo.scenes import classify_frame
from squidflow.demo.videos import (
    CONDITIONS,
    OCCLUDER_RGB,
    DemoConfig,
    catalog,
    gather_truth,
    make_video,
    plan_video,
    short_video_id,
    vfr_video_id,
    video_ids,
)

ROOT = Path(__file__).resolve().parents[3]
SMALL = DemoConfig(videos_per_event=2, seconds=4, width=160, height=120, fps=15, seed=3, gop=24)


def ffprobe_frames(path: Path) -> list[dict]:
    res = subprocess.run(
        [
            "ffprobe",
            "-v",
            "error",
            "-select_streams",
            "v:0",
            "-show_entries",
            "frame=pts_time,key_frame,pict_type",
            "-of",
            "json",
            str(path),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(res.stdout)["frames"]


def ffprobe_stream(path: Path) -> dict:
    res = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_streams", "-of", "json", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(res.stdout)["streams"][0]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict:
    """A small corpus rendered through the library: 8 videos of 60 frames (one VFR, one of 30 frames)."""
    out = tmp_path_factory.mktemp("demo")
    parts = [make_video(SMALL, vid, out / f"{vid}.mp4") for vid in video_ids(SMALL)]
    truth = conform(gather_truth(parts, SMALL), schemas.TRUTH)
    frames = {vid: opencv_frames(out / f"{vid}.mp4") for vid in video_ids(SMALL)}
    return {"dir": out, "truth": truth, "frames": frames}


def weights(row: dict) -> dict[str, float]:
    return {e["event"]: e["weight"] for e in row["evidence"]}


def test_videos_are_h264_with_b_frames_and_a_fixed_gop(corpus) -> None:
    for vid in video_ids(SMALL):
        path = corpus["dir"] / f"{vid}.mp4"
        stream = ffprobe_stream(path)
        assert stream["codec_name"] == "h264" and stream["pix_fmt"] == "yuv420p", stream
        assert (stream["width"], stream["height"]) == (SMALL.width, SMALL.height)
        frames = ffprobe_frames(path)
        types = [f["pict_type"] for f in frames]
        assert "B" in types, f"{vid}: no B-frames ({''.join(types)})"
        keys = [i for i, f in enumerate(frames) if f["key_frame"] == 1]
        assert keys == list(range(0, len(frames), SMALL.gop)), f"{vid}: keyframes at {keys}, gop {SMALL.gop}"


def test_truth_has_a_row_per_decoded_frame_with_the_files_pts(corpus) -> None:
    truth = corpus["truth"]
    for vid in video_ids(SMALL):
        rows = truth.filter(pl.col("video_id") == vid).sort("frame_index")
        n_decoded = len(corpus["frames"][vid])
        assert rows.height == n_decoded > 0
        assert rows["frame_index"].to_list() == list(range(n_decoded))
        probe_pts = [float(f["pts_time"]) for f in ffprobe_frames(corpus["dir"] / f"{vid}.mp4")]
        assert np.allclose(rows["pts_s"].to_numpy(), probe_pts, atol=1e-6)


def test_one_variable_frame_rate_video_and_one_short_video(corpus) -> None:
    truth = corpus["truth"]
    n_frames = dict(truth.group_by("video_id").len().iter_rows())
    assert n_frames[short_video_id(SMALL)] < 36
    assert sum(n < 36 for n in n_frames.values()) == 1
    vfr = []
    for vid in video_ids(SMALL):
        deltas = np.diff(truth.filter(pl.col("video_id") == vid).sort("frame_index")["pts_s"].to_numpy())
        if deltas.max() - deltas.min() > 1e-3:
            vfr.append(vid)
        else:
            assert np.allclose(deltas, 1 / SMALL.fps, atol=1e-4), vid
    assert vfr == [vfr_video_id(SMALL)]
    deltas = np.diff(truth.filter(pl.col("video_id") == vfr[0])["pts_s"].to_numpy())
    assert np.isclose(deltas.min(), 1 / SMALL.fps, atol=1e-4) and np.isclose(
        deltas.max(), 1 / (0.6 * SMALL.fps), atol=1e-4
    )


def test_every_video_has_every_kind_of_ambiguous_stretch_and_valid_evidence(corpus) -> None:
    truth = corpus["truth"]
    for vid in video_ids(SMALL):
        conditions = set(truth.filter(pl.col("video_id") == vid)["condition"])
        if vid == short_video_id(SMALL):
            assert {"clean", "crossfade", "black"} <= conditions, conditions
        else:
            assert conditions == set(CONDITIONS), (vid, conditions)
    for row in truth.iter_rows(named=True):
        w = weights(row)
        assert list(w) == list(SMALL.events)
        assert all(0.0 <= x <= 1.0 for x in w.values()) and sum(w.values()) <= 1.0 + 1e-6
        assert (sum(w.values()) == 0) == (row["condition"] == "black")


def test_frames_look_like_their_truth(corpus) -> None:
    """Black is black, clean frames show their event's scene, cross-fades lie between the two scenes in proportion,
    dark frames are dimmed by their factor, occluders cover their fraction, blurred frames lose detail."""
    truth, frames, events = corpus["truth"], corpus["frames"], list(SMALL.events)
    rows = [dict(r, image=frames[r["video_id"]][r["frame_index"]], w=weights(r)) for r in truth.iter_rows(named=True)]

    def mean_rgb(img: np.ndarray) -> np.ndarray:
        return img.reshape(-1, 3).astype(float).mean(axis=0)

    def sharpness(img: np.ndarray) -> float:
        return float(cv2.Laplacian(cv2.cvtColor(img, cv2.COLOR_RGB2GRAY), cv2.CV_64F).var())

    clean = [r for r in rows if r["condition"] != "blur" and max(r["w"].values()) >= 0.95]
    reference = {e: np.mean([mean_rgb(r["image"]) for r in clean if r["w"][e] >= 0.95], axis=0) for e in events}
    checked = dict.fromkeys(["black", "clean", "crossfade", "dark", "occlusion", "blur"], 0)
    for r in rows:
        img, w, own = r["image"], r["w"], r["event"]
        where = f"{r['video_id']} frame {r['frame_index']} ({r['condition']}, evidence {w})"
        if r["condition"] == "black":
            assert img.mean() < 5, where
            checked["black"] += 1
        elif r["condition"] != "blur" and max(w.values()) >= 0.95:
            assert classify_frame(img, events) == max(w, key=w.get), where
            checked["clean"] += 1
        elif r["condition"] == "crossfade":
            other = next(e for e in events if e != own and w[e] > 0)
            a, b = reference[own], reference[other]
            along = float(np.dot(mean_rgb(img) - a, b - a) / np.dot(b - a, b - a))
            assert abs(along - w[other]) < 0.12, f"{where}: lies at {along:.2f} between the scenes"
            checked["crossfade"] += 1
        video_clean = [x["image"] for x in rows if x["video_id"] == r["video_id"] and x["condition"] == "clean"]
        if r["condition"] == "dark":
            ratio = img.mean() / np.mean([x.mean() for x in video_clean])
            assert abs(ratio - w[own]) < 0.06 and img.mean() < 0.8 * np.mean([x.mean() for x in video_clean]) + 1, where
            checked["dark"] += 1
        elif r["condition"] == "occlusion":
            covered = (np.abs(img.astype(int) - np.array(OCCLUDER_RGB)).max(axis=-1) <= 20).mean()
            assert abs(covered - (1 - w[own])) < 0.05, f"{where}: {covered:.3f} of the frame is occluder grey"
            checked["occlusion"] += 1
        elif r["condition"] == "blur" and w[own] < 0.8:
            assert sharpness(img) < 0.3 * np.median([sharpness(x) for x in video_clean]), where
            assert classify_frame(img, events) == own, where  # blurred, but the colours are still the event's
            checked["blur"] += 1
    assert all(checked.values()), checked


def test_same_seed_same_video_other_seed_another(tmp_path: Path) -> None:
    vid = short_video_id(SMALL)
    t1 = make_video(SMALL, vid, tmp_path / "a.mp4")
    t2 = make_video(SMALL, vid, tmp_path / "b.mp4")
    assert t1.equals(t2)
    f1, f2 = opencv_frames(tmp_path / "a.mp4"), opencv_frames(tmp_path / "b.mp4")
    assert len(f1) == len(f2) and all(np.array_equal(x, y) for x, y in zip(f1, f2, strict=True))
    other = DemoConfig(**{**SMALL.__dict__, "seed": SMALL.seed + 1})
    t3 = make_video(other, vid, tmp_path / "c.mp4")
    f3 = opencv_frames(tmp_path / "c.mp4")
    assert not t1.equals(t3) or not all(np.array_equal(x, y) for x, y in zip(f1, f3, strict=False))
    assert plan_video(SMALL, vid).ops != plan_video(other, vid).ops


def test_catalog_text_is_varied_multilingual_and_deterministic() -> None:
    big = DemoConfig(
        events=("birthday_party", "wedding", "parade", "protest", "concert", "street_food"), videos_per_event=40
    )
    cat = conform(catalog(big), schemas.DEMO_CATALOG)
    assert cat.height == 240 and cat["video_id"].to_list() == video_ids(big)
    assert cat["path"][0] == "results/videos/demo/birthday_party_00.mp4"
    assert set(cat["language"]) >= {"en", "es", "fr", "de"}
    assert cat.equals(catalog(big)) and not cat.equals(catalog(DemoConfig(**{**big.__dict__, "seed": 1})))
    for event in big.events:
        texts = cat.filter((pl.col("event") == event) & (pl.col("language") == "en"))["description"]
        sentences = {s.strip() for t in texts for s in t.split(". ") if s.strip()}
        assert len(sentences) >= 36, f"{event}: only {len(sentences)} distinct English sentences"
        assert all(t.count(".") >= 2 for t in texts), event
    assert cat["title"].n_unique() > 60 and all(len(t) >= 2 for t in cat["tags"])


def test_unknown_video_id_and_bad_config_are_explained() -> None:
    with pytest.raises(ValueError, match="not a demo video"):
        plan_video(SMALL, "wedding_99")
    schema = load_schema(ROOT / "workflow" / "schemas" / "config.schema.yaml")
    problems = check_config({"demo": {"gop": 0, "events": ["a1", "b", "c"]}}, schema)
    assert any("demo.gop" in p for p in problems) and any("demo.events" in p for p in problems), problems


@pytest.mark.slow  # runs Snakemake jobs
def test_snakemake_rule_builds_the_corpus(tmp_path: Path) -> None:
    cfg = {
        "stages": ["videos"],
        "demo": {
            "events": ["birthday_party", "wedding", "parade", "protest"],
            "videos_per_event": 1,
            "seconds": 2,
            "width": 96,
            "height": 64,
            "fps": 12,
            "seed": 5,
            "gop": 10,
        },
    }
    cfg_path = tmp_path / "demo.yaml"
    cfg_path.write_text(yaml.safe_dump(cfg))
    res = subprocess.run(
        [
            SNAKEMAKE,
            "--directory",
            str(tmp_path / "wd"),
            "--configfile",
            str(cfg_path),
            "--cores",
            "2",
            "results/videos/demo/truth.parquet",
            "results/videos/demo/catalog.parquet",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    demo_dir = tmp_path / "wd" / "results" / "videos" / "demo"
    truth = read_parquet(demo_dir / "truth.parquet", schemas.TRUTH)
    cat = read_parquet(demo_dir / "catalog.parquet", schemas.DEMO_CATALOG)
    ids = ["birthday_party_00", "wedding_00", "parade_00", "protest_00"]
    assert truth["video_id"].unique(maintain_order=True).to_list() == ids == cat["video_id"].to_list()
    for vid in ids:
        assert len(opencv_frames(demo_dir / f"{vid}.mp4")) == truth.filter(pl.col("video_id") == vid).height
    assert (tmp_path / "wd" / "logs" / "make_demo_videos" / "wedding_00.log").exists()
