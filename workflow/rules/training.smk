# Stage: seed-replicated training runs and result tables (SQUID-E §5.1 and §5.3, SQUID-E supplement D.1 and D.4).
# Images are decoded once per pool into a memory-mapped cache; every run is a job
# results/runs/{experiment}/{train_set}/{method}/seed{seed}/; every table is a target that builds only its runs.


rule make_training_cache:
    input:
        unpack(get_training_pool_inputs),
    output:
        cache="results/training/cache/{pool}.npy",
        index="results/training/cache/{pool}.parquet",
    params:
        standard_data=config["standard_data"],
        training=get_training_pool_params(),
    wildcard_constraints:
        pool="SD|SE",
    log:
        "logs/make_training_cache/{pool}.log",
    benchmark:
        "results/benchmarks/make_training_cache/{pool}.tsv"
    threads: 1
    conda:
        "../../envs/training.yaml"
    script:
        "../../scripts/make_training_cache.py"


rule training_sets:
    input:
        sd="results/training/cache/SD.parquet",
        se="results/training/cache/SE.parquet",
        scores="results/judgments/image_scores.parquet",
    output:
        "results/training/{experiment}/sets.parquet",
    params:
        training=get_training_sets_params,
        events=config["events"],
    wildcard_constraints:
        experiment="classification|calibration",
    log:
        "logs/training_sets/{experiment}.log",
    conda:
        "../../envs/training.yaml"
    script:
        "../../scripts/training_sets.py"


rule train:
    input:
        sets="results/training/{experiment}/sets.parquet",
        sd="results/training/cache/SD.npy",
        se="results/training/cache/SE.npy",
    output:
        predictions="results/runs/{experiment}/{train_set}/{method}/seed{seed}/predictions.parquet",
        metrics="results/runs/{experiment}/{train_set}/{method}/seed{seed}/metrics.json",
        train_log="results/runs/{experiment}/{train_set}/{method}/seed{seed}/train.log",
    params:
        training=get_train_params(),
    wildcard_constraints:
        experiment="classification|calibration",
        train_set="SD|SE",
        method="[A-Z]{2}",
    log:
        "logs/train/{experiment}/{train_set}/{method}/seed{seed}.log",
    benchmark:
        "results/benchmarks/train/{experiment}/{train_set}/{method}/seed{seed}.tsv"
    threads: config["training"]["threads"]
    resources:
        gpu=1,
        mem_mb=config["training"]["mem_mb"],
    conda:
        "../../envs/training.yaml"
    script:
        "../../scripts/train.py"


rule result_table:
    input:
        get_table_metrics,
    output:
        csv="results/tables/{table}.csv",
        md="results/tables/{table}.md",
        tex="results/tables/{table}.tex",
    params:
        order=get_table_method_order,
        ece_bins=config["training"]["ece_bins"],
    wildcard_constraints:
        table="|".join(TRAINING_TABLES),
    log:
        "logs/result_table/{table}.log",
    conda:
        "../../envs/reporting.yaml"
    script:
        "../../scripts/result_table.py"
