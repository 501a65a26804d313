# Stage: seed-replicated training runs and result tables (SQUID-E §5.1 and §5.3, SQUID-E supplement D.1 and D.4).
# Images are decoded once per pool into a memory-mapped cache; every run is a job
# results/runs/{experiment}/{train_set}/{method}/seed{seed}/; every table is a target that builds only its runs.


include: "inputs/training.smk"


# Tables and figures drawn from result tables (a second or two at any scale) run where Snakemake runs
# (localrules): on a cluster, a Slurm job each would wait in the queue and start a Snakemake for them.
localrules:
    result_table,
    accuracy_by_certainty_figure,
    method_reliability_figure,


rule make_training_cache:
    input:
        unpack(get_training_pool_inputs),
    output:
        cache="results/training/cache/{pool}.npy",
        index=POOL_CACHE_TABLE,
    log:
        "logs/make_training_cache/{pool}.log",
    benchmark:
        "results/benchmarks/make_training_cache/{pool}.tsv"
    wildcard_constraints:
        pool="SD|SE",
    conda:
        "../../envs/training.yaml"
    threads: 1
    params:
        standard_data=config["standard_data"],
        training=get_training_pool_params(),
    script:
        "../../scripts/make_training_cache.py"


rule training_sets:
    input:
        unpack(get_training_sets_inputs),
    output:
        sets="results/training/{experiment}/sets.parquet",
        summary="results/training/{experiment}/sets_summary.json",
    log:
        "logs/training_sets/{experiment}.log",
    wildcard_constraints:
        experiment="classification|calibration",
    conda:
        "../../envs/training.yaml"
    params:
        training=get_training_sets_params,
        events=config["events"],
    script:
        "../../scripts/training_sets.py"


# Which of the two train rules below makes a run file, as training.runs_per_job says (both could: Snakemake takes the
# one ordered first). The schema's description says when to use which.
if config["training"]["runs_per_job"] == "seeds":

    ruleorder: train_classification > train_experiment_classification
    ruleorder: train_calibration > train_experiment_calibration

else:

    ruleorder: train_experiment_classification > train_classification
    ruleorder: train_experiment_calibration > train_calibration


# All seeds of one method and training set per job (training.runs_per_job: seeds): one torch process
# pays the start-up (torch, timm: most of a small run's CPU) once and trains the seeds one after the other, each run
# seeded afresh and writing its own run folder, log and train.log, so the results are the same bytes. The
# job holds one GPU slot (squidflow.gpu) for all its runs; asking for one run's file builds its method's seeds. A rule
# per experiment, since the number of seeds (the job's outputs) is the experiment's; all train rules run
# scripts/train.py.
rule train_classification:
    input:
        unpack(get_train_inputs),
    output:
        predictions=get_train_outputs("classification", "predictions.parquet"),
        metrics=get_train_outputs("classification", "metrics.json"),
        train_log=get_train_outputs("classification", "train.log"),
    log:
        expand(
            "logs/train/{{experiment}}/{{train_set}}/{{method}}/seed{seed}.log", seed=get_train_seeds("classification")
        ),
    benchmark:
        "results/benchmarks/train/{experiment}/{train_set}/{method}.tsv"
    wildcard_constraints:
        experiment="classification",
        train_set="SD|SE",
        method="[A-Z]{2}",
    conda:
        "../../envs/training.yaml"
    threads: config["training"]["threads"]
    resources:
        gpu=1,
        mem_mb=config["training"]["mem_mb"],
    params:
        training=get_train_params,
    script:
        "../../scripts/train.py"


use rule train_classification as train_calibration with:
    output:
        predictions=get_train_outputs("calibration", "predictions.parquet"),
        metrics=get_train_outputs("calibration", "metrics.json"),
        train_log=get_train_outputs("calibration", "train.log"),
    log:
        expand("logs/train/{{experiment}}/{{train_set}}/{{method}}/seed{seed}.log", seed=get_train_seeds("calibration")),
    wildcard_constraints:
        experiment="calibration",
        train_set="SD|SE",
        method="[A-Z]{2}",


# Every run of one experiment in one job (training.runs_per_job: experiment, the default): every training set,
# method and seed of Table 1 (classification) or of Tables 3 and 9 (calibration), one after the other in one torch
# process on the job's one GPU slot, each run seeded afresh and writing its own run folder and log as above (the same
# bytes). On the small DAG the start-up (about 4 s of a 5 s run) is then paid twice instead of 19 times. Its params
# hold every method's `trainable` choice, so changing one retrains the experiment. Asking for one run's file builds
# its experiment's job.
rule train_experiment_classification:
    input:
        unpack(get_train_inputs),
    output:
        predictions=get_experiment_run_files("classification", "predictions.parquet"),
        metrics=get_experiment_run_files("classification", "metrics.json"),
        train_log=get_experiment_run_files("classification", "train.log"),
    log:
        expand("logs/train/{{experiment}}/{run}.log", run=get_experiment_runs("classification")),
    benchmark:
        "results/benchmarks/train/{experiment}.tsv"
    wildcard_constraints:
        experiment="classification",
    conda:
        "../../envs/training.yaml"
    threads: config["training"]["threads"]
    resources:
        gpu=1,
        mem_mb=config["training"]["mem_mb"],
    params:
        training=get_train_params,
    script:
        "../../scripts/train.py"


use rule train_experiment_classification as train_experiment_calibration with:
    output:
        predictions=get_experiment_run_files("calibration", "predictions.parquet"),
        metrics=get_experiment_run_files("calibration", "metrics.json"),
        train_log=get_experiment_run_files("calibration", "train.log"),
    log:
        expand("logs/train/{{experiment}}/{run}.log", run=get_experiment_runs("calibration")),
    wildcard_constraints:
        experiment="calibration",


rule result_table:
    input:
        metrics=get_table_metrics,
        predictions=get_table_predictions,
        sets=get_table_sets_summary,
    output:
        csv=report(
            TABLE_CSV,
            category="Training",
            subcategory="{table}",
            labels={"table": "{table}", "format": "csv"},
            caption="../report/training/result_table.rst",
        ),
        md=report(
            TABLE_MD,
            category="Training",
            subcategory="{table}",
            labels={"table": "{table}", "format": "markdown"},
            caption="../report/training/result_table.rst",
        ),
        tex=report(
            TABLE_TEX,
            category="Training",
            subcategory="{table}",
            labels={"table": "{table}", "format": "latex"},
            caption="../report/training/result_table.rst",
        ),
    log:
        "logs/result_table/{table}.log",
    wildcard_constraints:
        table="|".join(TRAINING_TABLES),
    conda:
        "../../envs/reporting.yaml"
    params:
        order=get_table_method_order,
        ece_bins=config["training"]["ece_bins"],
        kl_eps=config["training"]["kl_eps"],
        choices=get_table_choices,
        intervals=config["intervals"],
    script:
        "../../scripts/result_table.py"


# The authors' own image sets of Tables 1 and 3 (the release's experiments/indices/*.json), mapped to frames: built
# from the release files alone (no video, no frame), so it can be checked and compared offline.
rule authors_sets:
    input:
        unpack(get_authors_sets_inputs),
    output:
        AUTHORS_SETS_TABLE,
    log:
        "logs/authors_sets/authors_sets.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        experiments=get_release_experiments(),
        judgments_csv=get_release_judgments_csv(),
        dataset_csv=get_data_path(config["squid_e_release"]["dataset_csv"]),
        cache_dir=DOWNLOADS_DIR,
    script:
        "../../scripts/authors_sets.py"


# GA and AU start from the whole frame (SQUID-E supplement D.1: Resize(512) -> RandomPerspective -> RandomCrop(256)):
# the pool's training images resized once to a 2·crop short side, for the runs of those methods only.
rule make_training_frames:
    input:
        unpack(get_training_frames_inputs),
    output:
        cache=POOL_FRAMES_CACHE,
        index=POOL_FRAMES_TABLE,
    log:
        "logs/make_training_frames/{pool}.log",
    benchmark:
        "results/benchmarks/make_training_frames/{pool}.tsv"
    wildcard_constraints:
        pool="SD|SE",
    conda:
        "../../envs/training.yaml"
    threads: 1
    params:
        short_side=get_training_frames_short_side(),
    script:
        "../../scripts/make_training_frames.py"


rule accuracy_by_certainty_figure:
    input:
        get_accuracy_by_certainty_figure_metrics,
    output:
        report(
            TABLE1_FIGURE,
            category="Training",
            subcategory="table1_training",
            labels={"table": "table1_training", "format": "figure: accuracy by certainty bin"},
            caption="../report/training/accuracy_by_certainty_figure.rst",
        ),
    log:
        "logs/accuracy_by_certainty_figure/accuracy_by_certainty_figure.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        order=config["training"]["classification"]["methods"],
        choices=get_figure_choices,
    script:
        "../../scripts/accuracy_by_certainty_figure.py"


rule method_reliability_figure:
    input:
        get_reliability_predictions,
    output:
        report(
            RELIABILITY_FIGURE,
            category="Training",
            subcategory="table3_calibration",
            labels={"table": "table3_calibration", "format": "figure: reliability diagram of {method}"},
            caption="../report/training/method_reliability_figure.rst",
        ),
    log:
        "logs/method_reliability_figure/{method}.log",
    wildcard_constraints:
        method="[A-Z]{2}",
    conda:
        "../../envs/reporting.yaml"
    params:
        choices=get_figure_choices,
    script:
        "../../scripts/method_reliability_figure.py"
