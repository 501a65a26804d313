# Stage: human judgments (SQUID-E §3.2, §4; SQUID-E supplement A.2, B, C, D.3).
# annotation tasks (variants A, B) -> judgments (MTurk batch results | simulated panel | SQUID-E release)
# -> annotator quality -> image scores -> Table 7 (agreement) and Figure 3.
# `judgments.source: release` needs neither videos nor frames (config/squid-e-release.yaml).


include: "inputs/judgments.smk"


# Round 1's tasks are written once (squidflow.judgments.issued): once hits_A.csv and hits_B.csv exist no rule makes
# them again, so a takedown, a changed config or a rerun never re-pairs the images people answered.
if 1 not in ISSUED_ROUNDS:

    rule annotation_hits:
        input:
            frames=FRAMES_TABLE,
        output:
            hits_A=HITS_A,
            hits_B=HITS_B,
            record=squidflow_issued.record_path(1),
        log:
            "logs/annotation_hits/annotation_hits.log",
        conda:
            "../../envs/reporting.yaml"
        params:
            annotation=config["annotation"],
            events=config["events"],
        script:
            "../../scripts/annotation_hits.py"


rule hit_pages:
    input:
        hits_A=HITS_A,
        frames=FRAMES_TABLE,  # the preview shows a HIT whose images are all in the dataset (a takedown's are not)
    output:
        template=HIT_TEMPLATE,
        preview="results/annotation/hit_preview.html",
    log:
        "logs/hit_pages/hit_pages.log",
    conda:
        "../../envs/reporting.yaml"
    script:
        "../../scripts/hit_pages.py"


# Label Studio (annotation.platform label_studio): per task a labeling config and import JSON, to import by hand or
# with `squidflow label-studio push` (squidflow.judgments.label_studio: tasks, server). A rating task's folder, once
# written, is issued: no rule makes it again (label_studio_task_constraint).
rule label_studio_tasks:
    input:
        unpack(get_label_studio_hits),
    output:
        config=f"{LABEL_STUDIO_TASKS_DIR}/{{ls_task}}/label_config.xml",
        tasks=f"{LABEL_STUDIO_TASKS_DIR}/{{ls_task}}/tasks.json",
        instructions=f"{LABEL_STUDIO_TASKS_DIR}/{{ls_task}}/instructions.html",
        project=f"{LABEL_STUDIO_TASKS_DIR}/{{ls_task}}/project.json",
    log:
        "logs/label_studio_tasks/{ls_task}.log",
    wildcard_constraints:
        ls_task=label_studio_task_constraint(),
    conda:
        "../../envs/reporting.yaml"
    params:
        images=get_label_studio_images(),
        images_per_hit=config["annotation"]["images_per_hit"],
        keywords_per_image=TEXT["gold"]["keywords_per_image"],
        project_prefix=config["annotation"]["label_studio"]["project_prefix"],
    script:
        "../../scripts/label_studio_tasks.py"


rule ingest_judgments:
    input:
        unpack(get_judgment_inputs),
    output:
        judgments=JUDGMENTS_TABLE,
        report="results/judgments/ingest_report.md",
        counts=INGEST_COUNTS,
    log:
        "logs/ingest_judgments/ingest_judgments.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        source=JUDGMENT_SOURCE,
        release_csv=get_release_judgments_csv(),
        batches=get_judgment_batches(),
        exports=get_label_studio_exports(),
        on_error=config["judgments"]["on_error"],
        on_empty=config["on_empty"],
        cache_dir=DOWNLOADS_DIR,
    script:
        "../../scripts/ingest_judgments.py"


rule annotator_quality:
    input:
        unpack(get_judgment_frames),
        judgments=JUDGMENTS_TABLE,
    output:
        report=ANNOTATOR_REPORT_TABLE,
    log:
        "logs/annotator_quality/annotator_quality.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        quality=config["judgments"]["quality"],
    script:
        "../../scripts/annotator_quality.py"


rule aggregate_judgments:
    input:
        judgments=JUDGMENTS_TABLE,
        report=EXCLUSIONS_TABLE,
    output:
        scores=IMAGE_SCORES_TABLE,
        high_certainty=HIGH_CERTAINTY_LIST,
    log:
        "logs/aggregate_judgments/aggregate_judgments.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        high_certainty=config["judgments"]["high_certainty"],
    script:
        "../../scripts/aggregate_judgments.py"


rule agreement_table:
    input:
        judgments=JUDGMENTS_TABLE,
        report=EXCLUSIONS_TABLE,
        high_certainty=HIGH_CERTAINTY_LIST,
    output:
        csv=report(
            AGREEMENT_TABLE_CSV,
            caption="../report/judgments/table7_agreement.rst",
            category="Human judgments",
            subcategory="Table 7: inter-annotator agreement",
            labels={"result": "Table 7", "format": "csv"},
        ),
        md=report(
            AGREEMENT_TABLE_MD,
            caption="../report/judgments/table7_agreement.rst",
            category="Human judgments",
            subcategory="Table 7: inter-annotator agreement",
            labels={"result": "Table 7", "format": "markdown"},
        ),
    log:
        "logs/agreement_table/agreement_table.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        pooling=config["judgments"]["pooling"],
        kappa_bins=config["judgments"]["kappa_bins"],
        on_empty=config["on_empty"],
        intervals=config["intervals"],
        report_name=lambda wildcards, input: input.report,  # named in the message that stops a variant with no rater
        exclude=config["judgments"]["quality"]["exclude"],
    script:
        "../../scripts/agreement_table.py"


rule judgments_figure:
    input:
        scores=IMAGE_SCORES_TABLE,
    output:
        png=report(
            FIG3_JUDGMENTS_FIGURE,
            caption="../report/judgments/judgments_figure.rst",
            category="Human judgments",
            subcategory="Figure 3: judgments per image",
            labels={"result": "Figure 3"},
        ),
    log:
        "logs/judgments_figure/judgments_figure.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        title=JUDGMENTS_FIGURE_TITLES[JUDGMENT_SOURCE],
    script:
        "../../scripts/judgments_figure.py"


# crowd-kit's annotator models (majority vote, Dawid-Skene, GLAD, MACE) beside the rubric: per-annotator skill,
# per-item uncertainty, and how each changes Table 7 (squidflow.judgments.crowd; the comparison sets' ratings:
# rule crowd_comparison).
rule crowd_aggregation:
    input:
        judgments=JUDGMENTS_TABLE,
        report=EXCLUSIONS_TABLE,
    output:
        annotators="results/judgments/crowd_annotators.csv",
        item_table="results/judgments/crowd_items.csv",
        csv=report(
            "results/tables/crowd_aggregation.csv",
            caption="../report/judgments/crowd_aggregation.rst",
            category="Human judgments",
            subcategory="Annotator models (crowd-kit)",
            labels={"result": "aggregations and Table 7", "format": "csv"},
        ),
        md=report(
            "results/tables/crowd_aggregation.md",
            caption="../report/judgments/crowd_aggregation.rst",
            category="Human judgments",
            subcategory="Annotator models (crowd-kit)",
            labels={"result": "aggregations and Table 7", "format": "markdown"},
        ),
    log:
        "logs/crowd_aggregation/crowd_aggregation.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        aggregation=config["judgments"]["aggregation"],
        crowd=config["judgments"]["crowd"],
        pooling=config["judgments"]["pooling"],
        kappa_bins=config["judgments"]["kappa_bins"],
        intervals=config["intervals"],
    script:
        "../../scripts/crowd_aggregation.py"


# Who is lenient, who is careless; Table 7 as a chart (squidflow.judgments.figures), for the report.
rule annotator_figure:
    input:
        judgments=JUDGMENTS_TABLE,
        report=EXCLUSIONS_TABLE,
    output:
        report(
            ANNOTATORS_FIGURE,
            caption="../report/judgments/annotator_figure.rst",
            category="Human judgments",
            subcategory="Annotators",
            labels={"result": "ratings per annotator, leniency and carelessness"},
        ),
    log:
        "logs/annotator_figure/annotator_figure.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        note=get_report_note("judgments"),
    script:
        "../../scripts/annotator_figure.py"


rule agreement_figure:
    input:
        AGREEMENT_TABLE_CSV,
    output:
        report(
            AGREEMENT_FIGURE,
            caption="../report/judgments/table7_agreement.rst",
            category="Human judgments",
            subcategory="Table 7: inter-annotator agreement",
            labels={"result": "Table 7 as a chart"},
        ),
    log:
        "logs/agreement_figure/agreement_figure.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        note=get_report_note("judgments"),
    script:
        "../../scripts/agreement_figure.py"


# Ambiguity or noise (docs/own-dataset.md): each rater with the evidence against them and a verdict, each image with a
# class and its reason (squidflow.judgments.triage, image_triage); judgments.quality.exclude picks the exclusions.
rule rater_triage:
    input:
        unpack(get_triage_predictions),
        judgments=JUDGMENTS_TABLE,
        report=ANNOTATOR_REPORT_TABLE,
    output:
        triage=RATER_TRIAGE_TABLE,
        exclusions=TRIAGE_EXCLUSIONS_TABLE,
        csv=report(
            "results/tables/rater_triage.csv",
            caption="../report/judgments/rater_triage.rst",
            category="Human judgments",
            subcategory="Ambiguity or noise",
            labels={"result": "rater triage", "format": "csv"},
        ),
        md=report(
            "results/tables/rater_triage.md",
            caption="../report/judgments/rater_triage.rst",
            category="Human judgments",
            subcategory="Ambiguity or noise",
            labels={"result": "rater triage", "format": "markdown"},
        ),
    log:
        "logs/rater_triage/rater_triage.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        triage=config["judgments"]["triage"],
        exclude=config["judgments"]["quality"]["exclude"],
        crowd=config["judgments"]["crowd"],
        intervals=config["intervals"],
        events=TRIAGE_EVENTS,
        events_config=config["events"],
    script:
        "../../scripts/rater_triage.py"


rule image_triage:
    input:
        unpack(get_triage_predictions),
        unpack(get_judgment_frames),
        judgments=JUDGMENTS_TABLE,
        triage=RATER_TRIAGE_TABLE,
    output:
        images=IMAGE_TRIAGE_TABLE,
        csv=report(
            "results/tables/image_triage.csv",
            caption="../report/judgments/image_triage.rst",
            category="Human judgments",
            subcategory="Ambiguity or noise",
            labels={"result": "image triage", "format": "csv"},
        ),
        md=report(
            "results/tables/image_triage.md",
            caption="../report/judgments/image_triage.rst",
            category="Human judgments",
            subcategory="Ambiguity or noise",
            labels={"result": "image triage", "format": "markdown"},
        ),
        figure=report(
            IMAGE_TRIAGE_FIGURE,
            caption="../report/judgments/image_triage.rst",
            category="Human judgments",
            subcategory="Ambiguity or noise",
            labels={"result": "image triage", "format": "contact sheet"},
        ),
    log:
        "logs/image_triage/image_triage.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        triage=config["judgments"]["triage"],
        exclude=config["judgments"]["quality"]["exclude"],
        intervals=config["intervals"],
        events=TRIAGE_EVENTS,
        events_config=config["events"],
        note=get_report_note("judgments"),
    script:
        "../../scripts/image_triage.py"


# The proof on planted faults: the SIMULATED panel's planted raters and swapped images against the triage.
rule triage_validation:
    input:
        triage=RATER_TRIAGE_TABLE,
        images=IMAGE_TRIAGE_TABLE,
        planted=PLANTED_FAULTS,
    output:
        csv=report(
            "results/tables/triage_validation.csv",
            caption="../report/judgments/triage_validation.rst",
            category="Human judgments",
            subcategory="Ambiguity or noise",
            labels={"result": "triage against planted faults", "format": "csv"},
        ),
        md=report(
            "results/tables/triage_validation.md",
            caption="../report/judgments/triage_validation.rst",
            category="Human judgments",
            subcategory="Ambiguity or noise",
            labels={"result": "triage against planted faults", "format": "markdown"},
        ),
    log:
        "logs/triage_validation/triage_validation.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        triage=config["judgments"]["triage"],
        min_skill=config["judgments"]["crowd"]["min_skill"],
        exclude=config["judgments"]["quality"]["exclude"],
        panel=config["judgments"]["panel"],
    script:
        "../../scripts/triage_validation.py"


# The next round of ratings (annotation.next_round): per soft label the ratings that bring its interval towards the
# target (squidflow.judgments.allocation), from the judgments after the latest round with the excluded raters left
# out, as round <k>'s HITs in round 1's format (squidflow.judgments.next_round). Written once: the next run reads them
# as issued (squidflow.judgments.issued).
if NEXT_ROUND:

    rule next_round:
        input:
            unpack(get_triage_predictions),
            judgments=JUDGMENTS_TABLE,
            exclusions=EXCLUSIONS_TABLE,
            hits_A=HITS_A,
            hits_B=HITS_B,
        output:
            hits_A=squidflow_issued.hits_paths(NEXT_ROUND)["A"],
            hits_B=squidflow_issued.hits_paths(NEXT_ROUND)["B"],
            chosen=f"{squidflow_issued.round_dir(NEXT_ROUND)}/chosen.csv",
            plan=squidflow_issued.plan_path(NEXT_ROUND),
            record=squidflow_issued.record_path(NEXT_ROUND),
        log:
            "logs/next_round/next_round.log",
        conda:
            "../../envs/reporting.yaml"
        params:
            next_round=config["annotation"]["next_round"],
            annotation=config["annotation"],
            intervals=config["intervals"],
            round=NEXT_ROUND,
            events=TRIAGE_EVENTS,
            events_config=config["events"],
        script:
            "../../scripts/next_round.py"


# The latest next round's plan against the target: its table and the projected ratings-to-target figure, the images
# a takedown removed left out (squidflow.judgments.plan_report).
if PLANNED_ROUND:

    rule next_round_plan:
        input:
            plan=squidflow_issued.plan_path(PLANNED_ROUND),
            frames=FRAMES_TABLE,
        output:
            plan_csv=report(
                NEXT_ROUND_PLAN_CSV,
                caption="../report/judgments/next_round_plan.rst",
                category="Human judgments",
                subcategory="Ambiguity or noise",
                labels={"result": "next round: plan against the target", "format": "csv"},
            ),
            plan_md=report(
                NEXT_ROUND_PLAN_TABLE,
                caption="../report/judgments/next_round_plan.rst",
                category="Human judgments",
                subcategory="Ambiguity or noise",
                labels={"result": "next round: plan against the target", "format": "markdown"},
            ),
            figure=report(
                NEXT_ROUND_FIGURE,
                caption="../report/judgments/next_round_plan.rst",
                category="Human judgments",
                subcategory="Ambiguity or noise",
                labels={"result": "next round: plan against the target", "format": "figure"},
            ),
        log:
            "logs/next_round_plan/next_round_plan.log",
        conda:
            "../../envs/reporting.yaml"
        params:
            next_round=config["annotation"]["next_round"],
            assignments_per_hit=config["annotation"]["assignments_per_hit"],
            intervals=config["intervals"],
            round=PLANNED_ROUND,
            source=JUDGMENT_SOURCE,
            note=get_report_note("judgments"),
        script:
            "../../scripts/next_round_plan.py"


rule next_round_effect:
    input:
        unpack(get_next_round_effect_inputs),
        judgments=JUDGMENTS_TABLE,
    output:
        csv=report(
            "results/tables/next_round.csv",
            caption="../report/judgments/next_round.rst",
            category="Human judgments",
            subcategory="Ambiguity or noise",
            labels={"result": "next round: intervals before and after", "format": "csv"},
        ),
        md=report(
            "results/tables/next_round.md",
            caption="../report/judgments/next_round.rst",
            category="Human judgments",
            subcategory="Ambiguity or noise",
            labels={"result": "next round: intervals before and after", "format": "markdown"},
        ),
    log:
        "logs/next_round_effect/next_round_effect.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        intervals=config["intervals"],
        strategy=config["annotation"]["next_round"]["strategy"],
        next_round=config["annotation"]["next_round"],
    script:
        "../../scripts/next_round_effect.py"


# The keyword task (variant K): people's keywords per image, the gold of the text baselines (workflow/rules/text.smk;
# "Apples to Oranges", the UNT dataset's keyword annotations). Library: squidflow.judgments.keywords.
rule keyword_hits:
    input:
        frames=FRAMES_TABLE,
    output:
        hits=KEYWORD_HITS,
        template=KEYWORD_TEMPLATE,
        preview="results/annotation/keyword_preview.html",
    log:
        "logs/keyword_hits/keyword_hits.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        images_per_hit=config["annotation"]["images_per_hit"],
        image_base_url=config["annotation"]["image_base_url"],
        seed=config["annotation"]["seed"],
        keywords_per_image=TEXT["gold"]["keywords_per_image"],
        max_length=TEXT["gold"]["max_length"],
    script:
        "../../scripts/keyword_hits.py"


rule ingest_keywords:
    input:
        unpack(get_keyword_gold_inputs),
    output:
        keywords=KEYWORD_GOLD,
        report="results/judgments/keywords_ingest_report.md",
    log:
        "logs/ingest_keywords/ingest_keywords.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        batches=get_keyword_batches(),
        on_error=config["judgments"]["on_error"],
        max_length=TEXT["gold"]["max_length"],
        source="simulated" if JUDGMENT_SOURCE == "simulated" else "mturk",
    script:
        "../../scripts/ingest_keywords.py"
