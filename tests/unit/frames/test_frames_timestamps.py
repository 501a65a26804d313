"""Files whose timestamps do not tell frames apart (issue 25, finding 2): every frame equals OpenCV's, both decoders.

ffmpeg builds each file: a time base too coarse for the frame rate (MP4 timescale 10 at 30 fps, B-frames, so two
frames share a timestamp), repeated timestamps (Matroska, three frames per timestamp, written by the `setts`
bitstream filter) and an edit list (a cut copy whose first GOP is decoded but not shown)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from helpers.videotools import opencv_frames
from test_frames import DECODERS, assert_same_frames

from squidflow.frames.decode import decode_frames
from squidflow.frames.extract import FramesConfig, extract_videos
from squidflow.frames.frame_table import frame_table

SOURCE = ["-f", "lavfi", "-i", "testsrc2=size=96x64:rate=30"]
X264 = ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"]


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-v", "error", "-y", *args], check=True)


def coarse_time_base(d: Path) -> Path:
    ffmpeg(*SOURCE, "-t", "1.2", *X264, "-g", "12", "-bf", "2", "-video_track_timescale", "10", str(d / "coarse.mp4"))
    return d / "coarse.mp4"


def repeated_timestamps(d: Path) -> Path:
    ffmpeg(*SOURCE, "-t", "1.2", *X264, "-g", "12", "-bf", "0", str(d / "base.mkv"))
    ffmpeg("-i", str(d / "base.mkv"), "-c", "copy", "-bsf:v", "setts=ts=floor(PTS/100)*100", str(d / "repeated.mkv"))
    return d / "repeated.mkv"


def edit_list(d: Path) -> Path:
    ffmpeg(*SOURCE, "-t", "3", *X264, "-g", "30", "-bf", "2", str(d / "base.mp4"))
    ffmpeg("-ss", "0.5", "-i", str(d / "base.mp4"), "-c", "copy", str(d / "edit.mp4"))
    return d / "edit.mp4"


@pytest.mark.parametrize("make", [coarse_time_base, repeated_timestamps, edit_list])
@pytest.mark.parametrize("decoder", DECODERS)
def test_every_frame_is_opencvs_when_timestamps_repeat(tmp_path, make, decoder):
    path = make(tmp_path)
    ref = opencv_frames(path)
    table = frame_table(path, decoder=decoder)
    assert table.n_frames == len(ref)
    if make is not edit_list:
        assert table.repeated_pts  # the file is what the test means it to be
    every = list(range(table.n_frames))
    shuffled = every[::-1][::3] + every[1::3]  # asked out of order: each is still frame k
    assert_same_frames(path, shuffled, decode_frames(path, shuffled, decoder=decoder), ref)


@pytest.mark.parametrize("decoder", DECODERS)
def test_extraction_of_a_repeated_timestamp_file_is_ok_with_opencvs_frames(tmp_path, decoder):
    """Before the fix: torchcodec marked the video corrupt ("never delivered frame(s)"), the ffmpeg CLI gave frame
    k-1 for some frames. Now the extracted images are OpenCV's frames."""
    import polars as pl
    from PIL import Image

    path = repeated_timestamps(tmp_path)
    videos = pl.DataFrame({"video_id": ["rep"], "path": [str(path)], "status": ["ok"]})
    frames, status = extract_videos(
        videos, FramesConfig(n=12, letterbox=False, decoder=decoder), tmp_path / "img", image_format="png"
    )
    assert status["status"].to_list() == ["ok"], status["error"].to_list()
    ref = opencv_frames(path)
    got = [np.asarray(Image.open(p)) for p in frames["image_path"]]
    assert_same_frames(path, frames["frame_index"].to_list(), got, ref)
