"""Real folders, real reruns (issue 25): files on disk known by their content, reasons at every stage, skipped files
named, manifest facts as displayed and decoded. Every file is made here by ffmpeg."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest
from helpers.faults import tried
from helpers.videotools import make_mp4

from squidflow.frames.extract import FramesConfig, checked_manifest, extract_videos
from squidflow.videos.download import DownloadOptions
from squidflow.videos.manifest import build_manifest, check_local, download_report, dropped_line, dropped_report
from squidflow.videos.probe import probe
from squidflow.videos.sources import combine, local_source

ROOT = Path(__file__).resolve().parents[3]
OPTS = DownloadOptions()


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True)


def audio_only(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-c:a", "aac", str(path))
    return path


# --- findings 3 and 4: reasons at every stage, skipped files, one report -------------------------------------------
def test_reasons_at_every_stage_and_skipped_files_are_named(tmp_path):
    lib = tmp_path / "lib"
    make_mp4(lib / "fire" / "good.mp4")
    (lib / "fire" / "empty.mp4").write_bytes(b"")
    audio_only(lib / "fire" / "song.mp4")
    (lib / "fire" / "notes.txt").write_text("not a video")
    make_mp4(lib / "loose.mp4")  # not in an event folder
    (lib / "fire" / "more").mkdir()
    cands, notes = combine([local_source(lib)])
    status = check_local(cands, OPTS, journal_dir=tmp_path / "journal")
    manifest = build_manifest(cands, [status])
    reason = dict(zip(manifest["video_id"], manifest["reason"], strict=True))
    assert reason == {"empty": "empty_file", "good": None, "song": "no_video_stream"}
    report = download_report(manifest, notes)
    assert "## Skipped files" in report and "3 files in the source folders were not taken" in report
    for name in ("notes.txt", "loose.mp4", "more"):
        assert name in report
    assert "downloads it again" not in report  # advice fits files on disk
    assert "replace the file: the next run checks it again" in report

    # frame extraction drops a video that probed fine: it gets a reason and a stage too
    cut = lib / "fire" / "good.mp4"
    videos = manifest.with_columns(pl.when(pl.col("video_id") == "good").then(pl.lit("ok")).otherwise(pl.col("status"))
                                   .alias("status"))  # fmt: skip
    cut.write_bytes(cut.read_bytes()[:3000])  # damaged after the check
    _, ext_status = extract_videos(videos.filter(pl.col("status") == "ok"), FramesConfig(n=4), tmp_path / "img")
    checked = checked_manifest(videos, ext_status)
    row = checked.filter(pl.col("video_id") == "good").row(0, named=True)
    assert (row["status"], row["reason"]) == ("corrupt", "frames_undecodable")
    dropped = dropped_report(checked, notes, frame_shards=2)
    assert "| frames | `frames_undecodable`" in dropped and "logs/extract_frames/shard" in dropped
    assert "| acquisition | `empty_file`" in dropped and "| acquisition | `no_video_stream`" in dropped
    assert "loose.mp4" in dropped
    line = dropped_line(checked, notes)
    assert line.startswith("squidflow videos: 3 of 3 dropped") and "3 files skipped" in line
    assert "frames: frames_undecodable 1" in line and "results/videos/dropped_videos.md" in line
    for case in (
        "an empty video file",
        "an audio-only file",
        "a file that fails at frame extraction",
        "non-video files and a video outside an event folder",
    ):
        tried(case, "named reason: in the dropped-videos report and the console line")


# --- finding 5: facts as displayed and as decoded ------------------------------------------------------------------
def test_manifest_sizes_are_as_displayed_and_frame_counts_as_decoded(tmp_path):
    plain, rotated = tmp_path / "plain.mp4", tmp_path / "rotated.mp4"
    ffmpeg(
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=96x64:rate=30",
        "-t",
        "1",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-pix_fmt",
        "yuv420p",
        str(plain),
    )
    ffmpeg("-i", str(plain), "-c", "copy", "-metadata:s:v:0", "rotate=90", str(rotated))
    info = probe(rotated)
    assert (info.width, info.height, info.stored_width, info.stored_height) == (64, 96, 96, 64)
    # an edit list: the header counts 90 packets, 75 frames decode (OpenCV's count)
    base, edit = tmp_path / "base.mp4", tmp_path / "edit.mp4"
    ffmpeg(
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=96x64:rate=30",
        "-t",
        "3",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-g",
        "30",
        "-bf",
        "2",
        "-pix_fmt",
        "yuv420p",
        str(base),
    )
    ffmpeg("-ss", "0.5", "-i", str(base), "-c", "copy", str(edit))
    from helpers.videotools import opencv_frames

    decoded = len(opencv_frames(edit))
    assert probe(edit).n_frames != decoded  # what the header says
    # Matroska has no frame count in its header: an audio track outlasting the video made duration x fps say 133
    mkv = tmp_path / "av.mkv"
    ffmpeg(
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=96x64:rate=30",
        "-f",
        "lavfi",
        "-i",
        "sine=duration=4.5",
        "-map",
        "0:v",
        "-map",
        "1:a",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-pix_fmt",
        "yuv420p",
        "-c:a",
        "aac",
        "-frames:v",
        "132",
        str(mkv),
    )
    assert probe(mkv).n_frames == len(opencv_frames(mkv)) == 132
    lib = tmp_path / "lib" / "phone"
    lib.mkdir(parents=True)
    shutil.copy(rotated, lib / "rotated.mp4")
    shutil.copy(edit, lib / "edit.mp4")
    cands, _ = combine([local_source(tmp_path / "lib")])
    manifest = build_manifest(cands, [check_local(cands, OPTS, journal_dir=tmp_path / "j")])
    _, st = extract_videos(manifest, FramesConfig(n=4), tmp_path / "img")
    checked = {r["video_id"]: r for r in checked_manifest(manifest, st).iter_rows(named=True)}
    assert checked["edit"]["n_frames"] == decoded
    assert (checked["rotated"]["width"], checked["rotated"]["height"]) == (64, 96)
    assert (checked["rotated"]["stored_width"], checked["rotated"]["stored_height"]) == (96, 64)


def test_ffprobe_and_decoder_messages_name_their_file(tmp_path, capfd):
    """A cut MP4 ("moov atom not found"): every message about it names the file."""
    good = make_mp4(tmp_path / "lib" / "fire" / "ok.mp4")
    cut = tmp_path / "lib" / "fire" / "cut.mp4"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    cands, _ = combine([local_source(tmp_path / "lib")])
    manifest = build_manifest(cands, [check_local(cands, OPTS, journal_dir=tmp_path / "j")])
    row = manifest.filter(pl.col("video_id") == "cut").row(0, named=True)
    assert row["reason"] == "corrupt" and row["error"].startswith(str(cut))  # ffprobe's or torchcodec's words
    _, st = extract_videos(manifest.with_columns(pl.lit("ok").alias("status")), FramesConfig(n=4), tmp_path / "img")
    out = capfd.readouterr()
    for line in (out.out + out.err).splitlines():
        if "moov" in line:
            assert "cut.mp4" in line, f"a message without its file: {line!r}"


def _format_duration(path: Path) -> float:
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", str(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return float(out.strip())


SRC = ("-f", "lavfi", "-i", "testsrc2=size=96x64:rate=30")
X264 = ("-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p")
CLIPS = {  # issue 32: each had duration_s = 0.0 in videos.parquet while ffprobe's format duration was right
    "h264.mp4": (*SRC, "-t", "1.5", *X264),  # MP4 carries a stream duration: the first place looked
    "remux_h264.mkv": None,  # an MP4 remuxed into Matroska without re-encoding
    "vp9.webm": (
        *SRC,
        "-t",
        "2",
        "-c:v",
        "libvpx-vp9",
        "-deadline",
        "realtime",
        "-cpu-used",
        "8",
        "-pix_fmt",
        "yuv420p",
    ),
    "av1.webm": (*SRC, "-t", "1.5", "-c:v", "libsvtav1", "-preset", "12", "-pix_fmt", "yuv420p"),
    "audio_first.mkv": (
        "-f",
        "lavfi",
        "-i",
        "sine=duration=2.5",
        *SRC,
        "-map",
        "0:a",
        "-map",
        "1:v",
        *X264,
        "-c:a",
        "aac",
        "-t",
        "2.5",
    ),
}


def _clip(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    if name == "remux_h264.mkv":
        mp4 = tmp_path / "source.mp4"
        ffmpeg(*SRC, "-t", "3", *X264, str(mp4))
        ffmpeg("-i", str(mp4), "-c", "copy", str(path))
    else:
        encoders = subprocess.run(["ffmpeg", "-hide_banner", "-encoders"], capture_output=True, text=True).stdout
        codec = CLIPS[name][CLIPS[name].index("-c:v") + 1]
        if codec not in encoders:
            pytest.skip(f"this ffmpeg has no {codec} encoder")
        ffmpeg(*CLIPS[name], str(path))
    return path


@pytest.mark.parametrize("name", list(CLIPS))
@pytest.mark.parametrize("in_process", [True, False], ids=["torchcodec", "ffprobe"])
def test_duration_of_every_container_is_the_one_ffprobe_reports(tmp_path, monkeypatch, name, in_process):
    """duration_s from the stream, else the container (Matroska/WebM have no stream duration), else frames / fps:
    never 0 for a decodable video; the frame stage's checked manifest and the spread figure's positions use it."""
    import squidflow.videos.probe as probe_module
    from squidflow.frames.figures import relative_positions

    path = _clip(tmp_path, name)
    monkeypatch.setattr(probe_module, "in_process", lambda: in_process)
    info = probe(path)
    want = _format_duration(path)
    assert info.duration_s == pytest.approx(want, abs=0.05), (info, want)
    assert info.duration_s > 0
    if in_process:  # the frame stage: its checked manifest keeps the duration
        lib = tmp_path / "lib" / "clips"  # a folder per event
        lib.mkdir(parents=True)
        shutil.copy(path, lib / path.name)
        cands, _ = combine([local_source(lib.parent)])
        manifest = build_manifest(cands, [check_local(cands, OPTS, journal_dir=tmp_path / "j")])
        _, status = extract_videos(manifest, FramesConfig(n=4), tmp_path / "img")
        checked = checked_manifest(manifest, status)
        assert checked["duration_s"][0] == pytest.approx(want, abs=0.05)
        frames = pl.DataFrame({"video_id": [checked["video_id"][0]] * 2, "event": ["e", "e"], "pts_s": [0.0, want / 2]})
        assert relative_positions(frames, checked)["position"].to_list() == pytest.approx([0.0, 0.5], abs=0.03)


def test_spread_positions_read_a_zero_duration_as_missing():
    from squidflow.frames.figures import relative_positions

    frames = pl.DataFrame({"video_id": ["v", "v"], "event": ["e", "e"], "pts_s": [0.0, 1.0]})
    videos = pl.DataFrame({"video_id": ["v"], "duration_s": [0.0], "n_frames": [120], "fps": [30.0]})
    assert relative_positions(frames, videos)["position"].to_list() == [0.0, 0.25]


def test_the_local_check_lists_each_folder_once_and_finds_every_subtitle(tmp_path, monkeypatch):
    """Issue 61: a video's subtitles were found by listing its folder, once per video: quadratic in a folder of
    thousands. The check lists each folder once, and finds the same files (a stem with dots, two languages)."""
    import os

    from squidflow.videos import download

    lib = tmp_path / "lib"
    clip = make_mp4(tmp_path / "clip.mp4")
    for event in ("fire", "flood"):
        (lib / event).mkdir(parents=True)
        for name in [f"{event}{i}" for i in range(20)] + [f"{event}.b"]:
            os.link(clip, lib / event / f"{name}.mp4")
    for sub in ("fire.b.en.vtt", "fire.b.de.srt", "fire3.en.vtt", "fire30.en.vtt", "fire3.vtt"):  # no fire30; no lang
        (lib / "fire" / sub).write_text("WEBVTT\n")
    cands, _ = combine([local_source(lib)])
    listed = []
    real = os.listdir
    monkeypatch.setattr(download.os, "listdir", lambda p=".": listed.append(Path(p)) or real(p))
    status = check_local(cands, OPTS, journal_dir=tmp_path / "journal", workers=2)
    assert status["status"].to_list() == ["ok"] * 42
    subs = {Path(p).stem: [Path(s).name for s in found] for p, found in status.select("path", "subtitles").rows()}
    assert sorted(p.name for p in listed if p.parent == lib) == ["fire", "flood"]  # once each, not once per video
    assert subs.pop("fire.b") == ["fire.b.de.srt", "fire.b.en.vtt"] and subs.pop("fire3") == ["fire3.en.vtt"]
    assert not any(subs.values())
