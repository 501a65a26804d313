"""Reference decoding for tests: the frames as the SQUID-E release script sees them."""

from __future__ import annotations

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
