"""The offline demo corpus: synthetic event videos whose every frame's content is known exactly.

Real event videos mix frames that plainly show the event with frames that do not: the camera drifts to another
scene, someone walks in front of the lens, the picture blurs, goes dark or black, the editor cuts away. SQUID-E's
whole point is that people's certainty varies over such frames, so the demo corpus has them too, and — unlike real
videos — we know for each frame how much of each event is visible (`schemas.TRUTH`).

To make that truth exact, each video is planned in Python first (`plan_video`: a schedule of clean stretches and
ambiguous stretches with their per-frame parameters), then rendered: each event's scene is an ffmpeg lavfi graph
(`squidflow.demo.scenes`), streamed as raw frames; the schedule is applied frame by frame (blend, occluding bar, Gaussian
blur, brightness, black, cut) and the result is piped into libx264. The evidence of a frame is computed from the same
numbers that made it:

| condition  | what the frame is                                   | evidence                                   |
|------------|-----------------------------------------------------|--------------------------------------------|
| clean      | the video's own scene                               | own = 1                                    |
| crossfade  | (1 - a) * own scene + a * another event's scene     | own = 1 - a, other = a                     |
| occlusion  | a grey bar covers a fraction f of the frame         | own = 1 - f (the visible fraction)         |
| blur       | Gaussian blur with sigma = b * sigma_max             | own = 1 - BLUR_LOSS * b                    |
| dark       | pixel values times k                                 | own = k                                    |
| black      | all zeros                                           | none                                       |
| cut        | another event's scene                               | other = 1                                  |

Videos are H.264 (yuv420p, GOP `gop` frames, 2 B-frames, +faststart). One video of the corpus has a variable frame
rate and one is shorter than 36 frames, so that the frame stage's seeking and short-video paths are exercised. The
pts in the truth table are read back from the encoded file with ffprobe (and checked against the plan).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from squidflow.config.validation import defaults_from_schema, from_section
from squidflow.demo import scenes
from squidflow.demo.text import describe_video

CONDITIONS = ("clean", "crossfade", "occlusion", "blur", "dark", "black", "cut")
AMBIGUOUS = ("crossfade", "black", "occlusion", "dark", "blur", "cut")  # priority order when a video is short
SHORT_VIDEO_FRAMES = 30  # the corpus' one short video (< 36 frames, the frame stage's short-video path)
BLUR_LOSS = 0.6  # evidence lost at the strongest blur
OCCLUDER_RGB = (58, 58, 58)
VFR_RATE_FACTORS = (1.0, 0.6, 1.0)  # the variable-frame-rate video: thirds at fps, 0.6 * fps, fps
PTS_TIMESCALE = 90000

# Nominal lengths (frames at 25 fps for a 300-frame video) of each ambiguous stretch, and the shortest useful length.
_BASE_LEN = {"crossfade": 36, "occlusion": 26, "blur": 24, "dark": 26, "black": 6, "cut": 16}
_MIN_LEN = {"crossfade": 5, "occlusion": 4, "blur": 4, "dark": 4, "black": 2, "cut": 3}


@dataclass(frozen=True)
@defaults_from_schema("demo")
class DemoConfig:
    """The `demo:` config section (defaults and bounds: workflow/schemas/config.schema.yaml)."""

    events: tuple[str, ...]
    videos_per_event: int
    seconds: float
    width: int
    height: int
    fps: float
    seed: int
    gop: int
    crf: int

    @classmethod
    def from_config(cls, section: dict[str, Any]) -> DemoConfig:
        return from_section(cls, section, strict=True)

    @property
    def n_frames(self) -> int:
        return max(1, round(self.seconds * self.fps))


def video_ids(cfg: DemoConfig) -> list[str]:
    """Every demo video id, `{event}_{i:02d}`, in corpus order (a function of the config alone)."""
    return [f"{e}_{i:02d}" for e in cfg.events for i in range(cfg.videos_per_event)]


def video_event(cfg: DemoConfig, video_id: str) -> str:
    if video_id not in video_ids(cfg):
        raise ValueError(
            f"'{video_id}' is not a demo video of this config; demo videos are {video_ids(cfg)} "
            "(from demo.events and demo.videos_per_event)"
        )
    return video_id.rsplit("_", 1)[0]


def vfr_video_id(cfg: DemoConfig) -> str:
    """The corpus' variable-frame-rate video: the second video (never the short one)."""
    return video_ids(cfg)[1]


def short_video_id(cfg: DemoConfig) -> str:
    """The corpus' short video (fewer than 36 frames): the last one."""
    return video_ids(cfg)[-1]


def _rng(cfg: DemoConfig, video_id: str, purpose: str) -> np.random.Generator:
    """A generator that depends on the seed, the video and what it is for, never on Python's hash salt."""
    return np.random.default_rng([cfg.seed, zlib.crc32(video_id.encode()), zlib.crc32(purpose.encode())])


# --- the plan ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FrameOp:
    """What one frame shows: a condition, the other event involved (crossfade, cut) and the condition's amount."""

    condition: str
    other: str | None = None
    amount: float = 0.0  # crossfade: weight a of the other scene; occlusion: fraction f of the frame covered;
    # blur: strength b in [0, 1]; dark: brightness factor k
    occluder: tuple[str, int] | None = None  # occlusion: (side, bar size in pixels)

    def other_event(self) -> str:
        """The other event a cut or crossfade shows."""
        if self.other is None:
            raise ValueError(f"a {self.condition} frame needs the other event it shows")
        return self.other


@dataclass(frozen=True)
class VideoPlan:
    video_id: str
    event: str
    events: tuple[str, ...]
    width: int
    height: int
    fps: float
    gop: int
    crf: int
    pts_s: tuple[float, ...]
    ops: tuple[FrameOp, ...]
    scenes: dict[str, scenes.Scene] = field(hash=False)
    scene_seeds: dict[str, int] = field(hash=False)
    vfr: bool = False

    @property
    def n_frames(self) -> int:
        return len(self.ops)


def _ramp(n: int, peak: float, rng: np.random.Generator) -> list[float]:
    """A trapezoid from ~0 up to `peak`, held, and back: the amount of an effect over its `n` frames."""
    up = max(1, int(n * rng.uniform(0.25, 0.4)))
    down = max(1, int(n * rng.uniform(0.25, 0.4)))
    hold = n - up - down
    if hold < 0:
        up, down, hold = (n + 1) // 2, n // 2, 0
    vals = (
        [peak * (i + 1) / (up + 1) for i in range(up)]
        + [peak] * hold
        + [peak * (down - i) / (down + 1) for i in range(down)]
    )
    return vals[:n]


def _stretch_lengths(n_frames: int, fps: float, rng: np.random.Generator) -> list[tuple[str, int]]:
    """Which ambiguous stretches a video gets and how long each is; about 45% of frames stay clean."""
    scale = n_frames / 300.0
    kinds = list(AMBIGUOUS)
    lengths = {k: max(_MIN_LEN[k], round(_BASE_LEN[k] * scale * rng.uniform(0.8, 1.25))) for k in kinds}
    while kinds and sum(lengths[k] for k in kinds) > 0.55 * n_frames:
        kinds.pop()  # drop the least important kind (AMBIGUOUS is in priority order)
    order = [kinds[i] for i in rng.permutation(len(kinds))]
    return [(k, lengths[k]) for k in order]


def _ops_for(
    kind: str, n: int, others: Sequence[str], width: int, height: int, rng: np.random.Generator
) -> list[FrameOp]:
    if kind == "clean":
        return [FrameOp("clean")] * n
    if kind == "black":
        return [FrameOp("black")] * n
    if kind == "cut":
        return [FrameOp("cut", other=str(rng.choice(others)))] * n
    if kind == "crossfade":
        other = str(rng.choice(others))
        peak = float(rng.choice([1.0, 1.0, rng.uniform(0.5, 0.9)]))  # often all the way into the other scene
        return [FrameOp("crossfade", other=other, amount=a) for a in _ramp(n, peak, rng)]
    if kind == "occlusion":
        side = str(rng.choice(["left", "right", "bottom"]))
        full = height if side == "bottom" else width
        peak = float(rng.uniform(0.4, 0.85))
        return [
            FrameOp("occlusion", amount=max(1, round(f * full)) / full, occluder=(side, max(1, round(f * full))))
            for f in _ramp(n, peak, rng)
        ]
    if kind == "blur":
        return [FrameOp("blur", amount=b) for b in _ramp(n, float(rng.uniform(0.6, 1.0)), rng)]
    if kind == "dark":
        return [FrameOp("dark", amount=1.0 - d) for d in _ramp(n, float(rng.uniform(0.75, 0.95)), rng)]
    raise ValueError(f"unknown stretch kind {kind!r}; known: {CONDITIONS}")


def _vfr_segments(n_frames: int, fps: float) -> tuple[list[int], list[float]]:
    """First frame and start time of each constant-rate segment of the variable-frame-rate video (+ the end frame)."""
    bounds = [round(n_frames * k / len(VFR_RATE_FACTORS)) for k in range(len(VFR_RATE_FACTORS) + 1)]
    starts = [0.0]
    for seg, factor in enumerate(VFR_RATE_FACTORS[:-1]):
        starts.append(starts[-1] + (bounds[seg + 1] - bounds[seg]) / (fps * factor))
    return bounds, starts


def _pts(n_frames: int, fps: float, vfr: bool) -> list[float]:
    """Presentation times: n / fps, or for the VFR video thirds at fps * VFR_RATE_FACTORS (on a 1/90000 grid)."""
    if not vfr:
        return [n / fps for n in range(n_frames)]
    bounds, starts = _vfr_segments(n_frames, fps)
    out = []
    for seg, factor in enumerate(VFR_RATE_FACTORS):
        for n in range(bounds[seg], bounds[seg + 1]):
            out.append(round((starts[seg] + (n - bounds[seg]) / (fps * factor)) * PTS_TIMESCALE) / PTS_TIMESCALE)
    return out


def plan_video(cfg: DemoConfig, video_id: str) -> VideoPlan:
    """The full per-frame schedule of one demo video, from the config and seed alone."""
    event = video_event(cfg, video_id)
    n_frames = min(cfg.n_frames, SHORT_VIDEO_FRAMES) if video_id == short_video_id(cfg) else cfg.n_frames
    rng = _rng(cfg, video_id, "schedule")
    others = [e for e in cfg.events if e != event]
    stretches = _stretch_lengths(n_frames, cfg.fps, rng)
    n_clean = n_frames - sum(n for _, n in stretches)
    # clean gaps before, between and after the stretches; the first gap is the longest so a video opens on its event
    weights = rng.dirichlet(np.ones(len(stretches) + 1)) if stretches else np.ones(1)
    weights[0] += 0.5
    gaps = np.floor(weights / weights.sum() * n_clean).astype(int)
    gaps[0] += n_clean - gaps.sum()
    ops: list[FrameOp] = _ops_for("clean", int(gaps[0]), others, cfg.width, cfg.height, rng)
    for (kind, n), gap in zip(stretches, gaps[1:], strict=True):
        ops += _ops_for(kind, n, others, cfg.width, cfg.height, rng)
        ops += _ops_for("clean", int(gap), others, cfg.width, cfg.height, rng)
    assert len(ops) == n_frames, (len(ops), n_frames)

    hues = scenes.event_hues(cfg.events)
    needed = [event] + sorted({op.other for op in ops if op.other}, key=cfg.events.index)
    scene_rng = _rng(cfg, video_id, "scenes")
    plan_scenes = {e: scenes.make_scene(e, cfg.events.index(e), hues[e], scene_rng) for e in needed}
    seeds = {e: int(scene_rng.integers(0, 2**31 - 1)) for e in needed}
    vfr = video_id == vfr_video_id(cfg)
    return VideoPlan(
        video_id=video_id,
        event=event,
        events=cfg.events,
        width=cfg.width,
        height=cfg.height,
        fps=cfg.fps,
        gop=cfg.gop,
        crf=cfg.crf,
        pts_s=tuple(_pts(n_frames, cfg.fps, vfr)),
        ops=tuple(ops),
        scenes=plan_scenes,
        scene_seeds=seeds,
        vfr=vfr,
    )


def evidence(op: FrameOp, own: str) -> dict[str, float]:
    """The visible evidence of each event in a frame made by `op` (events not named have 0)."""
    if op.condition == "clean":
        return {own: 1.0}
    if op.condition == "black":
        return {}
    if op.condition == "cut":
        return {op.other_event(): 1.0}
    if op.condition == "crossfade":
        return {own: 1.0 - op.amount, op.other_event(): op.amount}
    if op.condition == "occlusion":
        return {own: 1.0 - op.amount}
    if op.condition == "blur":
        return {own: 1.0 - BLUR_LOSS * op.amount}
    if op.condition == "dark":
        return {own: op.amount}
    raise ValueError(f"unknown condition {op.condition!r}")


def truth_table(plan: VideoPlan, pts_s: Sequence[float] | None = None) -> pl.DataFrame:
    """schemas.TRUTH rows of one video: a row per frame with every corpus event's evidence."""
    pts = list(pts_s if pts_s is not None else plan.pts_s)
    rows = []
    for i, op in enumerate(plan.ops):
        ev = evidence(op, plan.event)
        rows.append(
            {
                "video_id": plan.video_id,
                "event": plan.event,
                "frame_index": i,
                "pts_s": float(pts[i]),
                "condition": op.condition,
                "evidence": [{"event": e, "weight": float(round(ev.get(e, 0.0), 6))} for e in plan.events],
            }
        )
    return pl.DataFrame(rows)


# --- rendering ---------------------------------------------------------------------------------------------------
def compose(op: FrameOp, own: np.ndarray, others: dict[str, np.ndarray], sigma_max: float) -> np.ndarray:
    """Apply one frame's op to the scene frames (RGB uint8) and return the frame to encode."""
    if op.condition == "clean":
        return own
    if op.condition == "black":
        return np.zeros_like(own)
    if op.condition == "cut":
        return others[op.other_event()]
    if op.condition == "crossfade":
        mixed = (1.0 - op.amount) * own.astype(np.float32) + op.amount * others[op.other_event()].astype(np.float32)
        return np.clip(np.rint(mixed), 0, 255).astype(np.uint8)
    if op.condition == "occlusion":
        if op.occluder is None:
            raise ValueError("an occlusion frame needs its occluder (side, bar size)")
        side, size = op.occluder
        out = own.copy()
        if side == "left":
            out[:, :size] = OCCLUDER_RGB
        elif side == "right":
            out[:, out.shape[1] - size :] = OCCLUDER_RGB
        else:
            out[out.shape[0] - size :, :] = OCCLUDER_RGB
        return out
    if op.condition == "blur":
        import cv2

        sigma = max(0.3, op.amount * sigma_max)
        return cv2.GaussianBlur(own, (0, 0), sigmaX=sigma, sigmaY=sigma, borderType=cv2.BORDER_REFLECT)
    if op.condition == "dark":
        return np.clip(np.rint(own.astype(np.float32) * op.amount), 0, 255).astype(np.uint8)
    raise ValueError(f"unknown condition {op.condition!r}")


def _vfr_args(plan: VideoPlan) -> list[str]:
    """The encoder's arguments for a variable-frame-rate video: piecewise-constant rates as one setpts expression
    (nested ifs over the segment bounds); times on a 1/90000 grid, which the encoder time base and the mp4 track
    timescale keep exactly."""
    bounds, starts = _vfr_segments(plan.n_frames, plan.fps)
    expr = ""
    for seg in reversed(range(len(VFR_RATE_FACTORS))):
        piece = f"({starts[seg]!r}+(N-{bounds[seg]})/{plan.fps * VFR_RATE_FACTORS[seg]!r})"
        expr = f"if(lt(N,{bounds[seg + 1]}),{piece},{expr})" if expr else piece
    return [
        "-vf",
        f"settb=1/{PTS_TIMESCALE},setpts='round(({expr})*{PTS_TIMESCALE})'",
        "-fps_mode",
        "vfr",
        "-enc_time_base",
        f"1/{PTS_TIMESCALE}",
        "-video_track_timescale",
        str(PTS_TIMESCALE),
    ]


def _encoder_cmd(plan: VideoPlan, out: Path) -> list[str]:
    cmd = [
        scenes.ffmpeg_binary(),
        "-nostdin",
        "-hide_banner",
        "-loglevel",
        "error",
        "-y",
        "-f",
        "rawvideo",
        "-pix_fmt",
        "rgb24",
        "-s",
        f"{plan.width}x{plan.height}",
        "-framerate",
        f"{plan.fps}",
        "-i",
        "-",
    ]
    if plan.vfr:
        cmd += _vfr_args(plan)
    cmd += [
        "-c:v",
        "libx264",
        "-preset",
        "fast",
        "-crf",
        str(plan.crf),
        "-threads",
        "1",
        "-g",
        str(plan.gop),
        "-keyint_min",
        str(plan.gop),
        "-sc_threshold",
        "0",
        "-bf",
        "2",
        "-pix_fmt",
        "yuv420p",
        "-movflags",
        "+faststart",
        "-map_metadata",
        "-1",
        "-fflags",
        "+bitexact",
        "-flags:v",
        "+bitexact",
        "-f",
        "mp4",
        str(out),
    ]
    return cmd


def probe_pts(path: str | Path) -> list[float]:
    """Presentation times (s) of every frame of a video, in decoder output order (OpenCV's frame counting)."""
    ffprobe = shutil.which("ffprobe")
    if ffprobe is None:
        raise FileNotFoundError(
            "ffprobe was not found on PATH; it comes with ffmpeg (apt install ffmpeg, or conda "
            "install -c conda-forge ffmpeg) and reads back the frame times of the demo videos"
        )
    res = subprocess.run(
        [
            ffprobe,
            "-v",
            "error",
            "-select_streams",
            "v:0",
            "-show_entries",
            "frame=pts_time,best_effort_timestamp_time",
            "-of",
            "json",
            str(path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if res.returncode != 0:
        raise RuntimeError(f"{path}: ffprobe could not read the video it just wrote: {res.stderr.strip()}")
    frames = json.loads(res.stdout).get("frames", [])
    return [float(f.get("pts_time", f.get("best_effort_timestamp_time", "nan"))) for f in frames]


def render_video(plan: VideoPlan, out: str | Path, progress: bool = False) -> pl.DataFrame:
    """Render a planned video to `out` (H.264 MP4, written atomically) and return its truth rows."""
    from squidflow.contracts.io import atomic_path

    out = Path(out)
    sigma_max = max(plan.width, plan.height) / 40.0
    last_needed = {plan.event: plan.n_frames - 1}
    for i, op in enumerate(plan.ops):
        if op.other:
            last_needed[op.other] = i
    streams = {
        e: scenes.render_frames(
            plan.scenes[e], plan.width, plan.height, plan.fps, last_needed[e] + 1, plan.scene_seeds[e]
        )
        for e in plan.scenes
    }
    frames_iter = range(plan.n_frames)
    if progress:
        from tqdm import tqdm

        frames_iter = tqdm(frames_iter, desc=plan.video_id, unit="frame")
    with atomic_path(out) as tmp:
        enc = subprocess.Popen(_encoder_cmd(plan, tmp), stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        assert enc.stdin is not None and enc.stderr is not None
        try:
            for i in frames_iter:
                current = {e: next(s) for e, s in streams.items() if i <= last_needed[e]}
                frame = compose(plan.ops[i], current[plan.event], current, sigma_max)
                enc.stdin.write(np.ascontiguousarray(frame).tobytes())
            enc.stdin.close()
        except BrokenPipeError:
            enc.wait()
            raise RuntimeError(
                f"{out}: the libx264 encoder stopped early: {enc.stderr.read().decode(errors='replace').strip()}"
            ) from None
        except BaseException:
            enc.kill()
            enc.wait()
            raise
        finally:
            for s in streams.values():
                s.close()
        err = enc.stderr.read().decode(errors="replace")
        enc.stderr.close()
        if enc.wait() != 0:
            raise RuntimeError(f"{out}: libx264 encoding failed: {err.strip()}")
        pts = probe_pts(tmp)
        if len(pts) != plan.n_frames:
            raise RuntimeError(f"{out}: wrote {plan.n_frames} frames but the file decodes to {len(pts)}")
        worst = max(abs(a - b) for a, b in zip(pts, plan.pts_s, strict=True))
        if worst > 1e-3:
            raise RuntimeError(f"{out}: frame times differ from the plan by up to {worst:.6f} s")
    return truth_table(plan, pts)


def make_video(cfg: DemoConfig, video_id: str, out: str | Path, progress: bool = False) -> pl.DataFrame:
    """Plan and render one demo video; returns its schemas.TRUTH rows."""
    return render_video(plan_video(cfg, video_id), out, progress=progress)


# --- the catalog -------------------------------------------------------------------------------------------------
def catalog(cfg: DemoConfig, video_dir: str = "results/videos/demo") -> pl.DataFrame:
    """schemas.DEMO_CATALOG: synthetic but varied metadata (title, description, tags, language) of each video."""
    rows = []
    for vid in video_ids(cfg):
        event = video_event(cfg, vid)
        text = describe_video(event, _rng(cfg, vid, "text"))
        rows.append({"video_id": vid, "event": event, "path": f"{video_dir}/{vid}.mp4", **text})
    return pl.DataFrame(rows, schema_overrides={"tags": pl.List(pl.Utf8)})


def gather_truth(parts: Sequence[pl.DataFrame], cfg: DemoConfig) -> pl.DataFrame:
    """Concatenate per-video truth rows in corpus order, checking every video is there once."""
    df = pl.concat(list(parts), how="vertical_relaxed") if parts else pl.DataFrame()
    have = set(df["video_id"].unique()) if df.height else set()
    missing = [v for v in video_ids(cfg) if v not in have]
    if missing:
        raise ValueError(f"demo truth: no rows for {missing}; rerun rule make_demo_videos for them")
    order = {v: i for i, v in enumerate(video_ids(cfg))}
    return (
        df.with_columns(pl.col("video_id").replace_strict(order, return_dtype=pl.Int64).alias("_o"))
        .sort("_o", "frame_index")
        .drop("_o")
    )
