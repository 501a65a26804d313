"""The dependencies whose behaviour (or private steps) squidflow changes, and the versions it was tested on
(docs/upstream.md lists every such place, why, and the upstream issue that would make it unnecessary).

A change is made only within the tested versions: outside them `within_tested` warns once per process and per
dependency, and the caller leaves the dependency as it ships. pyproject.toml bounds each of these dependencies at
the newest tested version (tests/unit/structure/test_upstream.py keeps the two equal); `make test-upstream` runs the
Slurm and report tests on the newest releases, to move the bound.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from importlib import metadata

# dependency -> (lowest, newest) version squidflow's change was tested on
TESTED = {
    # squidflow.report.script_data: the report's script data made inert; squidflow.runtime.input_sizes (from 9.10.0)
    "snakemake": ("9.0.0", "9.27.1"),
    "snakemake-executor-plugin-slurm": ("2.8.0", "2.8.0"),  # squidflow.runtime.slurm_plugin: `CANCELLED by <uid>`
    "snakemake-storage-plugin-s3": ("0.3.6", "0.3.6"),  # squidflow.runtime.s3_plugin: folder check, inventory
    "crowd-kit": ("1.4.2", "1.4.2"),  # squidflow.judgments.crowd_models: GLAD's and MACE's bookkeeping
}

log = logging.getLogger("squidflow.runtime.upstream")
_warned: set[str] = set()


def release(version: str) -> tuple[int, int, int]:
    """`2.8.0` -> (2, 8, 0): the release part of a version (`2.9.0rc1` -> (2, 9, 0), `2.8` -> (2, 8, 0))."""
    from packaging.version import Version

    parts = (*Version(version).release, 0, 0)
    return parts[0], parts[1], parts[2]


def installed_version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def within_tested(
    dist: str,
    what: str,
    version: str | None = None,
    warn: Callable[[str], None] | None = None,
    span: tuple[str, str] | None = None,
) -> bool:
    """Whether `dist` (at `version`, else the installed one) is within the versions squidflow's change `what` was
    tested on: `span` where the change's own code first appeared later than TESTED's lowest, else TESTED[dist].
    Outside them: one warning per process and dependency (through `warn`, default this module's logger) naming the
    version, the tested range and what runs as it ships; returns False."""
    version = version if version is not None else installed_version(dist)
    low, high = span or TESTED[dist]
    if version is not None and release(low) <= release(version) <= release(high):
        return True
    if dist not in _warned:
        _warned.add(dist)
        (warn or log.warning)(
            f"squidflow: {dist} {version or '(not installed)'} is outside the versions squidflow was tested on "
            f"({low} to {high}): it runs as it ships, without squidflow's change ({what}; docs/upstream.md)."
        )
    return False
