# The input functions, params and paths of workflow/rules/report.smk (a rules file may not hold functions,
# says `snakemake --lint`); included at the top of report.smk.

TASK_PAGE = "results/report/annotation/{page}.html"


RUN_SUMMARY = "results/report/run_summary.html"


PUBLISH_PAGE = "results/report/published_dataset.html"

# `snakemake --report` embeds each result's params (text from the config: an event's prompt) as JSON in <script> tags
# without escaping `</`: make that JSON inert before the report is rendered (issue 31). Only when a report is being
# made (read from Snakemake's command line; where that cannot be told, always): a run or a job leaves Snakemake's
# renderers as they ship (docs/upstream.md).
from squidflow.report.script_data import escape_report_scripts
from squidflow.runtime.command_line import report_requested

if report_requested():
    escape_report_scripts()


def get_task_pages():
    """The annotation task pages of this run (results/annotation/{page}.html) that the report shows."""
    pages = []
    if JUDGMENT_SOURCE != "release":
        if stage_enabled("judgments"):
            pages += ["hit_template", "hit_preview"]
        if stage_enabled("text") and stage_enabled("frames"):
            pages += ["keyword_template", "keyword_preview"]
    if stage_enabled("comparison"):
        pages.append("comparison_hits")
    return pages


def get_task_page_category(wildcards):
    """A task page's report category: the stage whose annotators see it."""
    return "Comparison sets" if wildcards.page.startswith("comparison") else "Human judgments"


def get_report_outputs():
    """Every enabled stage's figures, the report's task pages, and the run summary."""
    outputs = []
    if stage_enabled("videos"):
        outputs.append(VIDEOS_STATUS_FIGURE)
    if stage_enabled("frames"):
        outputs += [CONTACT_SHEETS_DIR, FRAME_SPREAD_FIGURE]
    if stage_enabled("judgments"):
        outputs += [ANNOTATORS_FIGURE, AGREEMENT_FIGURE]
    if stage_enabled("comparison"):
        outputs.append(COMPARISON_SETS_FIGURE)
    outputs += expand(TASK_PAGE, page=get_task_pages())
    if stage_enabled("publish"):
        outputs.append(PUBLISH_PAGE)
    return [*outputs, RUN_SUMMARY]


def get_run_summary_inputs(wildcards):
    """Every other final output: the summary is written after the jobs it describes."""
    return [o for o in get_final_outputs() if o != RUN_SUMMARY]
