"""The one behaviour squidflow changes in Snakemake's S3 storage plugin (snakemake-storage-plugin-s3), and only on the
versions it was tested on (docs/upstream.md lists it with its upstream report).

A folder on S3 is no object but a prefix: the plugin answers "does `results/frames/shard0` exist?" by listing the
keys under `results/frames/shard0/`, and keeps the answer on its storage object (`is_dir`) for as long as the
object lives. The submitting Snakemake asks about each output while it builds the DAG, and again after the job
has run and uploaded it, on the same object. A folder that was not there at the first question is therefore
still "missing in storage" after its job uploaded it, and the job is reported failed. A clean run does not show
it (Snakemake does not ask about the outputs of a job whose inputs are still to be made); a rerun after a kill
does, for every directory output the killed run had not reached (tests/e2e/test_s3.py). That is a wrong
answer, not a slow one, so `patch_directory_check` makes the plugin list the prefix on every question: one LIST
request where a HEAD request has already found no object of that name. It stays until the plugin asks again
itself.

Outside the tested versions (squidflow.runtime.upstream.TESTED, the same bound as pyproject.toml's) nothing is
patched: a warning says so once, and the plugin runs as it ships.
"""

from __future__ import annotations

from collections.abc import Callable

from squidflow.runtime.upstream import within_tested

PLUGIN = "snakemake-storage-plugin-s3"
WHAT = (
    "a folder output on S3 is looked up again after its job uploaded it; without it a rerun after a kill can "
    "report a folder its job uploaded as `missing in storage`: run the same command again"
)


def patch_directory_check(version: str | None = None, warn: Callable[[str], None] | None = None) -> bool:
    """Make the S3 plugin's storage objects list their prefix each time they are asked whether they are a folder,
    instead of keeping the first answer (a folder uploaded after a first "no" is then seen). Only within
    squidflow.runtime.upstream.TESTED (else a warning, once, and no change); nothing where the plugin is not
    installed. Returns whether the check was replaced (once per process)."""
    try:
        from snakemake_storage_plugin_s3 import StorageObject
    except ImportError:
        return False
    if getattr(StorageObject.is_dir, "squidflow_uncached", False):
        return False
    if not within_tested(PLUGIN, WHAT, version, warn):
        return False

    def is_dir(self: StorageObject) -> bool:
        return any(self.get_subkeys())

    is_dir.squidflow_uncached = True  # type: ignore[attr-defined]
    StorageObject.is_dir = is_dir  # type: ignore[method-assign]
    return True
