"""Is this file a video we can use? The container's header for the numbers, a short decode for the truth.

A truncated MP4 often still has a readable header (ffprobe reports a duration) but no decodable frames, and an MP4
whose `moov` atom sits at the end is unreadable when cut short. So a file counts as a video only when its container
is read *and* its first frames decode without error; anything else is `corrupt` in the manifest.

The check runs with the decoder the frames stage uses: torchcodec, in process (FFmpeg's libraries: ~2 ms for a small
file, where an ffprobe process costs ~40 ms), when it loads; else ffprobe, which also fails a file on any decoding
message it prints. torchcodec fails it on what FFmpeg's decoder returns as an error (a packet it cannot take, a frame
it cannot deliver), not on the messages it only logs while concealing damage in a frame it still delivers.
"""

from __future__ import annotations

import functools
import json
import subprocess
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path

from squidflow.errors import first_line


class ProbeError(RuntimeError):
    """ffprobe or the decode check failed; the message says which and quotes the tool's own words."""


@dataclass(frozen=True)
class VideoInfo:
    duration_s: float
    fps: float
    n_frames: int
    width: int  # as displayed: the stored size turned by the container's rotation (as OpenCV and the frames give it)
    height: int
    stored_width: int | None = None  # as coded in the stream
    stored_height: int | None = None

    def as_row(self) -> dict:
        return asdict(self)


def _rate(text: str | None) -> float:
    try:
        value = float(Fraction(text)) if text and text != "0/0" else 0.0
    except (ValueError, ZeroDivisionError):
        value = 0.0
    return value


def _tail(text: str, n: int = 300) -> str:
    text = " ".join(text.split())
    return text[-n:]


@functools.cache
def in_process() -> bool:
    """Does torchcodec (the frames stage's decoder) load here? Then the check runs in process."""
    try:
        import torchcodec.decoders  # noqa: F401 - loads libtorchcodec against the system's FFmpeg
    except Exception:  # ImportError, or RuntimeError/OSError when no supported FFmpeg is found
        return False
    return True


def probe(path: str | Path, *, decode_frames: int = 5, timeout_s: float = 120) -> VideoInfo:
    """Read the first video stream's geometry, rate, duration and frame count; decode its first frames.

    `n_frames` is the container's count when it has one (MP4 does), else the stream's packets counted by demuxing
    (Matroska, WebM: duration × fps is off by one or more when an audio track outlasts the video). The frame stage
    counts the frames as decoded (an MP4 edit list hides some) and writes that count into videos_checked.parquet.
    `width`/`height` are as displayed (rotation metadata applied), `stored_width`/`stored_height` as coded.
    """
    path = Path(path)
    try:
        size = path.stat().st_size  # one stat, not an exists() and a stat() (a download shard probes every video)
    except FileNotFoundError:
        raise ProbeError(f"{path}: file not found") from None
    if size == 0:
        raise ProbeError(f"{path}: file is empty")
    if in_process():
        return _probe_torchcodec(path, decode_frames)
    return _probe_ffprobe(path, decode_frames, timeout_s)


def _probe_torchcodec(path: Path, decode_frames: int) -> VideoInfo:
    """The container's header (no scan of the packets) and the first frames decoded, by torchcodec in process."""
    from torchcodec.decoders import VideoDecoder

    try:
        decoder = VideoDecoder(str(path), seek_mode="approximate", num_ffmpeg_threads=1)
    except (RuntimeError, ValueError) as exc:
        raise ProbeError(f"{path}: ffmpeg cannot decode it (no video stream read): {first_line(exc)}") from exc
    meta = decoder.metadata
    fps = float(meta.average_fps_from_header or 0.0)
    nb = meta.num_frames_from_header
    n_frames = int(nb) if nb else _count_packets(path, 120)
    stream_s = meta.duration_seconds_from_header
    duration_s = best_duration(stream_s, None if _positive(stream_s) else _format_duration(path, 120), n_frames, fps)
    n_frames = n_frames or int(round(duration_s * fps))
    width, height = int(meta.width or 0), int(meta.height or 0)  # torchcodec reports the displayed size
    stored_width, stored_height = (height, width) if (meta.rotation or 0) % 180 == 90 else (width, height)
    if width <= 0 or height <= 0:
        raise ProbeError(f"{path}: video stream has no frame size ({width}x{height})")
    if decode_frames > 0:
        want = max(min(int(decode_frames), n_frames) if n_frames > 0 else 1, 1)
        try:
            decoded = int(decoder.get_frames_in_range(0, want).data.shape[0])
            error = ""
        except (RuntimeError, IndexError, ValueError) as exc:
            decoded, error = 0, first_line(exc)
        if decoded < want:
            raise ProbeError(f"{path}: ffmpeg cannot decode its first {decode_frames} frames "
                             f"({decoded} decoded): {error or 'no decoding error reported'}")  # fmt: skip
    return VideoInfo(
        duration_s=duration_s,
        fps=fps,
        n_frames=n_frames,
        width=width,
        height=height,
        stored_width=stored_width,
        stored_height=stored_height,
    )


def _probe_ffprobe(path: Path, decode_frames: int, timeout_s: float) -> VideoInfo:
    """The same facts and check from one ffprobe process (the path without torchcodec)."""
    entries = (
        "stream=width,height,avg_frame_rate,r_frame_rate,nb_frames,duration:stream_tags=rotate:"
        "stream_side_data=rotation:format=duration"
    )
    cmd = ["ffprobe", "-v", "error", "-select_streams", "v:0", "-print_format", "json", "-show_entries", entries]
    if decode_frames > 0:  # one process reads the stream facts and decodes the first frames (half the cost of two)
        cmd[-1] += ":frame=key_frame"
        cmd += ["-read_intervals", f"%+#{int(decode_frames)}"]
    cmd.append(str(path))
    res = _run_ffprobe(cmd, path, timeout_s)
    if decode_frames > 0 and not res.stderr.strip() and not (json.loads(res.stdout or "{}").get("frames")):
        # the first packets decoded to nothing and said nothing: an edit list hides a lead-in (an MP4 cut without
        # re-encoding starts at the GOP's keyframe and shows from the cut). Read past it, up to a long GOP.
        cmd[cmd.index("-read_intervals") + 1] = f"%+#{int(decode_frames) + 300}"
        res = _run_ffprobe(cmd, path, timeout_s)
    info = json.loads(res.stdout or "{}")
    streams = info.get("streams") or []
    if not streams:
        raise ProbeError(f"{path}: ffprobe finds no video stream")
    st = streams[0]
    fps = _rate(st.get("avg_frame_rate")) or _rate(st.get("r_frame_rate"))
    nb = st.get("nb_frames")
    n_frames = int(nb) if nb not in (None, "N/A") else _count_packets(path, timeout_s)
    duration_s = best_duration(st.get("duration"), (info.get("format") or {}).get("duration"), n_frames, fps)
    n_frames = n_frames or int(round(duration_s * fps))
    width, height = int(st.get("width") or 0), int(st.get("height") or 0)
    if width <= 0 or height <= 0:
        raise ProbeError(f"{path}: video stream has no frame size ({width}x{height})")
    stored_width, stored_height = width, height
    if display_rotation(st) % 180 == 90:
        width, height = height, width
    if decode_frames > 0:
        decoded = len(info.get("frames") or [])
        want = min(int(decode_frames), n_frames) if n_frames > 0 else 1
        if res.stderr.strip() or decoded < max(want, 1):
            raise ProbeError(f"{path}: ffmpeg cannot decode its first {decode_frames} frames "
                             f"({decoded} decoded): {_tail(res.stderr) or 'no decoding error reported'}")  # fmt: skip
    return VideoInfo(
        duration_s=duration_s,
        fps=fps,
        n_frames=n_frames,
        width=width,
        height=height,
        stored_width=stored_width,
        stored_height=stored_height,
    )


def _positive(value) -> float:
    """A duration as ffprobe or torchcodec gives it ("10.000000", "N/A", None, 0.0) -> seconds, 0.0 when unusable."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return 0.0
    return seconds if seconds > 0 and seconds == seconds and seconds != float("inf") else 0.0


def best_duration(stream_s, format_s, n_frames: int, fps: float) -> float:
    """The video's duration in seconds: the video stream's, else the container's (ffprobe's format duration:
    Matroska and WebM carry no per-stream duration), else the frames counted × 1 / frame rate; 0.0 only when none
    is known (never for a decodable video with a frame rate)."""
    for value in (stream_s, format_s):
        if _positive(value):
            return _positive(value)
    return n_frames / fps if n_frames > 0 and fps > 0 else 0.0


def _format_duration(path: Path, timeout_s: float) -> float:
    """The container's duration (ffprobe's format=duration), 0.0 when it has none or ffprobe cannot read it."""
    cmd = ["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", str(path)]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except (subprocess.TimeoutExpired, OSError):
        return 0.0
    return _positive((res.stdout or "").strip()) if res.returncode == 0 else 0.0


def _count_packets(path: Path, timeout_s: float) -> int:
    """The video stream's packets, counted by demuxing the file (no decoding): the frame count of a container without
    one in its header (Matroska, WebM). 0 when ffprobe cannot count them."""
    cmd = ["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_packets", "-show_entries",
           "stream=nb_read_packets", "-of", "csv=p=0", str(path)]  # fmt: skip
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
        return int((res.stdout or "0").strip().split(",")[0] or 0) if res.returncode == 0 else 0
    except (subprocess.TimeoutExpired, ValueError):
        return 0


def _run_ffprobe(cmd: list[str], path: Path, timeout_s: float) -> subprocess.CompletedProcess:
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        raise ProbeError(f"{path}: ffprobe took longer than {timeout_s} s") from exc
    if res.returncode != 0:
        raise ProbeError(f"{path}: ffprobe cannot read it: {_tail(res.stderr) or 'exit code ' + str(res.returncode)}")
    return res


def display_rotation(stream: dict) -> int:
    """Degrees (0, 90, 180, 270) an ffprobe stream entry says to turn the picture: its display matrix side data, else
    the older `rotate` tag."""
    rotation = next((d["rotation"] for d in stream.get("side_data_list") or [] if "rotation" in d), None)
    if rotation is None:
        rotation = (stream.get("tags") or {}).get("rotate")
    try:
        return int(round(float(rotation or 0))) % 360
    except (TypeError, ValueError):
        return 0
