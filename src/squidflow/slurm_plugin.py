"""What squidflow changes in the Slurm executor plugin (snakemake-executor-plugin-slurm 2.8) for a run with
`--profile profiles/slurm`: each change is a wrapper installed once per class by `squidflow.slurm.on_start` in the
submitting Snakemake, and each says which plugin behaviour it replaces and why. The changes: a job cancelled by
someone is seen as cancelled (patch_plugin_states), the status checks' back-off is capped (patch_plugin_backoff),
every Slurm job runs its rules with one local Snakemake (patch_local_execution, JOB_SNAKEMAKE), and ready jobs are
submitted most-waited-for first (patch_submission_order)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping


def normalise_states(states: dict[str, str]) -> dict[str, str]:
    """`sacct` reports a cancelled job as `CANCELLED by <uid>`; the plugin knows only `CANCELLED` and would keep
    waiting for that job forever. Keep each state's first word."""
    return {job: state.split()[0] if state.strip() else state for job, state in states.items()}


def patch_plugin_states() -> bool:
    """Make the Slurm executor plugin (2.8) see `CANCELLED by <uid>` as `CANCELLED`, so a job cancelled with
    `scancel` (by its user, an admin or a preemption) is reported as failed and rerun next time instead of holding
    the run open for ever. Returns whether the plugin's status query was wrapped (once per process)."""
    try:
        import snakemake_executor_plugin_slurm as plugin
    except ImportError:  # pragma: no cover - only called on Slurm runs
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


def _wrap_once(executor_class: type | None, name: str, wrap: Callable[[Callable], Callable]) -> bool:
    """Replace the method `name` of the plugin's Executor (or of `executor_class`) by `wrap(original)`, once per
    class: a second call finds the wrapper's mark and changes nothing. Returns whether it wrapped; False where the
    plugin is not installed."""
    if executor_class is None:
        try:
            import snakemake_executor_plugin_slurm as plugin
        except ImportError:  # pragma: no cover - only called on Slurm runs
            return False
        executor_class = plugin.Executor
    original = getattr(executor_class, name)
    if getattr(original, "squidflow_wrapped", False):
        return False
    wrapper = wrap(original)
    wrapper.squidflow_wrapped = True
    setattr(executor_class, name, wrapper)
    return True


def patch_plugin_backoff(max_seconds: float, executor_class: type | None = None) -> bool:
    """Cap the plugin's status back-off at `max_seconds`. The plugin (2.8) waits `slurm-init-seconds-before-status-
    checks` after a check that saw a job finish, and 10 s longer after each check that saw none, up to 180 s: with
    the profile's groups few, long jobs finish, so each stage's end was seen up to a minute late. One `sacct` call
    every `max_seconds` for all of the run's jobs is still light for slurmdbd. Returns whether the plugin's
    Executor.check_active_jobs was wrapped (once per class)."""

    def wrap(original):
        async def check_active_jobs(self, active_jobs):
            async for job in original(self, active_jobs):
                yield job
            if self.next_seconds_between_status_checks is not None:
                self.next_seconds_between_status_checks = min(self.next_seconds_between_status_checks, max_seconds)

        return check_active_jobs

    return _wrap_once(executor_class, "check_active_jobs", wrap)


JOBSTEP_ARGS = re.compile(r" --executor slurm-jobstep --jobs 1(?: --slurm-jobstep-pass-command-as-script)?")


# What `python -m snakemake` runs, less one import: Snakemake imports every installed executor plugin at start, and
# the Slurm plugin (2.8) imports pandas (~0.45 CPU s, 40% of `import snakemake.cli`) for its efficiency report, which
# only the submitting Snakemake ever writes. In a job the report's function is a stand-in that imports the real one
# if it is ever called. No `$`, backquote or single quote: the plugin puts the command in `sbatch --wrap="..."`.
REPORT_MODULE = "snakemake_executor_plugin_slurm.efficiency_report"
JOB_SNAKEMAKE = (
    "import importlib.util, sys, types; "
    f"n = \"{REPORT_MODULE}\"; "
    "m = sys.modules.setdefault(n, types.ModuleType(n)); "
    "m.create_efficiency_report = lambda *a, **k: "
    "(sys.modules.pop(n), importlib.import_module(n).create_efficiency_report(*a, **k))[1]; "
    "from snakemake.cli import main; "
    "sys.argv[0] = importlib.util.find_spec(\"snakemake.__main__\").origin; "  # as `-m` sets it (the log's Command:)
    "main()"
)


def local_job_command(command: str, cores: int) -> str:
    """The command a Slurm job runs with the plugin's job-step executor replaced by Snakemake's local one on the
    job's `cores` (the last `--cores` on a command line counts), and Snakemake started without the plugin's pandas
    import (JOB_SNAKEMAKE): a Slurm job's Snakemake start-up is paid once per job, and a small run has dozens."""
    command = command.replace(" -m snakemake ", f" -c {shlex.quote(JOB_SNAKEMAKE)} ", 1)
    return JOBSTEP_ARGS.sub(f" --cores {int(cores)}", command, count=1)


def patch_local_execution(executor_class: type | None = None) -> bool:
    """Run each Slurm job's rules with ONE Snakemake inside the job's allocation, with Snakemake's local executor, as
    the generic cluster plugin does. The plugin (2.8) starts Snakemake in the job and that Snakemake starts `srun`
    and a second Snakemake for each rule (~2 s of a core each) before the rule's script even starts: a group of 30
    short rules spent a minute starting, and every training run paid it twice. Inside the allocation the local
    executor runs a group's rules side by side on the job's cores (the cores sbatch asked for), each rule's script
    in its own process as on a workstation; a GPU rule takes its device among the job's GPUs from the slot allocator
    (squidflow.gpu). Array jobs (`--slurm-array-jobs`, off in the profile) keep the plugin's job steps: their tasks
    are dispatched by the job-step executor. Returns whether Executor.format_job_exec was wrapped (once per class)."""

    def wrap(original):
        def format_job_exec(self, job):
            command = original(self, job)
            if getattr(self.workflow.executor_settings, "array_jobs", None):
                return command
            return local_job_command(command, job.threads)

        return format_job_exec

    return _wrap_once(executor_class, "format_job_exec", wrap)


def jobs_downstream(depending: Mapping, job) -> int:
    """How many jobs of the DAG need `job`'s outputs, directly or through others (for a group job: its jobs'
    dependents outside the group). `depending` is Snakemake's DAG.depending: job -> {job that needs it: files}."""
    members = list(job.jobs) if job.is_group() else [job]
    seen = set(members)
    todo = list(members)
    while todo:
        for dependent in depending.get(todo.pop(), {}):
            if dependent not in seen:
                seen.add(dependent)
                todo.append(dependent)
    return len(seen) - len(members)


def patch_submission_order(executor_class: type | None = None) -> bool:
    """Submit the jobs that are ready together in the order of how many jobs wait for them (jobs_downstream), most
    first: the classic list-scheduling rule for finishing a DAG early on few machines. Slurm starts a partition's
    pending jobs first come, first served (a job that does not fit holds back the ones behind it), so the order of
    the `sbatch` calls decides which job gets the cores that come free, and Snakemake hands the plugin its ready jobs
    in no particular order: on a full node the training jobs waited behind `publish_dataset` and
    `comparison_metrics`, which became ready with them and which only the final target needs, and the first job,
    the demo videos that everything needs, could wait behind the litmus games. Each rank's jobs go to the plugin's
    own `run_jobs` (group jobs first, array jobs by rule). Returns whether Executor.run_jobs was wrapped (once per
    class)."""

    def wrap(original):
        def run_jobs(self, jobs):
            dag = getattr(self.workflow, "dag", None)
            if dag is None or len(jobs) < 2:
                return original(self, jobs)
            waiting = {job: jobs_downstream(dag.depending, job) for job in jobs}
            for n in sorted(set(waiting.values()), reverse=True):
                original(self, [job for job in jobs if waiting[job] == n])

        return run_jobs

    return _wrap_once(executor_class, "run_jobs", wrap)
