"""The developer tools in tools/ (make_docs, layering, compare_results, config_readme), for the tests that check what
they write or use their readers."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import compare_results  # noqa: E402
import config_readme  # noqa: E402
import layering  # noqa: E402
import make_docs  # noqa: E402

__all__ = ["compare_results", "config_readme", "layering", "make_docs"]
