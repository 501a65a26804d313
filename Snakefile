# squidflow: internet videos -> ambiguous images with human judgments -> models measured against them.
# Read it as a table of contents; the stages live in workflow/rules/, the logic in src/squidflow/.
from snakemake.utils import min_version

min_version("9.0")


include: "workflow/checks.smk"  # config files parsed strictly (a tab, a twice-given key: file, line); writable results


configfile: "config/config.yaml"


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
