"""What the tests take from benchmarks/: the reference readers kept there (outside the library) as baselines."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from mturk_rows import read_mturk_batch_rows  # noqa: E402

__all__ = ["read_mturk_batch_rows"]
