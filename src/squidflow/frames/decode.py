"""Decoding frames by seeking: the frames at given ranks of a video's frame table, without decoding all of it.

The frame table (every frame's timestamp and keyframe flag, from one demuxing pass, no decoding) and the choice of
decoder are `squidflow.frames.frame_table`.

Which decoder serves which mode (`frames.decoder: auto`). `benchmarks/frames.py` times squidflow's two decoders and
the peer torchcodec (seek_mode exact/approximate × one FFmpeg thread/FFmpeg's threading) on the same frames of a
10-minute 720p H.264 video (GOP 250, B-frames) in one run, and checks every frame against OpenCV; on 2 shared cores
(load 2) squidflow took 0.26 s for `even` (the fastest peer, torchcodec exact: 0.29 s), 2.0 s for `exact_times`
(4.9 s) and 0.49 s for 6 scattered `exact` frames (0.83 s). torchcodec's approximate mode numbers frames from the
header's frame rate and gets a variable-frame-rate video wrong, so it is no peer for the release's frame numbers.

* every mode — **torchcodec**, in process, handed squidflow's frame table (no second scan of the file, and frames
  matched to table rows by their timestamps, so the numbering is the table's by construction). The sorted frames
  are cut into contiguous runs of about equal decoding cost (frames from each run's keyframe), one run per worker
  thread (torchcodec releases the GIL while it demuxes and decodes).
  - a target that is the only one of its GOP and is a keyframe — even mode's targets, almost always — is decoded
    with torchcodec's blocks: seek, send the keyframe's packet, drain the decoder. One packet per frame, where
    `VideoDecoder.get_frames_at` waits out the decoder's reordering delay (B-frames) and decodes the frames behind
    the keyframe too: 2.5× less decoding, which is why even mode beats every peer and not only on parallelism.
  - every other frame: `VideoDecoder(seek_mode="approximate").get_frames_played_at` at the frame's own timestamp —
    the container's index seeks, torchcodec's C++ loop decodes forward (continuing between frames of one GOP, with
    FFmpeg frame threads, which cost no extra work on a GOP-long decode). A frame that comes back with another
    timestamp (a container whose frame durations lie, such as the variable-frame-rate test video) is decoded again
    from its keyframe with the blocks.
* the keyframe-aware choice of targets in even mode is squidflow's own (no peer has it): for 36 frames of the test
  video it decodes 36 packets instead of ~4,500 frames — 13–19× faster than torchcodec decoding the 36 exact-time
  frames.
* **ffmpeg CLI** (`frames.decoder: ffmpeg`, and automatically when torchcodec cannot load its FFmpeg libraries):
  ffmpeg seeks (input `-ss`, `-seek_timestamp 1` so the position is the stream's own timestamp, `-copyts` so
  decoded frames keep their timestamps) to the last keyframe at or before frame k, decodes forward, and a `select`
  filter keeps the first frame whose time is at or past the midpoint between frames k−1 and k, so rounding can
  never pick a neighbour. Up to `frames_per_call` frames share one ffmpeg process (one seeking input per frame,
  `-noaccurate_seek`: the select filter does the exact part), a few such processes run at once.

* **repeated timestamps** (a time base too coarse for the frame rate, a muxer that repeats them): a timestamp
  cannot name such a frame, so both decoders read the stream from its start and frame k is the k-th frame the
  decoder delivers, as OpenCV counts (`decode_in_output_order`); a frame never delivered is an error, never its
  neighbour. tests/unit/frames/test_frames_timestamps.py checks every frame of such files (and of an edit list) with both.

Both decoders are verified against OpenCV (PSNR >= 40 dB and closer to frame k than to k±1) on constant and
variable frame rate H.264 with B-frames, a stream starting at 5 s, Matroska, VP9/WebM and a video with rotation
metadata (tests/unit/frames/test_frames.py). Limit: a stream whose first frames cannot be decoded (a cut open-GOP start) has
packets OpenCV never delivers, so its numbering would differ by those frames.

Frames are returned as RGB uint8 arrays of the displayed size: rotation metadata (phone videos) is applied, as
OpenCV applies it. The release's letterbox rule (`letterbox`) pads frames narrower than 1.74:1 with black to 1.78:1.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import ffmpeg
import numpy as np

from squidflow.errors import first_line
from squidflow.frames.frame_table import (
    ExtractionError,
    FrameTable,
    _stderr,
    frame_table,
    resolve_decoder,
    video_stream,
)

log = logging.getLogger("squidflow.frames.decode")


def _seek_args(table: FrameTable, rank: int) -> tuple[float, float]:
    """(seek position, select threshold) in seconds of stream time for frame `rank`."""
    tb = float(table.time_base)
    kpos = np.searchsorted(table.keyframe_ranks, rank, side="right") - 1
    key_rank = int(table.keyframe_ranks[kpos]) if kpos >= 0 else 0
    # seek a hair past the keyframe's own time: the demuxer lands on the last keyframe at or before it
    seek = table.pts[key_rank] * tb + 1e-4 if kpos >= 0 else 0.0
    if rank == 0:
        threshold = table.pts[0] * tb - 1.0
    else:
        threshold = (table.pts[rank - 1] + table.pts[rank]) / 2 * tb
    return seek, threshold


MAX_PIXELS = 4096 * 4096  # a decoded frame above this (8K and up) takes gigabytes across the decoder's threads


def check_resolution(table: FrameTable) -> None:
    """An ExtractionError naming the video and its size when a frame has more than MAX_PIXELS pixels."""
    if table.width * table.height > MAX_PIXELS:
        raise ExtractionError(
            f"{table.path}: resolution {table.width}x{table.height} is above the decoding cap of "
            f"{MAX_PIXELS:,} pixels per frame; re-encode the video at a lower resolution"
        )


def decode_ranks(
    table: FrameTable,
    ranks: Sequence[int],
    *,
    frames_per_call: int = 12,
    workers: int | None = None,
    decoder: str = "auto",
) -> list[np.ndarray]:
    """Decode the frames at presentation ranks `ranks` (RGB uint8, displayed size), in the order given.

    `workers` (default: the CPUs this process may use) decoders run at once, each single-threaded, which beats
    frame-threading one decoder because every seek restarts the decoder's pipeline. torchcodec: one in-process
    demuxer and decoder per contiguous run of frames. ffmpeg CLI: up to `frames_per_call` frames share one ffmpeg
    process.
    """
    ranks = [int(r) for r in ranks]
    bad = [r for r in ranks if not 0 <= r < table.n_frames]
    if bad:
        raise ExtractionError(
            f"{table.path}: frame number(s) {bad} out of range (the video has {table.n_frames} frames)"
        )
    check_resolution(table)
    unique = sorted(set(ranks))  # each frame decoded once, in presentation order
    if not unique:
        return []
    workers = max(1, workers or len(os.sched_getaffinity(0)))
    if table.repeated_pts:  # timestamps cannot name these frames: count the decoder's output as OpenCV does
        decoded = decode_in_output_order(table, unique, decoder=decoder)
        return [decoded[r] for r in ranks]
    if resolve_decoder(decoder) == "torchcodec":
        decoded = _decode_torchcodec(table, unique, workers=workers)
        return [decoded[r] for r in ranks]
    per_call = max(1, min(frames_per_call, math.ceil(len(unique) / workers)))
    batches = [unique[i : i + per_call] for i in range(0, len(unique), per_call)]
    decoded = {}
    with ThreadPoolExecutor(max_workers=min(workers, len(batches) or 1)) as pool:
        for batch, frames in zip(batches, pool.map(lambda b: _decode_call(table, b), batches), strict=True):
            decoded.update(zip(batch, frames, strict=True))
    return [decoded[r] for r in ranks]


def decoding_costs(table: FrameTable, ranks: Sequence[int]) -> np.ndarray:
    """Frames a decoder walking the sorted `ranks` in order decodes for each: from the frame's keyframe, or from the
    previous rank when that one lies in the same GOP (the decoder just keeps going forward)."""
    at = np.asarray(ranks, dtype=np.int64)
    keys = table.keyframe_ranks[np.maximum(np.searchsorted(table.keyframe_ranks, at, side="right") - 1, 0)]
    keys = np.where(at >= keys, keys, 0)  # frames before the first keyframe decode from the start
    costs = at - keys + 1
    if len(at) > 1:
        same_gop = keys[1:] == keys[:-1]
        costs[1:] = np.where(same_gop, at[1:] - at[:-1], costs[1:])
    return costs


def split_runs(costs: np.ndarray, n: int) -> list[slice]:
    """Cut a sequence into at most `n` contiguous runs of about equal total cost (each run non-empty)."""
    n = max(1, min(n, len(costs)))
    cum = np.cumsum(costs, dtype=np.float64)
    bounds = [0]
    for i in range(1, n):
        target = cum[-1] * i / n
        j = int(np.searchsorted(cum, target, side="left"))  # cum[j] is the first running total >= target
        cut = j if j > 0 and target - cum[j - 1] <= cum[j] - target else j + 1  # end the run nearer the target
        cut = min(max(cut, bounds[-1] + 1), len(costs) - (n - i))
        bounds.append(cut)
    bounds.append(len(costs))
    return [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


def _stream_seconds(table: FrameTable) -> np.ndarray:
    """Every frame's pts in seconds as torchcodec computes a decoded frame's (pts × num / den in double precision),
    so that decoded frames are matched to table rows by value."""
    return table.pts.astype(np.float64) * table.time_base.numerator / table.time_base.denominator


def _rank_at(seconds: np.ndarray, t: float) -> int | None:
    """The table row whose time is `t` (nearest, and nearer than half the gap to its neighbours), or None."""
    i = int(np.searchsorted(seconds, t))
    best = min((j for j in (i - 1, i) if 0 <= j < len(seconds)), key=lambda j: abs(seconds[j] - t), default=None)
    if best is None:
        return None
    gaps = [abs(seconds[j] - seconds[best]) for j in (best - 1, best + 1) if 0 <= j < len(seconds)]
    return best if abs(seconds[best] - t) < 0.5 * min((g for g in gaps if g > 0), default=1.0) else None


def _decode_torchcodec(table: FrameTable, unique: list[int], *, workers: int) -> dict[int, np.ndarray]:
    runs = [unique[sl] for sl in split_runs(decoding_costs(table, unique), workers)]
    decoded: dict[int, np.ndarray] = {}
    if len(runs) == 1:
        decoded.update(_decode_run(table, runs[0], workers))
        return decoded
    with ThreadPoolExecutor(max_workers=len(runs)) as pool:  # torchcodec releases the GIL while it demuxes/decodes
        for frames in pool.map(lambda run: _decode_run(table, run, workers), runs):
            decoded.update(frames)
    return decoded


def _decode_run(table: FrameTable, run: list[int], threads: int) -> dict[int, np.ndarray]:
    """Decode the sorted frames `run` (one worker's share) with torchcodec; forward decoding may use `threads`
    FFmpeg frame threads (a GOP-long decode fills the pipeline once per seek: they cost no extra work, and keep the
    cores busy while another worker waits on its seek).

    * A GOP whose only wanted frame is its keyframe (most targets of even mode): torchcodec's blocks — seek, send the
      keyframe's packet, drain the decoder — so the frame comes out at once instead of after the decoder's
      reordering delay, and the frames behind it are never decoded: one packet per target.
    * Every other frame: `VideoDecoder(seek_mode="approximate").get_frames_played_at` at the frame's own timestamp
      (from squidflow's table, so no second scan of the file): the container's index seeks to the keyframe at or
      before it and torchcodec's C++ loop decodes forward, continuing between frames of one GOP. Each frame that
      comes back is checked against the table by its timestamp; one that is not the frame asked for (a container
      whose frame durations lie) is decoded again with the blocks, frame by frame from its keyframe.
    """
    seconds = _stream_seconds(table)
    key_pos = np.searchsorted(table.keyframe_ranks, run, side="right") - 1
    gops: dict[int, list[int]] = {}
    for k, kp in zip(run, key_pos, strict=True):
        gops.setdefault(int(table.keyframe_ranks[kp]) if kp >= 0 else -1, []).append(k)
    keyframes_alone = {key: wanted for key, wanted in gops.items() if wanted == [key]}
    forward = [k for key, wanted in gops.items() if key not in keyframes_alone for k in wanted]
    out: dict[int, np.ndarray] = {}
    retry: list[int] = []
    if forward:
        out.update(_decode_played_at(table, seconds, forward, threads))
        retry = [k for k in forward if k not in out]
    if keyframes_alone or retry:
        out.update(_decode_blocks(table, seconds, keyframes_alone, retry, threads if retry else 1))
    return out


def _decode_played_at(table: FrameTable, seconds: np.ndarray, ranks: list[int], threads: int) -> dict[int, np.ndarray]:
    """The frames of `ranks` that torchcodec's approximate-mode decoder returns with their own timestamp."""
    from torchcodec.decoders import VideoDecoder

    gaps = np.diff(seconds, append=seconds[-1] + 1.0)
    at = [float(seconds[k] + min(1e-6, gaps[k] / 4)) for k in ranks]  # inside frame k's display interval
    try:
        dec = VideoDecoder(
            table.path,
            stream_index=table.stream_index,
            seek_mode="approximate",
            device="cpu",
            dimension_order="NHWC",
            num_ffmpeg_threads=threads,
        )
        batch = dec.get_frames_played_at(at)
    except (RuntimeError, ValueError, IndexError) as exc:
        log.info("%s: approximate-mode decoding failed (%s); decoding frame by frame", table.path, first_line(exc))
        return {}
    frames = batch.data.numpy()
    return {k: frames[i] for i, k in enumerate(ranks) if _rank_at(seconds, float(batch.pts_seconds[i])) == k}


def _open_blocks(table: FrameTable, threads: int):
    """torchcodec's blocks for the table's stream: demuxer, stream, packet decoder (CPU, `threads` ffmpeg threads)
    and colour converter; a video they cannot open is an ExtractionError naming it."""
    from torchcodec.decoders import ColorConverter, Demuxer

    try:
        demuxer = Demuxer(table.path, streams=table.stream_index)
        stream = video_stream(demuxer, table.path)
        decoder = stream.make_decoder(device="cpu", num_ffmpeg_threads=threads)
        converter = ColorConverter(device="cpu")
    except (RuntimeError, ValueError) as exc:
        raise ExtractionError(f"{table.path}: torchcodec could not open the video: {first_line(exc)}") from exc
    return demuxer, stream, decoder, converter


def _by_keyframe(table: FrameTable, keyframes_alone: dict[int, list[int]], ranks: list[int]) -> dict[int, list[int]]:
    """keyframe rank (-1: before the first keyframe) -> the ranks decoded forward from it, `keyframes_alone` kept."""
    gops = dict(keyframes_alone)
    key_pos = np.searchsorted(table.keyframe_ranks, ranks, side="right") - 1
    for k, kp in zip(ranks, key_pos, strict=True):
        gops.setdefault(int(table.keyframe_ranks[kp]) if kp >= 0 else -1, []).append(k)
    return gops


def _decode_blocks(
    table: FrameTable, seconds: np.ndarray, keyframes_alone: dict[int, list[int]], ranks: list[int], threads: int
) -> dict[int, np.ndarray]:
    """Frames by torchcodec's blocks (demuxer, packet decoder, colour converter), matched to the table by pts: the
    keyframes of `keyframes_alone` one packet each, and `ranks` by decoding forward from their keyframes."""
    demuxer, stream, decoder, converter = _open_blocks(table, threads)
    bad_packets: list[str] = []

    def frames_from(key: int, only_first: bool):
        if key >= 0:  # a hair past the keyframe's own time: the demuxer lands on the last keyframe at or before it
            gap = seconds[key + 1] - seconds[key] if key + 1 < len(seconds) else 1.0
            demuxer.seek(float(seconds[key] + min(1e-4, gap / 4)), stream=stream)
        else:  # frames before the first keyframe the packets flag: from the start
            demuxer.seek(float(seconds[0]), stream=stream)
        decoder.reset()
        for packet in demuxer:
            try:
                yield from decoder.decode(packet)
            except RuntimeError as exc:  # a damaged packet: skipped, as the ffmpeg CLI and OpenCV skip it
                bad_packets.append(first_line(exc))
            if only_first:
                break
        yield from decoder.drain()

    gops = _by_keyframe(table, keyframes_alone, ranks)
    out: dict[int, np.ndarray] = {}
    try:
        for key in sorted(gops):
            wanted = sorted(set(gops[key]))
            for only_first in (True, False) if wanted == [key] else (False,):
                missing = set(wanted)
                for raw in frames_from(key, only_first):
                    rank = _rank_at(seconds, raw.pts_seconds)
                    if rank in missing:
                        out[rank] = converter.convert(raw).data.permute(1, 2, 0).numpy()  # HWC, contiguous
                        missing.discard(rank)
                        if not missing:
                            break
                if not missing:
                    break
            if missing:
                why = f" ({len(bad_packets)} damaged packets, e.g. {bad_packets[0]})" if bad_packets else ""
                raise ExtractionError(
                    f"{table.path}: the decoder never delivered frame(s) {sorted(missing)}{why}; "
                    "the file may be truncated or corrupt"
                )
    except RuntimeError as exc:
        if isinstance(exc, ExtractionError):
            raise
        raise ExtractionError(
            f"{table.path}: torchcodec could not decode frames {sorted(out)}: {first_line(exc)}; "
            "the file may be truncated or corrupt"
        ) from exc
    if bad_packets:
        log.warning(
            "%s: %d damaged packets skipped while decoding (e.g. %s)", table.path, len(bad_packets), bad_packets[0]
        )
    return out


def _decode_call(table: FrameTable, ranks: Sequence[int]) -> list[np.ndarray]:
    if not ranks:
        return []
    chains = []
    for r in ranks:
        seek, threshold = _seek_args(table, r)
        opts = {"ss": f"{seek:.6f}", "seek_timestamp": 1} if seek > 0 else {}
        inp = ffmpeg.input(table.path, noaccurate_seek=None, threads=1, **opts)
        chains.append(
            inp.video.filter("select", f"gte(t,{threshold:.6f})").filter("trim", end_frame=1).filter("setpts", "N")
        )
    stream = chains[0] if len(chains) == 1 else ffmpeg.concat(*chains, v=1, a=0)
    cmd = stream.output("pipe:", format="rawvideo", pix_fmt="rgb24", vsync="passthrough").global_args(
        "-copyts", "-nostdin", "-loglevel", "error"
    )
    try:
        raw, _ = cmd.run(capture_stdout=True, capture_stderr=True)
    except ffmpeg.Error as exc:
        raise ExtractionError(f"{table.path}: ffmpeg could not decode frames {list(ranks)}: {_stderr(exc)}") from exc
    width, height = table.display_size  # the ffmpeg CLI applies rotation metadata (autorotate), as OpenCV does
    size = width * height * 3
    if len(raw) != size * len(ranks):
        raise ExtractionError(
            f"{table.path}: expected {len(ranks)} frame(s) of {width}x{height} from ffmpeg, got "
            f"{len(raw) / size:.2f}; the file may be truncated or corrupt"
        )
    arr = np.frombuffer(raw, np.uint8).reshape(len(ranks), height, width, 3)
    return [a.copy() for a in arr]


# --- files whose timestamps do not tell frames apart: decode from the start, count what the decoder delivers -------
def decode_in_output_order(table: FrameTable, ranks: Sequence[int], *, decoder: str = "auto") -> dict[int, np.ndarray]:
    """{rank: frame} for a video with repeated timestamps (`FrameTable.repeated_pts`): one decoder reads the stream
    from its start and frame k is the k-th frame it delivers — OpenCV's sequential reader's frame k by construction.
    Costs a decode of the stream up to the last wanted frame (no seeking: a seek by timestamp cannot tell the frames
    of one timestamp apart). A decoder that delivers fewer frames than the table lists is an ExtractionError naming
    the frames it never delivered — never a neighbour's frame in their place."""
    wanted = sorted({int(r) for r in ranks})
    if not wanted:
        return {}
    if resolve_decoder(decoder) == "torchcodec":
        out = _output_order_torchcodec(table, wanted)
    else:
        out = _output_order_ffmpeg(table, wanted)
    missing = [k for k in wanted if k not in out]
    if missing:
        raise ExtractionError(
            f"{table.path}: several frames share a timestamp, and decoding from the start delivered "
            f"no frame(s) {missing[:10]}; the file may be truncated or corrupt"
        )
    return out


def _output_order_torchcodec(table: FrameTable, wanted: list[int]) -> dict[int, np.ndarray]:
    from torchcodec.decoders import ColorConverter, Demuxer

    try:
        demuxer = Demuxer(table.path, streams=table.stream_index)
        stream = video_stream(demuxer, table.path)
        decoder = stream.make_decoder(device="cpu", num_ffmpeg_threads=1)
        converter = ColorConverter(device="cpu")
    except (RuntimeError, ValueError) as exc:
        raise ExtractionError(f"{table.path}: torchcodec could not open the video: {first_line(exc)}") from exc
    bad_packets: list[str] = []

    def delivered():
        for packet in demuxer:
            try:
                yield from decoder.decode(packet)
            except RuntimeError as exc:  # a damaged packet: skipped, as the ffmpeg CLI and OpenCV skip it
                bad_packets.append(first_line(exc))
        yield from decoder.drain()

    want, last, out = set(wanted), wanted[-1], {}
    try:
        for n, raw in enumerate(delivered()):
            if n in want:
                out[n] = converter.convert(raw).data.permute(1, 2, 0).numpy()
            if n >= last:
                break
    except RuntimeError as exc:
        raise ExtractionError(f"{table.path}: torchcodec could not decode the stream: {first_line(exc)}") from exc
    if bad_packets:
        log.warning(
            "%s: %d damaged packets skipped while decoding (e.g. %s)", table.path, len(bad_packets), bad_packets[0]
        )
    return out


def _output_order_ffmpeg(table: FrameTable, wanted: list[int]) -> dict[int, np.ndarray]:
    import subprocess

    pick = "+".join(f"eq(n\\,{k})" for k in wanted)  # n: the number of the frame the decoder delivered, from 0
    cmd = ["ffmpeg", "-nostdin", "-loglevel", "error", "-threads", "1", "-i", table.path,
           "-map", f"0:{table.stream_index}", "-vf", f"select={pick}", "-frames:v", str(len(wanted)),
           "-vsync", "passthrough", "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:"]  # fmt: skip
    res = subprocess.run(cmd, capture_output=True)
    if res.returncode != 0:
        err = " | ".join(res.stderr.decode("utf-8", "replace").strip().splitlines()[-3:])
        raise ExtractionError(f"{table.path}: ffmpeg could not decode frames {wanted[:10]}: {err}")
    width, height = table.display_size
    size = width * height * 3
    got = len(res.stdout) // size
    arr = np.frombuffer(res.stdout[: got * size], np.uint8).reshape(got, height, width, 3)
    return {k: a.copy() for k, a in zip(wanted, arr, strict=False)}


def decode_frames(path: str | Path, frame_indices: Sequence[int], *, decoder: str = "auto") -> list[np.ndarray]:
    """Public: the decode-order frames `frame_indices` of `path` as OpenCV's sequential reader counts them.

    RGB uint8 arrays, in the order asked. Used by other stages (the training stage's standard data).
    """
    return decode_ranks(frame_table(path, decoder=decoder), frame_indices, decoder=decoder)


def letterbox(frame: np.ndarray, *, below: float = 1.74, to: float = 1.78) -> np.ndarray:
    """The SQUID-E release rule: a frame narrower than `below`:1 is padded with black on both sides to `to`:1."""
    h, w = frame.shape[:2]
    if h == 0 or w / h >= below:
        return frame
    new_w = int(math.ceil(h * to))
    left = (new_w - w) // 2
    out = np.zeros((h, new_w, *frame.shape[2:]), dtype=frame.dtype)
    out[:, left : left + w] = frame
    return out
