"""The one behaviour squidflow changes in the Slurm executor plugin (snakemake-executor-plugin-slurm), and only on the
versions it was tested on (docs/upstream.md lists it with its upstream report).

`sacct` reports a job cancelled by a person, an admin or a preemption as `CANCELLED by <uid>`. The plugin (2.8.0)
compares the state with its list of failed states word for word, finds no `CANCELLED by 0` there, and keeps yielding
the job as running: the submitting Snakemake waits for it for ever, and the rerun the user expects never happens.
`patch_plugin_states` keeps each state's first word. That is a wrong answer, not a slow one, so it stays until the
plugin reads the state's first word itself.

Everything else runs as the plugin ships: its job-step executor (`srun` and one Snakemake per rule inside each Slurm
job), its status back-off and its submission order. Outside the tested versions (squidflow.runtime.upstream.TESTED, the
same bound as pyproject.toml's) nothing is patched: a warning says so once, and the plugin runs as it ships.
"""

from __future__ import annotations

from squidflow.runtime.upstream import within_tested

PLUGIN = "snakemake-executor-plugin-slurm"
WHAT = (
    "a job sacct reports as `CANCELLED by <uid>` is seen as cancelled; without it such a job keeps the run "
    "waiting: stop Snakemake and run the same command again"
)


def normalise_states(states: dict[str, str]) -> dict[str, str]:
    """`sacct` reports a cancelled job as `CANCELLED by <uid>`; the plugin knows only `CANCELLED` and would keep
    waiting for that job forever. Keep each state's first word."""
    return {job: state.split()[0] if state.strip() else state for job, state in states.items()}


def patch_plugin_states(plugin=None, version: str | None = None, warn=None) -> bool:
    """Make the Slurm executor plugin see `CANCELLED by <uid>` as `CANCELLED`, so a job cancelled with `scancel` (by
    its user, an admin or a preemption) is reported as failed and rerun next time instead of holding the run open
    for ever. Only within squidflow.runtime.upstream.TESTED (else a warning, once, and no change). `plugin`: the module to
    patch (default the installed plugin). Returns whether the plugin's status query was wrapped (once per module)."""
    if plugin is None:
        try:
            import snakemake_executor_plugin_slurm
        except ImportError:  # pragma: no cover - only called on Slurm runs
            return False
        plugin = snakemake_executor_plugin_slurm
    if not within_tested(PLUGIN, WHAT, version, warn):
        return False
    original = plugin.query_job_status
    if getattr(original, "squidflow_normalised", False):
        return False

    async def query_job_status(command, logger):
        states, seconds = await original(command, logger)
        return (normalise_states(states) if states is not None else None), seconds

    query_job_status.__dict__["squidflow_normalised"] = True  # the mark read above: wrap a module once
    plugin.query_job_status = query_job_status
    return True
