"""SYNTHETIC subtitles for the demo videos: lines that follow what each stretch of a video shows.

Real uploads come with subtitles — someone filming says what is in front of the camera, apologises when the
picture goes dark, goes quiet when nothing happens. So that the text stage has subtitles to read offline, each demo
video gets a WebVTT file beside it (`results/videos/demo/{video_id}.en.vtt`, the name yt-dlp would give English
subtitles), written from the video's per-frame truth (schemas.TRUTH):

| stretch   | what the cue says                                                      |
|-----------|------------------------------------------------------------------------|
| clean     | a clue or action of the video's event (its phrase bank, squidflow.demo.text) |
| crossfade | that the picture fades into another clip, and a clue of the other event |
| cut       | that a different video was cut in, and a clue of the other event       |
| occlusion | that someone stands in front of the camera                             |
| blur      | that the picture is blurry                                             |
| dark      | that it is too dark to see                                             |
| black     | nothing (no cue: silence)                                              |

Long clean stretches are split into cues of at most `MAX_CUE_S` seconds. The file carries WebVTT's features — a
NOTE block saying it is synthetic, a STYLE block, cue identifiers and settings, voice, italic and bold tags,
multi-line cues, character references — so the demo exercises the same reader as real subtitles.
"""

from __future__ import annotations

import zlib

import numpy as np
import polars as pl

from squidflow.demo.text import EN, GENERIC

MAX_CUE_S = 2.5
FALLBACK_FRAME_S = 0.04

CLEAN = [
    "Look, {clue}!",
    "There is {clue} right here.",
    "Can you see {clue}?",
    "{Action}.",
    "Oh wow, {action}.",
    "And now {action}.",
    "Over here: {clue}.",
]
CLEAN_SECOND = ["That is the best part of the {name}.", "Typical {name}!", "What a {name}.", "I love this bit."]
CROSSFADE = ["<i>[the picture fades into another clip]</i>", "<i>[fading over to a different video]</i>"]
CUT = ["<i>[cut to a different video]</i>", "<i>[a clip from somewhere else]</i>"]
OTHER = ["This one has {clue}.", "Wait, that is {clue}.", "Here you can see {clue} &amp; more."]
OCCLUSION = ["Hey, can you move? You are right in front of the camera!", "Sorry, someone is blocking the view."]
BLUR = ["Sorry, it is all blurry while I zoom in.", "Hang on, the focus is off."]
DARK = ["It is <b>really</b> dark in here,\nI can hardly see anything.", "The lights went down, hard to see now."]


def _bank(event: str) -> dict[str, list[str]]:
    readable = event.replace("_", " ")
    return EN.get(event) or {"name": [readable], **GENERIC}


def _timestamp(t: float) -> str:
    ms = int(round(t * 1000))
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}.{ms:03d}"


def stretches(truth: pl.DataFrame) -> list[tuple[str, str | None, float, float]]:
    """(condition, other event, start s, end s) of each run of frames with the same condition and other event."""
    truth = truth.sort("frame_index")
    pts = truth["pts_s"].to_list()
    step = float(np.median(np.diff(pts))) if len(pts) > 1 else FALLBACK_FRAME_S
    runs: list[list] = []
    for i, (cond, ev, own) in enumerate(truth.select("condition", "evidence", "event").iter_rows()):
        others = [(e["weight"], e["event"]) for e in ev or [] if e["event"] != own and e["weight"] > 0]
        other = max(others)[1] if others and cond in ("crossfade", "cut") else None
        end = pts[i + 1] if i + 1 < len(pts) else pts[i] + step
        if runs and runs[-1][0] == cond and runs[-1][1] == other:
            runs[-1][3] = end
        else:
            runs.append([cond, other, pts[i], end])
    return [tuple(r) for r in runs]


def demo_subtitles(truth: pl.DataFrame, *, seed: int = 0) -> str:
    """The WebVTT text of one demo video's SYNTHETIC subtitles, from its truth rows."""
    video_id = truth["video_id"][0]
    event = truth["event"][0]
    rng = np.random.default_rng([seed, zlib.crc32(video_id.encode()), zlib.crc32(b"subtitles")])
    own = _bank(event)

    def pick(items: list[str]) -> str:
        return items[int(rng.integers(len(items)))]

    def slots(bank: dict[str, list[str]]) -> dict[str, str]:
        action = pick(bank["actions"])
        return {
            "clue": pick(bank["clues"]),
            "action": action,
            "Action": action[:1].upper() + action[1:],
            "name": pick(bank["name"]),
        }

    cues: list[tuple[float, float, str]] = []
    for cond, other, start, end in stretches(truth):
        if cond == "black":
            continue
        if cond == "clean":
            n = max(1, int(np.ceil((end - start) / MAX_CUE_S - 1e-9)))
            bounds = np.linspace(start, end, n + 1)
            for a, b in zip(bounds[:-1], bounds[1:], strict=True):
                line = pick(CLEAN).format(**slots(own))
                if rng.random() < 0.35:
                    line += "\n" + pick(CLEAN_SECOND).format(**slots(own))
                cues.append((a, b, "<v Camera>" + line))
            continue
        if cond in ("crossfade", "cut"):
            other_slots = slots(_bank(other)) if other else slots(own)
            text = pick(CROSSFADE if cond == "crossfade" else CUT) + "\n" + pick(OTHER).format(**other_slots)
        else:
            text = pick({"occlusion": OCCLUSION, "blur": BLUR, "dark": DARK}[cond])
        cues.append((start, end, "<v Camera>" + text))
    lines = [
        "WEBVTT",
        "",
        f"NOTE SYNTHETIC subtitles for the squidflow offline demo, written from the per-frame truth of {video_id}.mp4:",
        "every line follows what that stretch of the video shows. Nobody said these words.",
        "",
        "STYLE",
        '::cue(v[voice="Camera"]) { color: #ffee88; }',
        "",
    ]
    for k, (a, b, text) in enumerate(cues, start=1):
        lines += [f"{video_id}-{k}", f"{_timestamp(a)} --> {_timestamp(b)} line:85% align:center", text, ""]
    return "\n".join(lines)
