"""Shared fixtures: the project root and the real public data beside the clone (../shared/data)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _shared_data() -> Path:
    env = os.environ.get("SQUIDFLOW_SHARED_DATA")
    candidates = [Path(env)] if env else []
    candidates += [ROOT.parent / "shared" / "data", ROOT / "shared" / "data"]
    for c in candidates:
        if (c / "squid-e" / "dataset.csv").exists():
            return c
    raise FileNotFoundError(
        f"the real SQUID-E/Sherlock data was not found in {[str(c) for c in candidates]}; "
        "put the shared data folder beside the clone (../shared/data) or set SQUIDFLOW_SHARED_DATA"
    )


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def shared_data() -> Path:
    return _shared_data()
