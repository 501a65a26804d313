# Included last by the Snakefile, once every rule is defined: a target under results/ that no rule makes stops the
# run with the tables and figures that exist and the closest one (squidflow.runtime.targets), instead of Snakemake's
# MissingRuleException.
import os

from snakemake.exceptions import WorkflowError
from squidflow.runtime import targets as squidflow_targets

# `squidflow targets` reads the rules from here (the workflow's own rule list, a public name).
squidflow_targets.remember_rules(workflow.rules)

# Only when squidflow is the main workflow: as a module, the user's own rules make targets squidflow's do not. Not on
# object storage (workflow/checks.smk, ON_STORAGE): a target names a path the rules map to storage, which Snakemake
# itself matches (its own MissingRuleException for a target no rule makes).
_is_main = os.path.abspath(str(workflow.main_snakefile)) == os.path.join(SQUIDFLOW_ROOT, "Snakefile")
_is_main = _is_main and not ON_STORAGE
_unknown_targets = _is_main and squidflow_targets.unknown_targets_message(
    squidflow_targets.requested(workflow),
    squidflow_targets.makes(workflow.rules),
    list(squidflow_targets.rule_outputs(workflow.rules)),
    [r.name for r in workflow.rules],
)
if _unknown_targets:
    raise WorkflowError(_unknown_targets)
