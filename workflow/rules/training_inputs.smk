# Input functions of the training stage (workflow/rules/training.smk), kept apart from the rules as `snakemake --lint`
# asks.

TRAINING_TABLES = {
    "table1_training": "classification",
    "table3_calibration": "calibration",
    "table9_kl": "calibration",
}


def get_training_runs(experiment):
    """Run folders of an experiment: classification = the Table 1 variants (ES trains on SE, the others on SD),
    calibration = every training set × method; each for `seeds` seeds (0 .. seeds-1)."""
    section = config["training"][experiment]
    if experiment == "classification":
        combos = [("SE" if v == "ES" else "SD", v) for v in section["variants"]]
    else:
        combos = [(t, m) for t in section["train_sets"] for m in section["methods"]]
    return [
        f"results/runs/{experiment}/{train_set}/{method}/seed{seed}"
        for train_set, method in combos
        for seed in range(section["seeds"])
    ]


def get_table_metrics(wildcards):
    return [f"{run}/metrics.json" for run in get_training_runs(TRAINING_TABLES[wildcards.table])]


def get_training_pool_inputs(wildcards):
    """SE frames come from the frames stage; SD from standard_data.path, or else the demo videos' clean frames."""
    inputs = {"frames": "results/dataset/frames.parquet"}
    if wildcards.pool == "SD":
        path = config["standard_data"]["path"]
        if not path:
            inputs["truth"] = "results/videos/demo/truth.parquet"
            inputs["videos"] = "results/videos/videos.parquet"
        elif path.endswith(".parquet"):
            inputs["standard"] = path
    return inputs


def get_table_outputs():
    if not stage_enabled("tables"):
        return []
    return expand("results/tables/{table}.{ext}", table=list(TRAINING_TABLES), ext=["csv", "md", "tex"])
