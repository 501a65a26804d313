# Stage: the HTML report (`make report` = snakemake --report results/report.zip; global description
# workflow/report/workflow.rst). Each stage's figures are made by its own rules file; this file makes what belongs to
# no single stage: self-contained copies of the annotation task pages (images inlined, so they open inside the report)
# and the run summary (what ran, with which config files, how long), written after every other final output.
# Library: squidflow.report (style, pages, summary).


include: "inputs/report.smk"


# Tables and figures drawn from result tables (a second or two at any scale) run where Snakemake runs
# (localrules): on a cluster, a Slurm job each would wait in the queue and start a Snakemake for them.
localrules:
    run_summary,


rule report_task_page:
    input:
        page="results/annotation/{page}.html",
        dataset_images=DATASET_IMAGES,  # the page's images, inlined (declared: a job on object storage gets them)
    output:
        report(
            TASK_PAGE,
            caption="../report/report/task_pages.rst",
            category=get_task_page_category,
            subcategory="Annotation task pages",
            labels={"result": "{page}", "format": "html"},
        ),
    log:
        "logs/report_task_page/{page}.log",
    wildcard_constraints:
        page="hit_template|hit_preview|keyword_template|keyword_preview|comparison_hits",
    conda:
        "../../envs/reporting.yaml"
    script:
        "../../scripts/report_task_page.py"


# The published dataset's page (squidflow.report.dataset_page): what a reader downloads, in a category of its own.
rule publish_report_page:
    input:
        PUBLISH_DIR,
    output:
        report(
            PUBLISH_PAGE,
            caption="../report/report/published_dataset.rst",
            category="Published dataset",
            subcategory="The dataset card, configs, Croissant and LeWiDi files",
            labels={"result": "published dataset", "format": "html"},
        ),
    log:
        "logs/publish_report_page/publish_report_page.log",
    conda:
        "../../envs/reporting.yaml"
    script:
        "../../scripts/publish_report_page.py"


rule run_summary:
    input:
        get_run_summary_inputs,
    output:
        report(
            RUN_SUMMARY,
            caption="../report/report/run_summary.rst",
            category="Run",
            subcategory="Summary",
            labels={"result": "run summary", "format": "html"},
        ),
    log:
        "logs/run_summary/run_summary.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        configfiles=[str(f) for f in workflow.configfiles],
        stages=config["stages"],
        note=get_report_note("videos", "run_judgments"),
        repo=SQUIDFLOW_ROOT,
    script:
        "../../scripts/run_summary.py"
