# Stage: any model measured against human certainty (SQUID-E §5.2, supplement D.2–D.4).
# predictions (configured models, the zero-shot CLIP baseline, the trained classifiers, text baselines)
# -> per model accuracy by certainty bin -> Tables 2 and 8; every training run -> results/evaluation/runs.parquet.
# Tables 2 and 8 need only results/judgments/image_scores.parquet (the release judgments are enough).


include: "inputs/evaluation.smk"


# Tables and figures drawn from result tables and runs' predictions (seconds at any scale) run where Snakemake runs
# (localrules): on a cluster, a Slurm job each would wait in the queue and start a Snakemake for them.
# model_accuracy and per_image_points fetch a model's predictions, image table and vocabulary from their URLs, as the
# downloads do: they run where Snakemake runs too (compute nodes of many clusters have no internet).
localrules:
    run_predictions,
    evaluate_runs,
    model_accuracy,
    per_image_points,
    evaluation_table,
    soft_label_table,
    model_reliability_figure,
    annotation_saturation_figure,


rule run_predictions:
    input:
        run=RUN_PREDICTIONS,
    output:
        "results/evaluation/predictions/runs/{experiment}/{train_set}/{method}/seed{seed}.parquet",
    log:
        "logs/run_predictions/{experiment}/{train_set}/{method}/seed{seed}.log",
    wildcard_constraints:
        experiment="classification",
        train_set="SD|SE",
        method="[A-Z]{2}",
    conda:
        "../../envs/reporting.yaml"
    params:
        classes=config["training"]["classification"]["events"],
    script:
        "../../scripts/run_predictions.py"


rule zero_shot_predictions:
    input:
        unpack(get_zero_shot_inputs),
    output:
        ZERO_SHOT_PREDICTIONS,
    log:
        "logs/zero_shot_predictions/zero_shot_predictions.log",
    benchmark:
        "results/benchmarks/zero_shot_predictions/zero_shot_predictions.tsv"
    conda:
        "../../envs/text.yaml"
    threads: EVALUATION["zero_shot"]["threads"]
    resources:
        gpu=1,
    params:
        zero_shot=EVALUATION["zero_shot"],
        vocabulary=get_evaluation_vocabulary(),
        cache_dir=DOWNLOADS_DIR,
    script:
        "../../scripts/zero_shot_predictions.py"


rule model_accuracy:
    input:
        unpack(get_model_accuracy_inputs),
    output:
        accuracy="results/evaluation/models/{model}.parquet",
        summary="results/evaluation/models/{model}.json",
    log:
        "logs/model_accuracy/{model}.log",
    wildcard_constraints:
        model=r"[A-Za-z0-9.\-_]+",
    conda:
        "../../envs/reporting.yaml"
    params:
        model=get_evaluation_model,
        variant=EVALUATION["variant"],
        top_k=EVALUATION["top_k"],
        label_map=EVALUATION["label_map"],
        vocabulary=get_evaluation_vocabulary(),
        events=config["events"],
        cache_dir=DOWNLOADS_DIR,
        intervals=config["intervals"],
    script:
        "../../scripts/model_accuracy.py"


rule evaluation_table:
    input:
        unpack(get_evaluation_table_inputs),
    output:
        csv=report(
            TABLE_CSV,
            category="Evaluation",
            subcategory="{table}",
            labels={"table": "{table}", "format": "csv"},
            caption="../report/evaluation/verb_tables.rst",
        ),
        md=report(
            TABLE_MD,
            category="Evaluation",
            subcategory="{table}",
            labels={"table": "{table}", "format": "markdown"},
            caption="../report/evaluation/verb_tables.rst",
        ),
        tex=report(
            TABLE_TEX,
            category="Evaluation",
            subcategory="{table}",
            labels={"table": "{table}", "format": "latex"},
            caption="../report/evaluation/verb_tables.rst",
        ),
    log:
        "logs/evaluation_table/{table}.log",
    wildcard_constraints:
        table="table2_verbs|table8_alt_bins",
    conda:
        "../../envs/reporting.yaml"
    params:
        models=get_evaluation_table_models,
        variant=EVALUATION["variant"],
        top_k=EVALUATION["top_k"],
        label_map=EVALUATION["label_map"],
        source=JUDGMENT_SOURCE,
        intervals=config["intervals"],
    script:
        "../../scripts/evaluation_table.py"


rule evaluate_runs:
    input:
        scores=IMAGE_SCORES_TABLE,
        runs=get_evaluated_runs(),
    output:
        EVALUATION_RUNS_TABLE,
    log:
        "logs/evaluate_runs/evaluate_runs.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        classification_events=config["training"]["classification"]["events"],
        calibration_target=config["training"]["calibration"]["target_event"],
        events=config["events"],
        kl_eps=config["training"]["kl_eps"],
    script:
        "../../scripts/evaluate_runs.py"


# The uncertainty core (issue 24): every Table 2 model's probabilities against the people's ratings — soft-label
# measures, calibration beyond one binned ECE, the people's own leave-one-rater-out ceiling — and its two figures.
# The per-image points they measure are computed once (squidflow.evaluation.points) and read by all three.
rule per_image_points:
    input:
        unpack(get_soft_label_inputs),
    output:
        PER_IMAGE_POINTS_TABLE,
    log:
        "logs/per_image_points/per_image_points.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        models=get_soft_label_models,
        variant=EVALUATION["variant"],
        label_map=EVALUATION["label_map"],
        events=config["events"],
        cache_dir=DOWNLOADS_DIR,
    script:
        "../../scripts/per_image_points.py"


rule soft_label_table:
    input:
        points=PER_IMAGE_POINTS_TABLE,
    output:
        csv=report(
            f"{SOFT_LABEL_TABLE}.csv",
            category="Evaluation",
            subcategory="soft_label_measures",
            labels={"table": "soft_label_measures", "format": "csv"},
            caption="../report/evaluation/soft_label_measures.rst",
        ),
        md=report(
            f"{SOFT_LABEL_TABLE}.md",
            category="Evaluation",
            subcategory="soft_label_measures",
            labels={"table": "soft_label_measures", "format": "markdown"},
            caption="../report/evaluation/soft_label_measures.rst",
        ),
        tex=report(
            f"{SOFT_LABEL_TABLE}.tex",
            category="Evaluation",
            subcategory="soft_label_measures",
            labels={"table": "soft_label_measures", "format": "latex"},
            caption="../report/evaluation/soft_label_measures.rst",
        ),
    log:
        "logs/soft_label_table/soft_label_table.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        variant=EVALUATION["variant"],
        intervals=config["intervals"],
        ece_bins=EVALUATION["ece_bins"],
        binary_bins=EVALUATION["binary_ece_bins"],
        source=JUDGMENT_SOURCE,
    script:
        "../../scripts/soft_label_table.py"


rule model_reliability_figure:
    input:
        points=PER_IMAGE_POINTS_TABLE,
    output:
        report(
            MODEL_RELIABILITY_FIGURE,
            category="Evaluation",
            subcategory="soft_label_measures",
            labels={"table": "soft_label_measures", "format": "figure: reliability diagrams"},
            caption="../report/evaluation/model_reliability_figure.rst",
        ),
    log:
        "logs/model_reliability_figure/model_reliability_figure.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        intervals=config["intervals"],
        ece_bins=EVALUATION["ece_bins"],
        source=JUDGMENT_SOURCE,
    script:
        "../../scripts/model_reliability_figure.py"


rule annotation_saturation_figure:
    input:
        points=PER_IMAGE_POINTS_TABLE,
    output:
        report(
            SATURATION_FIGURE,
            category="Evaluation",
            subcategory="soft_label_measures",
            labels={"table": "soft_label_measures", "format": "figure: annotation saturation"},
            caption="../report/evaluation/annotation_saturation_figure.rst",
        ),
    log:
        "logs/annotation_saturation_figure/annotation_saturation_figure.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        intervals=config["intervals"],
        repeats=EVALUATION["saturation_repeats"],
        source=JUDGMENT_SOURCE,
    script:
        "../../scripts/annotation_saturation_figure.py"
