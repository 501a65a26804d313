"""A video's frame table: every frame of its first video stream, numbered as the SQUID-E release numbers frames
(SQUID-E supplement A.1: frame k is the k-th frame OpenCV's sequential reader delivers), and which decoder serves.

The frame table (both decoders): one demuxing pass over the packets of the first video stream (pts and keyframe flag,
no decoding), sorted by pts — exact for constant and variable frame rate alike because it uses the real timestamps,
never `k / fps`. torchcodec's scan (`torchcodec.decoders.Demuxer`, in process) builds it; without torchcodec,
`ffprobe -show_packets` does (a subprocess and a JSON document per video: 2–3× slower on a 10-minute video).
`frames.decoder: auto` takes torchcodec when it loads here, else the ffmpeg CLI (`resolve_decoder`). The frames at
given rows of the table are decoded by `squidflow.frames.decode`.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

import ffmpeg
import numpy as np

from squidflow.errors import first_line

if TYPE_CHECKING:
    from torchcodec.decoders import Demuxer, VideoStream

DECODERS = ("auto", "torchcodec", "ffmpeg")
log = logging.getLogger("squidflow.frames.frame_table")


class ExtractionError(RuntimeError):
    """A video could not be probed or decoded; the message names the file and ffmpeg's own words."""


@dataclass(frozen=True)
class FrameTable:
    """Every frame of a video's first video stream in presentation (= OpenCV's read) order."""

    path: str
    pts: np.ndarray  # int64, stream time base, sorted
    is_key: np.ndarray  # bool
    time_base: Fraction
    width: int  # coded size
    height: int
    keyframe_ranks: np.ndarray = field(repr=False)  # indices into pts of the keyframes
    stream_index: int = 0  # the stream's index in the container (all media types counted)
    rotation: int = 0  # degrees of display rotation from the container's metadata, 0/90/180/270

    @property
    def n_frames(self) -> int:
        return len(self.pts)

    @property
    def display_size(self) -> tuple[int, int]:
        """(width, height) of a decoded frame: the coded size, turned by a quarter rotation."""
        return (self.height, self.width) if self.rotation % 180 == 90 else (self.width, self.height)

    @property
    def repeated_pts(self) -> bool:
        """Several frames share a timestamp (a time base too coarse for the frame rate, or a muxer's repeats): the
        frames can then be told apart only by their place in the decoder's output, as OpenCV counts them."""
        return bool(len(self.pts) > 1 and np.any(np.diff(self.pts) <= 0))

    @property
    def times(self) -> np.ndarray:
        return self.pts.astype(np.float64) * float(self.time_base)

    @property
    def duration_s(self) -> float:
        t = self.times
        if len(t) < 2:
            return 0.0
        return float(t[-1] - t[0] + np.median(np.diff(t)))


@functools.cache
def torchcodec_error() -> str | None:
    """None when torchcodec and the FFmpeg libraries it needs load here; else why not (one line)."""
    try:
        import torchcodec.decoders  # noqa: F401 - loads libtorchcodec against the system's FFmpeg
    except Exception as exc:  # ImportError, or RuntimeError/OSError when no supported FFmpeg is found
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return None


def resolve_decoder(decoder: str = "auto") -> str:
    """`auto` -> torchcodec when it loads, else ffmpeg; an explicit torchcodec that cannot load is an error."""
    if decoder not in DECODERS:
        raise ValueError(f"frames.decoder = {decoder!r}: expected one of {DECODERS}")
    if decoder == "ffmpeg":
        return "ffmpeg"
    why = torchcodec_error()
    if why is None:
        return "torchcodec"
    if decoder == "torchcodec":
        raise ExtractionError(
            f"frames.decoder is 'torchcodec' but torchcodec cannot load ({why}); install the pinned "
            "torchcodec (requirements.lock) and an FFmpeg 4-8 with shared libraries, or set "
            "frames.decoder: ffmpeg"
        )
    log.info("torchcodec unavailable (%s): frames are decoded by the ffmpeg CLI", why)
    return "ffmpeg"


def frame_table(path: str | Path, *, decoder: str = "auto") -> FrameTable:
    """Read the packet index of the first video stream (no decoding) and return the frame table.

    torchcodec's in-process scan when it loads (`decoder` auto or torchcodec), else `ffprobe -show_packets`; both
    keep the same packets (not discarded, with a timestamp) in the same order, so the numbering is the same.
    """
    if resolve_decoder(decoder) == "torchcodec":
        return _frame_table_torchcodec(path)
    return _frame_table_ffprobe(path)


def _table(
    path,
    pts: np.ndarray,
    key: np.ndarray,
    time_base: Fraction,
    width: int,
    height: int,
    stream_index: int,
    rotation: float | None,
) -> FrameTable:
    if not len(pts):
        raise ExtractionError(f"{path}: the video stream has no frames")
    order = np.argsort(pts, kind="stable")
    pts, key = pts[order], key[order]
    return FrameTable(
        path=str(path),
        pts=pts,
        is_key=key,
        time_base=time_base,
        width=width,
        height=height,
        keyframe_ranks=np.flatnonzero(key),
        stream_index=stream_index,
        rotation=int(round(rotation or 0)) % 360,
    )


def video_stream(demuxer: Demuxer, path: str | Path) -> VideoStream:
    """The one stream a demuxer opened for a video stream's index, as torchcodec's VideoStream."""
    from torchcodec.decoders import VideoStream

    stream = demuxer.streams[0]
    if not isinstance(stream, VideoStream):
        raise ExtractionError(f"{path}: the stream opened is a {type(stream).__name__}, not a video stream")
    return stream


def _frame_table_torchcodec(path: str | Path) -> FrameTable:
    from torchcodec.decoders import Demuxer, VideoStreamHeaderMetadata, get_container_metadata

    try:
        streams = [
            m
            for m in get_container_metadata(str(path)).streams
            if m.media_type == "video" and isinstance(m, VideoStreamHeaderMetadata)
        ]
        if not streams:
            raise ExtractionError(f"{path}: no video stream")
        meta = streams[0]  # the first video stream, as ffprobe's v:0
        index = video_stream(Demuxer(str(path), streams=meta.stream_index), path).scan()
    except (RuntimeError, ValueError) as exc:
        raise ExtractionError(f"{path}: torchcodec could not read the packets: {first_line(exc)}") from exc
    # the scan's integer timestamps and time base (FrameIndex keeps them beside its float seconds)
    pts = index._pts.numpy().astype(np.int64)
    time_base = Fraction(int(index._time_base_num), int(index._time_base_den))
    rotation = int(round(meta.rotation or 0)) % 360
    width, height = int(meta.width or 0), int(meta.height or 0)  # torchcodec reports the displayed (turned) size
    if rotation % 180 == 90:
        width, height = height, width
    return _table(
        path, pts, index.is_key_frame.numpy().astype(bool), time_base, width, height, int(meta.stream_index), rotation
    )


def _frame_table_ffprobe(path: str | Path) -> FrameTable:
    try:
        info = ffmpeg.probe(
            str(path),
            select_streams="v:0",
            show_entries="packet=pts,flags:stream=index,width,height,time_base:stream_tags=rotate:stream_side_data=rotation",
        )
    except ffmpeg.Error as exc:
        raise ExtractionError(f"{path}: ffprobe failed: {_stderr(exc)}") from exc
    streams = info.get("streams") or []
    if not streams:
        raise ExtractionError(f"{path}: no video stream")
    st = streams[0]
    pts, key = [], []
    for p in info.get("packets") or []:
        flags = p.get("flags", "")
        if "pts" not in p or p["pts"] in (None, "N/A") or "D" in flags:
            continue
        pts.append(int(p["pts"]))
        key.append("K" in flags)
    rotation = next((float(d["rotation"]) for d in st.get("side_data_list") or [] if "rotation" in d), None)
    if rotation is None and (st.get("tags") or {}).get("rotate"):
        rotation = float(st["tags"]["rotate"])
    return _table(
        path,
        np.asarray(pts, dtype=np.int64),
        np.asarray(key, dtype=bool),
        Fraction(st["time_base"]),
        int(st["width"]),
        int(st["height"]),
        int(st.get("index", 0)),
        rotation,
    )


def _stderr(exc: ffmpeg.Error) -> str:
    lines = (exc.stderr or b"").decode("utf-8", "replace").splitlines()
    text = [ln.strip() for ln in lines if ln.strip() and not ln.startswith(" ")]  # drop the indented banner
    return " | ".join(text[-3:]) or str(exc)
