"""Figures that tests measure on the way (the time of a whole cluster run, for example), printed in pytest's closing
summary so that CI's output carries them. Speed goals are never asserted in tests (they are benchmarks' business);
these lines only say what the run took on the machine that ran it."""

from __future__ import annotations

FIGURES: list[str] = []


def figure(line: str) -> None:
    """Print `line` (seen with `pytest -s`) and keep it for the closing summary (always seen)."""
    print(line)
    FIGURES.append(line)
