# The input functions, params and paths of workflow/rules/training.smk (a rules file may not hold functions,
# says `snakemake --lint`); included at the top of training.smk.
from squidflow.training.config import TrainConfig

POOL_CACHE_TABLE = "results/training/cache/{pool}.parquet"
POOL_FRAMES_CACHE = "results/training/cache/{pool}_frames.npy"
POOL_FRAMES_TABLE = "results/training/cache/{pool}_frames.parquet"
TABLE1_FIGURE = "results/figures/table1_accuracy_by_certainty.png"
RELIABILITY_FIGURE = "results/figures/table3_reliability_{method}.png"
RUN_PREDICTIONS = "results/runs/{experiment}/{train_set}/{method}/seed{seed}/predictions.parquet"
EXPERIMENT_RUN_FILE = "results/runs/{{experiment}}/{run}/{name}"  # expand()ed over one experiment's runs

AUTHORS_SETS_TABLE = "results/training/authors_sets.parquet"


TRAINING_TABLES = {
    "table1_training": "classification",
    "table3_calibration": "calibration",
    "table9_kl": "calibration",
}


def get_training_runs(experiment):
    """Run folders of an experiment: classification = the Table 1 methods (ES trains on SE, the others on SD),
    calibration = every training set × method; each for `seeds` seeds (0 .. seeds-1)."""
    section = config["training"][experiment]
    if experiment == "classification":
        combos = [("SE" if v == "ES" else "SD", v) for v in section["methods"]]
    else:
        combos = [(t, m) for t in section["train_sets"] for m in section["methods"]]
    return [
        f"results/runs/{experiment}/{train_set}/{method}/seed{seed}"
        for train_set, method in combos
        for seed in range(section["seeds"])
    ]


def get_train_seeds(experiment):
    """The seeds of an experiment's runs, 0 .. seeds-1: the runs one `train_<experiment>` job trains in turn."""
    return list(range(config["training"][experiment]["seeds"]))


def get_train_outputs(experiment, name):
    """File `name` of every seed's run folder of one method and training set (the wildcards), for a batched job."""
    return [
        f"results/runs/{{experiment}}/{{train_set}}/{{method}}/seed{seed}/{name}"
        for seed in get_train_seeds(experiment)
    ]


def get_experiment_runs(experiment):
    """An experiment's runs as {train_set}/{method}/seed{seed} (get_training_runs, in its order): the outputs and
    logs of its one job (training.runs_per_job: experiment)."""
    prefix = f"results/runs/{experiment}/"
    return [run[len(prefix) :] for run in get_training_runs(experiment)]


def get_experiment_run_files(experiment, name):
    """File `name` of every run folder of an experiment, the experiment a wildcard (constrained to this one, so that
    the job's input and params functions read it as the other train rules' do)."""
    return expand(EXPERIMENT_RUN_FILE, run=get_experiment_runs(experiment), name=name)


def get_train_methods(wildcards):
    """The methods a train job trains: its own (rules train_classification, train_calibration), or every method of
    its experiment (training.runs_per_job: experiment)."""
    if hasattr(wildcards, "method"):
        return [wildcards.method]
    return list(config["training"][wildcards.experiment]["methods"])


def get_train_params(wildcards):
    """A job's `training` keys (TrainConfig's fields; not threads, mem_mb, the number of seeds or runs_per_job, which
    say how and which runs are scheduled); of `trainable` only the choices of the methods it trains (one method's: so
    changing another method's choice reruns nothing here; an experiment's, for one job per experiment); and the
    classification events."""
    training = config["training"]
    params = config_fields(TrainConfig, training)
    params["trainable"] = {m: training["trainable"][m] for m in get_train_methods(wildcards)}
    return {**params, "events": training["classification"]["events"]}


def get_training_pool_params():
    """What decoding a pool reads: the image geometry, the data seed and the events."""
    training = config["training"]
    return {**config_keys(training, ["resize", "crop", "data_seed"]), "events": training["classification"]["events"]}


def get_training_sets_params(wildcards):
    """What drawing an experiment's sets reads: the data seed, the events, the sets mode, which human means, and that
    experiment's set sizes (not its seeds or methods, which decide the runs)."""
    training = config["training"]
    not_sets = {"seeds", "methods", "train_sets"}
    params = {
        "data_seed": training["data_seed"],
        "sets": training["sets"],
        "human_means": get_human_means(),
        "classification": {k: v for k, v in training["classification"].items() if k not in not_sets},
    }
    if wildcards.experiment == "calibration":
        params["calibration"] = {k: v for k, v in training["calibration"].items() if k not in not_sets}
    return params


def get_table_method_order(wildcards):
    """A table's row order: the experiment's methods (Table 1's rows, Tables 3 and 9's), as configured."""
    return list(config["training"][TRAINING_TABLES[wildcards.table]]["methods"])


def get_table_metrics(wildcards):
    return [f"{run}/metrics.json" for run in get_training_runs(TRAINING_TABLES[wildcards.table])]


def get_table_predictions(wildcards):
    """The runs' per-image predictions, in the order of get_table_metrics (the tables' image-bootstrap intervals)."""
    return [f"{run}/predictions.parquet" for run in get_training_runs(TRAINING_TABLES[wildcards.table])]


def get_training_pool_inputs(wildcards):
    """SE frames come from the frames stage; SD from standard_data.path, or else the demo videos' clean frames."""
    inputs = {"frames": FRAMES_TABLE, "dataset_images": DATASET_IMAGES}
    if wildcards.pool == "SD":
        path = config["standard_data"]["path"]
        if not path:
            inputs["truth"] = DEMO_TRUTH_TABLE
            inputs["videos"] = VIDEO_MANIFEST
            inputs["demo_videos"] = expand(DEMO_VIDEO, video_id=DEMO_VIDEO_IDS)  # their clean frames are decoded
        elif path.endswith(".parquet"):
            inputs["standard"] = path
    return inputs


def get_training_frames_inputs(wildcards):
    """The pool's index, and the files its rows name that the workflow makes (the dataset's images; the demo's videos,
    whose clean frames the standard pool decodes): declared, so that a job on object storage gets its local copies."""
    inputs = {"index": POOL_CACHE_TABLE.format(pool=wildcards.pool), "dataset_images": DATASET_IMAGES}
    if wildcards.pool == "SD" and not config["standard_data"]["path"]:
        inputs["demo_videos"] = expand(DEMO_VIDEO, video_id=DEMO_VIDEO_IDS)
    return inputs


def get_training_outputs():
    if not stage_enabled("training"):
        return []
    return [
        *expand(TABLE_FILE, table=list(TRAINING_TABLES), ext=["csv", "md", "tex"]),
        *get_training_figure_outputs(),
    ]


# ---------------------------------------------------------------------------------------------- training fidelity
# The definition choices of Tables 1, 3 and 9 (the SQUID-E authors' sets, ECE, trainable layers, RS/MC variants,
# GA/AU geometry, which human means): their inputs, and the narrow params that name them in captions.
def get_release_experiments():
    """squid_e_release.experiments: the release's experiments/indices folder, a URL or a local folder."""
    return get_data_path(config["squid_e_release"]["experiments"])


def get_authors_sets_inputs(wildcards):
    """The local copies among the release's experiment files, judgments and dataset CSVs (URLs are fetched by the job)."""
    from squidflow.training.authors_sets import experiment_file_sources

    inputs = {}
    experiments = get_release_experiments()
    if not is_url(experiments):
        inputs["experiments"] = list(experiment_file_sources(experiments).values())
    for key, path in (
        ("judgments_csv", get_release_judgments_csv()),
        ("dataset_csv", get_data_path(config["squid_e_release"]["dataset_csv"])),
    ):
        if not is_url(path):
            inputs[key] = path
    return inputs


def get_human_means():
    """training.human_means with `auto` resolved: every judgment for the release's judgments (the tables then compare
    with the release's means), the annotator-quality-screened means otherwise."""
    choice = config["training"]["human_means"]
    if choice == "auto":
        return "all" if JUDGMENT_SOURCE == "release" else "screened"
    return choice


def get_training_sets_inputs(wildcards):
    """The pools, the image scores and judgments with their annotator report (for `human_means`), and the authors'
    sets when training.sets is authors."""
    inputs = {
        "sd": "results/training/cache/SD.parquet",
        "se": "results/training/cache/SE.parquet",
        "scores": IMAGE_SCORES_TABLE,
        "judgments": JUDGMENTS_TABLE,
        "report": ANNOTATOR_REPORT_TABLE,
    }
    if config["training"]["sets"] == "authors":
        inputs["authors"] = AUTHORS_SETS_TABLE
    return inputs


WHOLE_FRAME_METHODS = ("GA", "AU")


def uses_whole_frames(experiment, method):
    """GA and AU of Table 1 start from whole frames when training.augment_geometry is whole_frame."""
    training = config["training"]
    return (
        experiment == "classification"
        and method in WHOLE_FRAME_METHODS
        and training["augment_geometry"] == "whole_frame"
    )


def get_training_frames_short_side():
    return 2 * config["training"]["crop"]


def get_train_inputs(wildcards):
    """A job's sets and pool caches, plus the whole-frame cache (frames_<pool>, frames_index_<pool>) of the training
    pool of each of its GA/AU runs on whole frames: one run's, one method's or the whole experiment's."""
    inputs = {
        "sets": f"results/training/{wildcards.experiment}/sets.parquet",
        "sd": "results/training/cache/SD.npy",
        "se": "results/training/cache/SE.npy",
    }
    if hasattr(wildcards, "method"):
        runs = [(wildcards.train_set, wildcards.method)]
    else:
        runs = {tuple(run.split("/")[:2]) for run in get_experiment_runs(wildcards.experiment)}
    for pool in sorted({t for t, m in runs if uses_whole_frames(wildcards.experiment, m)}):
        inputs[f"frames_{pool}"] = POOL_FRAMES_CACHE.format(pool=pool)
        inputs[f"frames_index_{pool}"] = POOL_FRAMES_TABLE.format(pool=pool)
    return inputs


def get_table_sets_summary(wildcards):
    return f"results/training/{TRAINING_TABLES[wildcards.table]}/sets_summary.json"


def _choices(experiment, methods):
    training = config["training"]
    return {
        "sets": training["sets"],
        "target_event": training["calibration"]["target_event"] if experiment == "calibration" else None,
        "trainable": {m: training["trainable"][m] for m in methods},
        **(
            {"rs_scale": training["rs_scale"], "rs_label_smoothing": training["rs_label_smoothing"]}
            if "RS" in methods
            else {}
        ),
        **({"mc_average": training["mc_average"], "mc_samples": training["mc_samples"]} if "MC" in methods else {}),
        **({"augment_geometry": training["augment_geometry"]} if set(WHOLE_FRAME_METHODS) & set(methods) else {}),
        **(
            {"authors_ece_bins": training["authors_ece_bins"], "authors_ece_batch": training["authors_ece_batch"]}
            if experiment == "calibration"
            else {}
        ),
        "judgments_source": JUDGMENT_SOURCE,
        "backbone": training["backbone"],
    }


def get_table_choices(wildcards):
    """The definition choices a table's caption names: only those of its experiment and methods."""
    experiment = TRAINING_TABLES[wildcards.table]
    return _choices(experiment, get_table_method_order(wildcards))


def get_figure_choices(wildcards):
    if hasattr(wildcards, "method"):
        return _choices("calibration", [wildcards.method])
    return _choices("classification", list(config["training"]["classification"]["methods"]))


def get_accuracy_by_certainty_figure_metrics(wildcards):
    return [f"{run}/metrics.json" for run in get_training_runs("classification")]


def get_reliability_predictions(wildcards):
    return [
        f"{run}/predictions.parquet"
        for run in get_training_runs("calibration")
        if os.path.basename(os.path.dirname(run)) == wildcards.method
    ]


def get_training_figure_outputs():
    """Table 1 as a plot and a reliability diagram per Table 3 method."""
    return [
        TABLE1_FIGURE,
        *expand(RELIABILITY_FIGURE, method=config["training"]["calibration"]["methods"]),
    ]
