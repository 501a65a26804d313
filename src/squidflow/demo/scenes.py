"""The look of each synthetic event: an ffmpeg lavfi scene, and the image statistic that recognises it.

Every demo event gets a hue of its own (spread evenly around the colour wheel, so 4 events are 90 degrees apart and 6
are 60), a texture of its own (stripes, grids of different pitch and orientation), a motion of its own (shapes
rising like balloons, marching across like a parade, circling, bouncing) and its name as moving text. Videos of the
same event differ in layout, speed, shape sizes, grain and a small hue jitter drawn from the seed.

The hue is what makes the truth table checkable: the hue of a frame's mean colour is the event's hue for a clean
frame (white text and same-hue shapes do not move it), so `classify_frame` can tell the events apart from one
number, and a cross-fade's mean colour lies on the line between the two scenes' mean colours.
"""

from __future__ import annotations

import colorsys
import functools
import logging
import math
import shutil
import subprocess
from collections.abc import Generator, Sequence
from dataclasses import dataclass

import numpy as np

log = logging.getLogger(__name__)

HUE_JITTER_DEG = 8.0  # per-video hue variation; far below the 30 degrees half-spacing of 6 events
TEXTURES = (
    # (grid cell width, grid cell height, line thickness): stripes or grids, one per event index
    ("vertical stripes", 20, None, 6),
    ("fine grid", 16, 16, 2),
    ("horizontal stripes", None, 14, 5),
    ("coarse grid", 40, 40, 5),
    ("wide vertical stripes", 36, None, 12),
    ("tight grid", 10, 10, 1),
)
MOTIONS = ("rise", "orbit", "march", "bounce")  # in the default event order: balloons, dancing, a parade, a crowd


def event_hues(events: Sequence[str]) -> dict[str, float]:
    """Each event's hue in degrees, evenly spread (offset 15 degrees so the default events avoid pure red/green)."""
    n = len(events)
    return {e: (15.0 + 360.0 * i / n) % 360.0 for i, e in enumerate(events)}


def _hex(h_deg: float, s: float, v: float) -> str:
    r, g, b = colorsys.hsv_to_rgb((h_deg % 360.0) / 360.0, s, v)
    return f"0x{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def frame_hue(rgb: np.ndarray) -> tuple[float, float]:
    """(hue in degrees, saturation) of the mean colour of an RGB frame (H x W x 3, uint8)."""
    mean = rgb.reshape(-1, 3).astype(np.float64).mean(axis=0) / 255.0
    h, s, _ = colorsys.rgb_to_hsv(*mean)
    return h * 360.0, s


def hue_distance(a: float, b: float) -> float:
    d = abs(a - b) % 360.0
    return min(d, 360.0 - d)


def classify_frame(rgb: np.ndarray, events: Sequence[str]) -> str:
    """The event whose hue is nearest to the hue of the frame's mean colour (meaningful for frames that show one
    event's scene; a black frame has no hue and is classified arbitrarily)."""
    hue, _ = frame_hue(rgb)
    hues = event_hues(events)
    return min(events, key=lambda e: hue_distance(hue, hues[e]))


@dataclass(frozen=True)
class Scene:
    """One rendering of an event's scene: everything that varies between videos of the same event."""

    event: str
    index: int  # the event's position in the corpus' event list: picks hue, texture and motion
    hue: float
    label: str
    shapes: tuple[tuple[float, ...], ...]  # per shape: (size_w, size_h, speed, phase, lane, shade)
    grain: int
    grid_offset: int
    text_phase: float

    @property
    def motion(self) -> str:
        return MOTIONS[self.index % len(MOTIONS)]


def make_scene(event: str, index: int, base_hue: float, rng: np.random.Generator) -> Scene:
    """Draw the per-video variation of an event's scene."""
    n_shapes = int(rng.integers(3, 6))
    shapes = tuple(
        (
            float(rng.uniform(0.08, 0.18)),  # width as a fraction of the frame width
            float(rng.uniform(0.08, 0.2)),  # height as a fraction of the frame height
            float(rng.uniform(0.15, 0.45)),  # speed, frames widths per second
            float(rng.uniform(0, 2 * math.pi)),  # phase
            float(rng.uniform(0.1, 0.8)),  # lane: where across the frame the shape moves
            float(rng.choice([0.45, 1.0])),  # value of its colour: dark or light shade of the hue
        )
        for _ in range(n_shapes)
    )
    return Scene(
        event=event,
        index=index,
        hue=float(base_hue + rng.uniform(-HUE_JITTER_DEG, HUE_JITTER_DEG)) % 360.0,
        label=event.replace("_", " ").upper(),
        shapes=shapes,
        grain=int(rng.integers(8, 20)),
        grid_offset=int(rng.integers(0, 10)),
        text_phase=float(rng.uniform(0, 2 * math.pi)),
    )


def _shape_xy(motion: str, shape: tuple[float, ...]) -> tuple[str, str]:
    """overlay x/y expressions (of t, W, H, w, h) for a shape moving in the event's way."""
    _, _, speed, phase, lane, _ = shape
    if motion == "rise":  # balloons: drift upwards, wrap around, sway sideways
        x = f"{lane:.3f}*W+0.06*W*sin(1.7*t+{phase:.3f})"
        y = f"H-mod(t*{speed:.3f}*H+{phase:.3f}*H/6.2832,H+h)"
    elif motion == "march":  # a parade: a row crossing left to right at one speed
        x = f"mod(t*{speed:.3f}*W+{phase:.3f}*W/6.2832,W+w)-w"
        y = f"{lane:.3f}*H+0.02*H*sin(6*t+{phase:.3f})"
    elif motion == "orbit":  # slow circling, like dancers
        x = f"W/2-w/2+{0.2 + 0.2 * lane:.3f}*W*cos({speed * 3:.3f}*t+{phase:.3f})"
        y = f"H/2-h/2+{0.15 + 0.15 * lane:.3f}*H*sin({speed * 3:.3f}*t+{phase:.3f})"
    else:  # bounce: a crowd jostling, fast jitter around a lane
        x = f"{lane:.3f}*W+0.08*W*sin({speed * 9:.3f}*t+{phase:.3f})"
        y = f"{0.2 + 0.5 * lane:.3f}*H+0.12*H*abs(sin({speed * 7:.3f}*t+{phase:.3f}))"
    return x, y


def scene_filter(scene: Scene, width: int, height: int, fps: float, n_frames: int, seed: int) -> str:
    """The lavfi filter graph that renders `n_frames` of the scene as RGB frames.

    A coloured background with the event's texture (drawgrid), shapes (colour sources moved by overlay expressions
    of the time), the event's name (drawtext) and temporal grain (noise), cut to `n_frames`.
    """
    _, cell_w, cell_h, thick = TEXTURES[scene.index % len(TEXTURES)]
    scale = width / 320
    bg = _hex(scene.hue, 0.65, 0.72)
    line = _hex(scene.hue, 0.85, 0.45)
    gw = max(4, round(cell_w * scale)) if cell_w else width + 10
    gh = max(4, round(cell_h * scale)) if cell_h else height + 10
    chains = [
        f"color=c={bg}:s={width}x{height}:r={fps},format=rgb24,"
        f"drawgrid=x={scene.grid_offset}:y={scene.grid_offset}:w={gw}:h={gh}:t={max(1, round(thick * scale))}:"
        f"c={line}@0.9[l0]"
    ]
    last = "l0"
    for k, shape in enumerate(scene.shapes):
        sw, sh, *_rest, shade = shape
        x, y = _shape_xy(scene.motion, shape)
        colour = _hex(scene.hue, 0.5 if shade > 0.5 else 0.9, shade)
        chains.append(f"color=c={colour}:s={max(2, round(sw * width))}x{max(2, round(sh * height))}:r={fps}[s{k}]")
        chains.append(f"[{last}][s{k}]overlay=x='{x}':y='{y}':shortest=1[l{k + 1}]")
        last = f"l{k + 1}"
    fontsize = max(8, round(height / 11))
    caption = (
        f"drawtext=text='{scene.label}':fontsize={fontsize}:fontcolor=white@0.9:"
        f"x='(w-tw)/2+0.2*w*sin(0.4*t+{scene.text_phase:.3f})':y='h*0.08+0.04*h*sin(0.3*t)',"
        if drawtext_available()
        else ""
    )
    chains.append(
        f"[{last}]{caption}"
        f"noise=alls={scene.grain}:allf=t+u:all_seed={seed % 2**31},format=rgb24,trim=end_frame={n_frames}"
    )
    return ";".join(chains)


@functools.lru_cache(maxsize=1)
def drawtext_available() -> bool:
    """Whether ffmpeg can draw text here (it needs libfreetype and at least one font that fontconfig finds).

    Without it the scenes are rendered without their caption rather than failing: the caption is decoration, the
    hue, texture and motion are what make the events distinct. (Captions then differ between machines with and
    without fonts, so compare corpora made on machines with the same ffmpeg and fonts.)
    """
    res = subprocess.run(
        [
            ffmpeg_binary(),
            "-nostdin",
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "color=s=64x32,drawtext=text=A",
            "-frames:v",
            "1",
            "-f",
            "null",
            "-",
        ],
        capture_output=True,
        check=False,
    )
    if res.returncode != 0:
        log.warning(
            "ffmpeg cannot draw text (%s); demo scenes are rendered without their caption. Install fonts "
            "(e.g. apt install fonts-dejavu-core) to get captions.",
            res.stderr.decode(errors="replace").strip(),
        )
    return res.returncode == 0


def ffmpeg_binary() -> str:
    exe = shutil.which("ffmpeg")
    if exe is None:
        raise FileNotFoundError(
            "ffmpeg was not found on PATH; the demo videos are rendered with it. Install it (apt install ffmpeg, or "
            "conda install -c conda-forge ffmpeg; `make setup` checks for it) and rerun."
        )
    return exe


def render_frames(
    scene: Scene, width: int, height: int, fps: float, n_frames: int, seed: int
) -> Generator[np.ndarray, None, None]:
    """Yield the scene's frames (H x W x 3 RGB uint8) one at a time, streamed from an ffmpeg process."""
    graph = scene_filter(scene, width, height, fps, n_frames, seed)
    cmd = [
        ffmpeg_binary(),
        "-nostdin",
        "-hide_banner",
        "-loglevel",
        "error",
        "-filter_threads",
        "1",
        "-f",
        "lavfi",
        "-i",
        graph,
        "-f",
        "rawvideo",
        "-pix_fmt",
        "rgb24",
        "-",
    ]
    size = width * height * 3
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    try:
        for _ in range(n_frames):
            buf = proc.stdout.read(size)
            if len(buf) != size:
                proc.wait()
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                raise RuntimeError(
                    f"ffmpeg stopped rendering the '{scene.event}' scene early ({err.strip() or 'no message'}); "
                    f"filter graph: {graph}"
                )
            yield np.frombuffer(buf, dtype=np.uint8).reshape(height, width, 3)
    finally:
        proc.stdout.close()
        proc.kill()
        proc.wait()
        if proc.stderr:
            proc.stderr.close()
