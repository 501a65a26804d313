# squidflow: internet videos -> ambiguous images with human judgments -> models measured against them.
# Read it as a table of contents; the stages live in workflow/rules/, the logic in src/squidflow/.
from snakemake.utils import min_version

min_version("9.0")


include: "workflow/checks.smk"  # config files parsed strictly (a tab, a twice-given key: file, line); writable results


# The configuration, whatever the working directory (squidflow.config.layers, the rule every `squidflow` command
# follows too): the schema's defaults (filled in by common.smk), then the demo config only when no --configfile is
# given, then the --configfile files in order, then --config. The demo config is named from the workflow's own folder
# (SQUIDFLOW_ROOT), not the working directory; as a module, squidflow reads the config its user hands it instead.
for _demo_config in demo_configfiles(workflow.overwrite_configfiles, SQUIDFLOW_ROOT):

    configfile: _demo_config


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/videos.smk"
include: "workflow/rules/frames.smk"
include: "workflow/rules/judgments.smk"
include: "workflow/rules/text.smk"
include: "workflow/rules/comparison.smk"
include: "workflow/rules/training.smk"
include: "workflow/rules/evaluation.smk"
include: "workflow/rules/litmus.smk"
include: "workflow/rules/demo.smk"  # the offline demo's simulated inputs, written to the paths the stages above define
include: "workflow/rules/publish.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        get_final_outputs(),


include: "workflow/targets.smk"  # a target no rule makes: the tables and figures that exist
