"""The one behaviour squidflow changes in the Slurm executor plugin (snakemake-executor-plugin-slurm), and only on the
versions it was tested on (docs/upstream.md lists it with its upstream report).

`sacct` reports a job cancelled by a person, an admin or a preemption as `CANCELLED by <uid>`. The plugin (2.8.0)
compares the state with its list of failed states word for word, finds no `CANCELLED by 0` there, and keeps yielding
the job as running: the submitting Snakemake waits for it for ever, and the rerun the user expects never happens.
`patch_plugin_states` keeps each state's first word. That is a wrong answer, not a slow one, so it stays until the
plugin reads the state's first word itself.

Everything else runs as the plugin ships: its job-step executor (`srun` and one Snakemake per rule inside each Slurm
job), its status back-off and its submission order. Outside the tested versions (`TESTED`, the same bound as
pyproject.toml's) nothing is patched: a warning says so once, and the plugin runs as it ships.
"""

from __future__ import annotations

import logging
from importlib import metadata

PLUGIN = "snakemake-executor-plugin-slurm"
# The versions of each dependency squidflow patches that it was tested on: (lowest, newest). pyproject.toml bounds the
# dependency at the newest (tests/unit/structure/test_upstream.py keeps the two equal); `make test-upstream` runs
# the Slurm and report tests on the newest releases.
TESTED = {PLUGIN: ("2.8.0", "2.8.0")}

log = logging.getLogger("squidflow.slurm")
_warned: set[str] = set()


def _release(version: str) -> tuple[int, ...]:
    """`2.8.0` -> (2, 8, 0): the release part of a version (`2.9.0rc1` -> (2, 9, 0), `2.8` -> (2, 8, 0))."""
    from packaging.version import Version

    release = Version(version).release
    return tuple(release) + (0,) * (3 - len(release))


def installed_version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def within_tested(dist: str, version: str | None = None, warn=None) -> bool:
    """Whether `dist` (installed `version`, else the one installed here) is within the versions squidflow was tested
    on. Outside them, warn once per process per dependency (with `warn`, default the module's logger) and return
    False: the caller then leaves the dependency as it ships."""
    version = version if version is not None else installed_version(dist)
    low, high = TESTED[dist]
    if version is not None and _release(low) <= _release(version) <= _release(high):
        return True
    if dist not in _warned:
        _warned.add(dist)
        (warn or log.warning)(
            f"squidflow: {dist} {version or '(not installed)'} is outside the versions squidflow was tested on "
            f"({low} to {high}); it runs as it ships, without squidflow's fix (docs/upstream.md). If a job cancelled "
            "with scancel keeps the run waiting, stop Snakemake and run the same command again.")
    return False


def normalise_states(states: dict[str, str]) -> dict[str, str]:
    """`sacct` reports a cancelled job as `CANCELLED by <uid>`; the plugin knows only `CANCELLED` and would keep
    waiting for that job forever. Keep each state's first word."""
    return {job: state.split()[0] if state.strip() else state for job, state in states.items()}


def patch_plugin_states(plugin=None, version: str | None = None, warn=None) -> bool:
    """Make the Slurm executor plugin see `CANCELLED by <uid>` as `CANCELLED`, so a job cancelled with `scancel` (by
    its user, an admin or a preemption) is reported as failed and rerun next time instead of holding the run open
    for ever. Only within TESTED (else a warning, once, and no change). `plugin`: the module to patch (default the
    installed plugin). Returns whether the plugin's status query was wrapped (once per module)."""
    if plugin is None:
        try:
            import snakemake_executor_plugin_slurm as plugin
        except ImportError:  # pragma: no cover - only called on Slurm runs
            return False
    if not within_tested(PLUGIN, version, warn):
        return False
    original = plugin.query_job_status
    if getattr(original, "squidflow_normalised", False):
        return False

    async def query_job_status(command, logger):
        states, seconds = await original(command, logger)
        return (normalise_states(states) if states is not None else None), seconds

    query_job_status.squidflow_normalised = True
    plugin.query_job_status = query_job_status
    return True
