# Checks that run before anything else. Included first by the Snakefile, before its `configfile:` directive (the demo
# config, read only when no --configfile is given: squidflow.config.layers).
#
# 1. The config files are parsed strictly before Snakemake reads them, so a YAML syntax error (a tab) or a key given
#    twice names its file and line instead of Snakemake's "not valid JSON or YAML". (Files given with --configfile
#    are read by Snakemake's command line before any workflow code runs: a syntax error there is Snakemake's to report,
#    and `squidflow check-config FILE` names the line; a key given twice there is caught here.)
# 2. Before the first job of a real run (not a dry run), results/ and logs/ must be writable: the run stops naming
#    the folder, instead of a traceback from inside Snakemake when it clears a job's old output. On Slurm
#    (--profile profiles/slurm) the handler also starts the watch that stops jobs Slurm will never start and says
#    what to change when sbatch refuses a job (squidflow.runtime.slurm).
# 3. One results folder per configuration: before the first job of a real run, the first config file is compared
#    with the one recorded in results/run_config.yaml by the run that made the folder's results; another one
#    stops the run naming both and the fix (`--directory DIR`, or `--config replace_other_config=true`); the same one
#    (overlays after it may change) is recorded again, with the configuration the files made (what `squidflow
#    config` prints for the same arguments; squidflow.runtime.run_record).
# The config's keys and the input paths it names are checked in common.smk, once the config is read.
import os
import sys

# The workflow's own folder (this file is in its workflow/): src/, the schema and the public-data mirrors beside the
# clone are found from here. Not workflow.basedir, which is the folder of the main Snakefile: when another workflow
# imports squidflow as a module (docs/cluster-and-storage.md, "Use squidflow in your own workflow"), that is the user's
# folder.
SQUIDFLOW_ROOT = os.path.dirname(os.path.abspath(workflow.current_basedir.get_path_or_uri(secret_free=True)))
# The Snakemake process imports the library of this workflow's own clone (a module's, not whatever version the
# environment has installed); the jobs find it through scripts/squidflow (DEVELOPERS.md, "How the library is found").
sys.path.insert(0, os.path.join(SQUIDFLOW_ROOT, "src"))

from snakemake.exceptions import WorkflowError
from squidflow.runtime import slurm as squidflow_slurm
from squidflow.config.validation import ConfigError, check_config_files, check_writable
from squidflow.config.layers import config_files, demo_configfiles, record_config
from squidflow.runtime import run_record as squidflow_run_record

try:
    # the files that make the configuration (squidflow.config.layers), before the Snakefile's `configfile:` reads the
    # demo's; a workflow importing squidflow as a module has read its own config files already (workflow.configfiles)
    _files = [*config_files(workflow.overwrite_configfiles, SQUIDFLOW_ROOT), *map(str, workflow.configfiles)]
    check_config_files(dict.fromkeys(os.path.normpath(f) for f in _files))
except ConfigError as _error:
    raise WorkflowError(str(_error)) from None


# On object storage (`--default-storage-provider`) results/ and logs/ are not in the working directory: the jobs read
# and write only their declared files, through Snakemake's local copies under .snakemake/storage/, and the run record
# (3.) is not kept (it would be a file in the working directory that no rule declares; docs/cluster-and-storage.md,
# "Cloud and object
# storage").
ON_STORAGE = bool(workflow.storage_settings.default_storage_provider)


onstart:
    if ON_STORAGE:
        squidflow_slurm.on_start(workflow, log)
        return
    _unwritable = check_writable(("results", "logs"))
    if _unwritable:
        raise WorkflowError("\n".join(_unwritable))
    _other_config = squidflow_run_record.check_and_record(
        [str(f) for f in workflow.configfiles],
        config=record_config(config),
        replace=bool(config.get("replace_other_config")),
        repo_root=SQUIDFLOW_ROOT,
    )
    if _other_config:
        raise WorkflowError(_other_config)
    squidflow_slurm.on_start(workflow, log)
