"""Frame extraction, selection and splits on real videos made by ffmpeg (B-frames, GOP 250, VFR, rotation).

Every OpenCV-numbering check runs with both decoders (torchcodec, the default, and the ffmpeg CLI fallback)."""

from __future__ import annotations

import subprocess
import zlib
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from helpers.videotools import opencv_frames

from squidflow.contracts import schemas
from squidflow.contracts.image_ids import shard_of
from squidflow.contracts.io import conform
from squidflow.demo.videos import DemoConfig, make_video, short_video_id, vfr_video_id
from squidflow.frames import decode
from squidflow.frames.decode import decode_frames, decode_ranks, decoding_costs, letterbox, split_runs
from squidflow.frames.extract import (
    FramesConfig,
    checked_manifest,
    even_targets,
    extract_videos,
    shard_videos,
)
from squidflow.frames.frame_table import ExtractionError, frame_table, resolve_decoder
from squidflow.frames.selection import kmeans_select
from squidflow.frames.splits import SplitsConfig, split_videos

DEMO = DemoConfig(videos_per_event=2, seconds=6.0)
DECODERS = ("torchcodec", "ffmpeg")


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return 99.0 if mse == 0 else 10 * np.log10(255.0**2 / mse)


def assert_same_frames(path: Path, indices: list[int], got: list[np.ndarray], ref: list[np.ndarray]) -> None:
    """The acceptance rule: PSNR >= 40 dB against OpenCV's frame k, and closer to it than to frames k-1 and k+1."""
    for k, frame in zip(indices, got, strict=True):
        own = psnr(frame, ref[k])
        assert own >= 40, f"{path.name} frame {k}: PSNR {own:.1f} dB against OpenCV's frame {k}"
        for j in (k - 1, k + 1):
            if 0 <= j < len(ref) and not np.array_equal(ref[j], ref[k]):
                assert own > psnr(frame, ref[j]), f"{path.name} frame {k} is closer to OpenCV's frame {j}"


@pytest.fixture(scope="module")
def videos(tmp_path_factory) -> dict[str, Path]:
    """Demo videos (one VFR, one shorter than 36 frames) and a 30 s GOP-250 B-frame clip with 3 keyframes."""
    d = tmp_path_factory.mktemp("videos")
    out = {}
    for vid in (vfr_video_id(DEMO), short_video_id(DEMO), "wedding_00"):
        make_video(DEMO, vid, d / f"{vid}.mp4")
        out[vid] = d / f"{vid}.mp4"
    gop = d / "gop250.mp4"
    subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=160x120:rate=25",
            "-t",
            "30",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-g",
            "250",
            "-bf",
            "2",
            "-pix_fmt",
            "yuv420p",
            str(gop),
        ],
        check=True,
    )
    out["gop250"] = gop
    corrupt = d / "corrupt.mp4"
    corrupt.write_bytes(gop.read_bytes()[:3000])
    out["corrupt"] = corrupt
    return out


def assert_same_tables(a, b) -> None:
    """torchcodec's scan and ffprobe's packet list give the same frame table."""
    assert np.array_equal(a.pts, b.pts) and np.array_equal(a.is_key, b.is_key), a.path
    assert (a.time_base, a.width, a.height, a.stream_index, a.rotation) == (
        b.time_base,
        b.width,
        b.height,
        b.stream_index,
        b.rotation,
    ), a.path


def test_exact_mode_matches_opencv_on_demo_videos_including_vfr(videos):
    vfr = videos[vfr_video_id(DEMO)]
    times = frame_table(vfr).times
    assert np.ptp(np.diff(times)) > 0.01, "the VFR demo video should have varying frame durations"
    for name in (vfr_video_id(DEMO), short_video_id(DEMO), "wedding_00", "gop250"):
        path = videos[name]
        ref = opencv_frames(path)
        table = frame_table(path, decoder="torchcodec")
        assert_same_tables(table, frame_table(path, decoder="ffmpeg"))
        assert table.n_frames == len(ref), f"{name}: frame count differs from OpenCV's"
        n = len(ref)
        # scattered, unsorted, with the first and last frames, keyframes and their neighbours
        keys = [int(k) for k in table.keyframe_ranks]
        wanted = sorted(
            {
                0,
                1,
                n - 1,
                n // 3,
                n // 2 + 1,
                *keys,
                *[k + 1 for k in keys if k + 1 < n],
                *[k - 1 for k in keys if k > 0],
            },
            reverse=True,
        )
        for decoder in DECODERS:
            got = decode_frames(path, wanted, decoder=decoder)
            assert_same_frames(path, wanted, got, ref)
        # several decoders at once on runs of the same GOP, a repeated frame, and more frames than one call takes
        got = decode_ranks(table, [*wanted, wanted[0]], workers=3, frames_per_call=2, decoder="torchcodec")
        assert_same_frames(path, [*wanted, wanted[0]], got, ref)


def test_even_mode_spreads_over_the_video_and_prefers_keyframes(videos):
    table = frame_table(videos["gop250"])  # 750 frames, keyframes at 0, 250, 500
    ranks = even_targets(table, 36)
    assert len(ranks) == len(set(ranks)) == 36
    assert ranks == sorted(ranks)
    # targets at i * 750 / 36 frames (the release's convention, frame 0 included): 250 and 500 are targets and keyframes
    assert all(abs(r - 750 / 36 * i) <= 0.5 for i, r in enumerate(ranks))
    assert {0, 250, 500} <= set(ranks)
    # 7 targets, spacing 107 frames: the keyframes at 250 and 500 lie 36 frames from the targets at 214 and 536 —
    # within a tolerance of 0.4 x spacing they stand in for them (one decoded frame each), within 0.25 they do not
    ranks = even_targets(table, 7, tolerance=0.4)
    exact = even_targets(table, 7, exact_times=True)
    assert exact == [0, 107, 214, 321, 429, 536, 643]
    assert ranks == [0, 107, 250, 321, 429, 500, 643]
    assert even_targets(table, 7) == exact
    # a video shorter than N gives all its frames
    short = frame_table(videos[short_video_id(DEMO)])
    assert short.n_frames < 36
    assert even_targets(short, 36) == list(range(short.n_frames))


def test_extract_videos_writes_images_and_marks_corrupt_videos(videos, tmp_path):
    manifest = pl.DataFrame(
        {
            "video_id": ["gop250", "short", "corrupt", "listed"],
            "event": ["parade", "parade", "wedding", "wedding"],
            "path": [
                str(videos["gop250"]),
                str(videos[short_video_id(DEMO)]),
                str(videos["corrupt"]),
                str(videos["wedding_00"]),
            ],
            "status": ["ok"] * 4,
            "error": pl.Series([None] * 4, dtype=pl.Utf8),
            "release_frames": [None, None, None, [40, 3, 77]],
        }
    )
    cfg = FramesConfig(n=40)
    frames, status = extract_videos(manifest, cfg, tmp_path / "img")
    st = dict(zip(status["video_id"], status["status"], strict=True))
    assert st == {"gop250": "ok", "short": "ok", "corrupt": "corrupt", "listed": "ok"}
    error = status.filter(pl.col("video_id") == "corrupt")["error"][0]
    assert "corrupt.mp4" in error and ".cpp" not in error  # the file, in the decoder's words without its source lines
    counts = dict(frames.group_by("video_id").len().iter_rows())
    assert counts["gop250"] == 40 and counts["listed"] == 3
    assert counts["short"] == frame_table(videos[short_video_id(DEMO)]).n_frames
    assert frames.filter(pl.col("video_id") == "listed")["frame_index"].to_list() == [40, 3, 77]
    conform(frames, schemas.EXTRACTED_FRAMES)
    # images exist and carry the release's letterbox: 160x120 (1.33:1) padded to 1.78:1
    from PIL import Image

    with Image.open(frames["image_path"][0]) as img:
        assert img.size == (214, 120)
    # the stage's view of the manifest: the undecodable video becomes corrupt, with the error
    checked = checked_manifest(manifest, status)
    row = checked.filter(pl.col("video_id") == "corrupt").row(0, named=True)
    assert row["status"] == "corrupt" and row["error"].startswith("frame extraction:")
    assert checked.filter(pl.col("status") == "ok").height == 3


def test_letterbox_rule_of_the_release():
    narrow = np.full((90, 120, 3), 200, np.uint8)  # 1.33:1
    out = letterbox(narrow)
    assert out.shape == (90, 161, 3)  # ceil(90 * 1.78)
    assert (out[:, :20] == 0).all() and (out[:, -20:] == 0).all() and (out[:, 20:140] == 200).all()
    wide = np.zeros((90, 160, 3), np.uint8)  # 1.78:1 stays
    assert letterbox(wide) is wide
    assert letterbox(np.zeros((100, 175, 3), np.uint8)).shape == (100, 175, 3)  # 1.75 >= 1.74


def test_shards_are_stable_and_partition_the_ok_videos():
    ids = [f"v{i}" for i in range(50)]
    assert [shard_of(v, 4) for v in ids] == [shard_of(v, 4) for v in ids]
    assert shard_of("abc", 7) == zlib.crc32(b"abc") % 7
    manifest = pl.DataFrame({"video_id": ids, "status": ["ok"] * 49 + ["failed"]})
    parts = [shard_videos(manifest, s, 3)["video_id"].to_list() for s in range(3)]
    assert sorted(sum(parts, [])) == sorted(ids[:49])
    assert all(parts)


def test_kmeans_selection_gives_distinct_frames_nearest_to_centroids():
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(6, 16)) * 10
    x = np.concatenate([c + rng.normal(size=(6, 16)) * 0.1 for c in centers]).astype(np.float32)
    picks = kmeans_select(x, 6, seed=1)
    rows = [r for r, _, _ in picks]
    assert len(set(rows)) == 6
    assert sorted(r // 6 for r in rows) == list(range(6))  # one frame from each true cluster
    assert picks == kmeans_select(x, 6, seed=1)  # seeded
    # all frames identical: six centroids share the nearest frame; still six distinct frames
    same = np.ones((10, 4), np.float32)
    assert len({r for r, _, _ in kmeans_select(same, 6)}) == 6
    assert kmeans_select(x[:4], 6) == [(i, i, 0.0) for i in range(4)]


def test_splits_by_video_stratified_and_release_test():
    videos = pl.DataFrame(
        {"video_id": [f"{e}{i}" for e in "abcd" for i in range(20)], "event": [e for e in "abcd" for _ in range(20)]}
    )
    cfg = SplitsConfig(seed=3)
    mapping = split_videos(videos, cfg)
    assert mapping == split_videos(videos, cfg)
    per_event = pl.DataFrame({"video_id": list(mapping), "split": list(mapping.values())}).join(videos, on="video_id")
    counts = per_event.group_by("event", "split").len().sort("event", "split")
    assert set(counts["len"].to_list()) == {14, 3}  # 70/15/15 of 20 in each event
    released = split_videos(videos, cfg, test_videos={"a0", "b5"})
    assert released["a0"] == released["b5"] == "test"
    assert sum(s == "test" for s in released.values()) == 2


@pytest.mark.parametrize(
    ("name", "encode"),
    [
        ("offset.mp4", ["-c:v", "libx264", "-preset", "ultrafast", "-g", "60", "-bf", "3", "-output_ts_offset", "5"]),
        ("bframes.mkv", ["-c:v", "libx264", "-preset", "ultrafast", "-g", "60", "-bf", "3"]),
        ("vp9.webm", ["-c:v", "libvpx-vp9", "-g", "45", "-deadline", "realtime", "-cpu-used", "8"]),
    ],
)
def test_exact_mode_matches_opencv_across_containers(tmp_path, name, encode):
    """A stream that starts at 5 s, Matroska timestamps, VP9 as YouTube serves it: still OpenCV's frame k."""
    path = tmp_path / name
    subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=96x64:rate=30",
            "-t",
            "5",
            *encode,
            "-pix_fmt",
            "yuv420p",
            str(path),
        ],
        check=True,
    )
    ref = opencv_frames(path)
    table = frame_table(path)
    assert_same_tables(table, frame_table(path, decoder="ffmpeg"))
    assert table.n_frames == len(ref) == 150
    wanted = [149, 0, 44, 45, 46, 90, 91, 100, 1]
    for decoder in DECODERS:
        assert_same_frames(path, wanted, decode_frames(path, wanted, decoder=decoder), ref)


def test_rotated_video_is_turned_as_opencv_turns_it(tmp_path):
    """A phone video: coded 96x64, displayed 64 wide and 96 high (rotation metadata); frames come out turned."""
    plain, path = tmp_path / "plain.mp4", tmp_path / "rotated.mp4"
    subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=96x64:rate=30",
            "-t",
            "2",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-g",
            "30",
            "-pix_fmt",
            "yuv420p",
            str(plain),
        ],
        check=True,
    )
    subprocess.run(
        ["ffmpeg", "-v", "error", "-y", "-i", str(plain), "-c", "copy", "-metadata:s:v:0", "rotate=90", str(path)],
        check=True,
    )
    ref = opencv_frames(path)
    assert ref[0].shape == (96, 64, 3)
    table = frame_table(path)
    assert_same_tables(table, frame_table(path, decoder="ffmpeg"))
    assert table.rotation == 90 and table.display_size == (64, 96)
    wanted = [59, 0, 31, 30, 29]
    for decoder in DECODERS:
        got = decode_frames(path, wanted, decoder=decoder)
        assert all(g.shape == (96, 64, 3) for g in got)
        assert_same_frames(path, wanted, got, ref)


def test_every_torchcodec_path_gives_opencvs_frames(videos, monkeypatch):
    """Keyframes alone (one packet, decoder drained), frames decoded forward by their timestamps, and the
    frame-by-frame fallback for frames the timestamp decoder gets wrong (here: all of them)."""
    path = videos["gop250"]
    ref = opencv_frames(path)
    table = frame_table(path)
    wanted = [749, 0, 250, 251, 400, 500, 499]
    for workers in (1, 2):
        assert_same_frames(path, wanted, decode_ranks(table, wanted, workers=workers), ref)
    monkeypatch.setattr(decode, "_decode_played_at", lambda *args: {})
    assert_same_frames(path, wanted, decode_ranks(table, wanted, workers=1), ref)


def test_decoding_runs_balance_the_frames_decoded():
    """Sorted frames are cut into contiguous runs of about equal work: frames decoded from each GOP's keyframe, or
    onward from the previous frame of the same GOP."""

    class Table:  # keyframes at 0, 100, 200 (the only field decoding_costs reads)
        keyframe_ranks = np.array([0, 100, 200])

    costs = decoding_costs(Table, [5, 10, 150, 160, 199, 250])
    assert costs.tolist() == [6, 5, 51, 10, 39, 51]
    runs = split_runs(costs, 2)
    assert [(r.start, r.stop) for r in runs] == [(0, 4), (4, 6)]  # 72 and 90: the most even cut of 162
    assert split_runs(np.array([1, 1, 1]), 5) == [slice(0, 1), slice(1, 2), slice(2, 3)]
    assert split_runs(np.array([7]), 4) == [slice(0, 1)]
    assert [(r.start, r.stop) for r in split_runs(np.array([100, 1, 1, 1]), 2)] == [(0, 1), (1, 4)]


def test_decoder_choice_falls_back_to_ffmpeg_and_names_the_problem(videos, monkeypatch):
    with pytest.raises(ValueError, match="frames.decoder"):
        resolve_decoder("opencv")
    assert resolve_decoder("auto") == "torchcodec" and resolve_decoder("ffmpeg") == "ffmpeg"
    monkeypatch.setattr(
        "squidflow.frames.frame_table.torchcodec_error", lambda: "RuntimeError: Could not load libtorchcodec"
    )
    assert resolve_decoder("auto") == "ffmpeg"
    with pytest.raises(ExtractionError, match="frames.decoder: ffmpeg"):
        resolve_decoder("torchcodec")
    # the fallback still extracts: the auto path without torchcodec is the ffmpeg CLI
    assert decode_frames(videos["gop250"], [3])[0].shape == (120, 160, 3)


def test_release_test_split_comes_from_the_real_annotations(shared_data):
    from squidflow.frames.splits import read_annotated_videos

    annotated = read_annotated_videos(str(shared_data / "squid-e" / "huj_annotations.csv"))
    assert len(annotated) == 299  # the release's 1,800 annotated images: six frames of 298 videos, seven of one
    release = pl.read_csv(shared_data / "squid-e" / "dataset.csv", infer_schema_length=0)
    ids = [v.strip('"') for v in release["video_ID"].to_list()]
    assert annotated <= set(ids)
    videos = pl.DataFrame({"video_id": ids, "event": release["event"].to_list()}).unique("video_id")
    mapping = split_videos(videos, SplitsConfig(fractions={"train": 0.8, "val": 0.2}), test_videos=annotated)
    assert {v for v, s in mapping.items() if s == "test"} == annotated
    assert set(mapping.values()) == {"train", "val", "test"}
