"""Videos for tests and benchmarks: synthetic clips made by ffmpeg (`make_clip`), and reference decoding (the frames
as the SQUID-E release script sees them)."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np


def opencv_frames(path: Path) -> list[np.ndarray]:
    """Every frame, RGB, in OpenCV's sequential reader's counting (the release's frame numbers)."""
    cap = cv2.VideoCapture(str(path))
    frames = []
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        frames.append(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
    cap.release()
    return frames


# The encoder each container gets by default: H.264 in MP4 and Matroska, VP8 in WebM (every ffmpeg build has both).
ENCODE_FOR_SUFFIX = {
    ".mp4": ("-c:v", "libx264", "-pix_fmt", "yuv420p"),
    ".mkv": ("-c:v", "libx264", "-pix_fmt", "yuv420p"),
    ".webm": ("-c:v", "libvpx", "-b:v", "200k"),
}


def make_clip(
    path: Path,
    *,
    size: str = "96x72",
    rate: float = 12,
    seconds: float = 3,
    hue: float | None = None,
    encode: Sequence[str] | None = None,
    pattern: str = "testsrc2",
) -> Path:
    """A synthetic clip made by ffmpeg (by default its `testsrc2` pattern: moving, every frame different), written
    atomically.

    `size` is WIDTHxHEIGHT, `rate` frames per second, `hue` turns the pattern's colours (degrees: clips that differ
    in look), `encode` the output options (default: ENCODE_FOR_SUFFIX for the file's suffix), `pattern` another
    lavfi source (testsrc, smptebars, mandelbrot: clips whose bytes differ). The parent folder is made. Returns
    `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    source = f"{pattern}=size={size}:rate={rate}" + (f",hue=h={hue}" if hue is not None else "")
    options = list(encode if encode is not None else ENCODE_FOR_SUFFIX[path.suffix.lower()])
    tmp = path.with_name(f".{path.stem}.part{path.suffix}")
    subprocess.run(
        [
            "ffmpeg",
            "-nostdin",
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-t",
            str(seconds),
            "-i",
            source,
            *options,
            str(tmp),
        ],
        check=True,
        timeout=max(120, 2 * seconds),
    )
    tmp.replace(path)
    return path


# A small fast H.264 MP4: the clip most tests of the videos stage need (25 fps, so `seconds` * 25 frames).
FAST_MP4 = ("-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast")


def make_mp4(path: Path, *, seconds: float = 1.0, size: str = "96x64", pattern: str = "testsrc") -> Path:
    """A `seconds`-long 25 fps MP4 of ffmpeg's `pattern` at `size` (make_clip with the fast encoder)."""
    return make_clip(path, size=size, rate=25, seconds=seconds, pattern=pattern, encode=FAST_MP4)


def make_clips(folder: Path, n: int, *, size: str = "64x48", rate: float = 6, seconds: float = 2) -> list[Path]:
    """`n` distinct clips `folder`/clip00000.mp4 ... in one ffmpeg process (a benchmark's thousands, in seconds): one
    `testsrc2` stream with each clip's index drawn in, cut every `seconds` at a key frame by the segment muxer.
    Clips already there are kept (a cache): only a folder with fewer than `n` is made again. Returns the `n` paths."""
    folder = Path(folder)
    paths = [folder / f"clip{i:05d}.mp4" for i in range(n)]
    if all(p.is_file() and p.stat().st_size for p in paths):
        return paths
    folder.mkdir(parents=True, exist_ok=True)
    index = f"drawtext=text='%{{eif\\:floor(t/{seconds})\\:d}}':fontsize={int(size.split('x')[1]) // 3}:fontcolor=white"
    source = f"testsrc2=size={size}:rate={rate}:duration={n * seconds},{index}"
    subprocess.run(
        ["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", source, "-c:v", "libx264", "-preset",
         "ultrafast", "-pix_fmt", "yuv420p", "-force_key_frames", f"expr:gte(t,n_forced*{seconds})", "-f", "segment",
         "-segment_time", str(seconds), "-reset_timestamps", "1", str(folder / "clip%05d.mp4")],
        check=True,
        timeout=max(300, n),
    )  # fmt: skip
    return paths
