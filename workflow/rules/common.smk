# Glue shared by every stage: the library on the path, config validation, wildcard constraints, input functions.
import dataclasses
import os
import sys

import polars as pl

# The library lives in src/. It is installed in .venv (`make setup`); this line also makes it importable when
# snakemake runs from another environment. Rule scripts find it through scripts/squidflow (a link to src/squidflow),
# because Snakemake puts each script's folder on its path — in conda envs and on cluster nodes too.
sys.path.insert(0, os.path.join(workflow.basedir, "src"))

from squidflow.comparison.sets import ComparisonConfig
from snakemake.exceptions import WorkflowError
from squidflow.config import ConfigError, validate_config
from squidflow.evaluation.models import model_id as evaluation_model_id
from squidflow.fetch import is_url
from squidflow.frames.extract import FramesConfig
from squidflow.frames.selection import SelectionConfig
from squidflow.frames.splits import SplitsConfig
from squidflow.litmus.games import source_of as litmus_game_source
from squidflow import slurm as squidflow_slurm
from squidflow.videos import manifest as squidflow_manifest

# The config is checked here, before any job (its files were parsed strictly in workflow/checks.smk): every key
# against the schema, keys that go together, and every local input path the config names (relative to the
# working directory). A problem stops the run with its key and fix.
try:
    validate_config(config, workflow.source_path("../schemas/config.schema.yaml"), inputs_base=os.getcwd(),
                    repo_root=workflow.basedir)
except ConfigError as _error:
    raise WorkflowError(str(_error)) from None  # the message says it all: no traceback
# (The `onstart:` handler — writable results/ and logs/, the Slurm watch — is in workflow/checks.smk: a rules file
# with functions may not also hold a handler, says `snakemake --lint`.)


wildcard_constraints:
    video_id=r"[A-Za-z0-9_\-]+",
    event=r"[A-Za-z0-9_\-]+",
    backbone=r"[a-z0-9_]+",
    variant=r"[AB]",
    seed=r"\d+",


def stage_enabled(stage):
    return stage in config["stages"]


def get_data_path(path):
    """A public-data location from the config: a URL as is; a relative local path from the working directory, else
    from the repository root (so `../shared/data/...` finds an offline mirror beside the clone from any --directory)."""
    if is_url(path) or os.path.isabs(path) or os.path.exists(path):
        return path
    beside_repo = os.path.normpath(os.path.join(workflow.basedir, path))
    return beside_repo if os.path.exists(beside_repo) else path


def config_keys(section, keys):
    """Only `keys` of a config section, for a rule's `params:`. A job's params name exactly the values it uses, so
    Snakemake reruns it when one of them changes and never when another key of the section does (threads, memory,
    the number of seeds)."""
    return {k: section[k] for k in keys if k in section}


def config_fields(cls, section):
    """The keys of a config section that the library's config dataclass `cls` reads (see config_keys)."""
    return config_keys(section, [f.name for f in dataclasses.fields(cls)])


def get_final_outputs():
    """The default target: the final outputs of every enabled stage (each stage file defines its getter)."""
    return [
        *get_video_outputs(),
        *get_frame_outputs(),
        *get_judgment_outputs(),
        *get_comparison_outputs(),
        *get_table_outputs(),
        *get_evaluation_outputs(),
        *get_litmus_outputs(),
        *get_text_outputs(),
        *get_report_outputs(),
    ]


# ---------------------------------------------------------------------------------------------- videos
VIDEO_CANDIDATES = "results/videos/candidates.parquet"
VIDEO_MANIFEST = "results/videos/videos.parquet"
DROPPED_REPORT = squidflow_manifest.DROPPED_REPORT


def get_video_outputs():
    if not stage_enabled("videos"):
        return []
    return [VIDEO_MANIFEST, "results/videos/download_report.md", DROPPED_REPORT]


def get_video_candidate_inputs(wildcards):
    """Files the listing reads: the demo catalog (ties make_demo_videos into the DAG) and local url lists."""
    inputs = {}
    types = [s["type"] for s in config["sources"]]
    if "demo" in types:
        inputs["demo_catalog"] = "results/videos/demo/catalog.parquet"
        # video_manifest records the subtitles beside each demo video: they must exist before the listing, not
        # just happen to (on a cluster make_demo_subtitles may still be queued when the manifest is written)
        inputs["demo_subtitles"] = rules.make_demo_subtitles.output.vtt
    inputs["url_lists"] = [s["path"] for s in config["sources"] if s["type"] == "urls"]
    return inputs


def retry_failed_requested():
    return config["retry_failed"]


STATUS_DIR = "results/videos/status"
DOWNLOAD_SETTINGS = "results/videos/download_settings.json"
BRAKE_DIR = "results/videos/brake"
RUN_STARTED = squidflow_manifest.run_started()  # a table written after this is this invocation's own retry


def get_video_status_files(wildcards):
    """One status table per download shard, when the checkpoint has listed videos to download (none: no job), and
    the local check's table when it has listed files already on disk.

    The newest generation on disk is taken as is; with retry_failed a table with videos that are not ok asks for
    the next generation, whose job tries those videos again (older tables stay as the history).
    """
    candidates = checkpoints.video_candidates.get().output.candidates
    kinds = pl.scan_parquet(candidates).select(
        pl.col("download").any().alias("download"), (~pl.col("download")).any().alias("on_disk")
    ).collect()
    paths = []
    if kinds["download"].item():
        paths += squidflow_manifest.shard_status_paths(
            STATUS_DIR, config["download"]["shards"], retry_failed=retry_failed_requested(), started=RUN_STARTED
        )
    if kinds["on_disk"].item():
        paths.append(
            squidflow_manifest.local_status_path(STATUS_DIR, retry_failed=retry_failed_requested(), started=RUN_STARTED)
        )
    return paths


def get_local_video_files():
    """Every video file of the local sources (and the UCF-Crime folder), sorted: video_candidates lists again when
    one is added or removed."""
    from squidflow.videos.sources import local_files

    return local_files(config["sources"], config["squid_e_release"])


def get_local_video_fingerprints():
    """`<path> <size>:<mtime_ns>` of every local video file: check_local_videos probes again when one changes."""
    from squidflow.videos.sources import local_fingerprints

    return local_fingerprints(config["sources"], config["squid_e_release"])


# The `download` keys the search of a youtube source uses (a new pace or worker count must not list it again).
SEARCH_NETWORK_KEYS = ["cookies", "proxy", "sleep_s", "socket_timeout_s"]


def get_video_search_network_params():
    return config_keys(config["download"], SEARCH_NETWORK_KEYS)


def get_download_settings_params():
    """Every `download` key the shard jobs read; `shards` is not one (it names the jobs, see videos.smk)."""
    return {k: v for k, v in config["download"].items() if k != "shards"}


def print_brake_notes():
    """At the end of a run: one line per site the brake stopped downloading from in this run, and how to resume."""
    from squidflow.videos.brake import run_notes

    for note in run_notes(BRAKE_DIR, str(RUN_STARTED)):
        print(f"squidflow brake: {note}", file=sys.stderr)


def print_dropped_videos():
    """At the end of a run: one line, how many videos were dropped at which stage and why, and the report to read."""
    videos = get_acquisition_figure_videos(None)
    notes = "results/videos/candidates_notes.txt"
    if not stage_enabled("videos") or not os.path.exists(videos) or not os.path.exists(notes):
        return
    with open(notes, encoding="utf-8") as fh:
        lines = [line.rstrip("\n") for line in fh if line.strip()]
    print(squidflow_manifest.dropped_line(pl.read_parquet(videos), lines), file=sys.stderr)


def get_ok_video_ids(wildcards=None):
    """For later stages: the ids of `ok` videos (call from an input function; waits for the manifest)."""
    manifest = checkpoints.video_manifest.get().output.manifest
    return pl.read_parquet(manifest, columns=["video_id", "status"]).filter(pl.col("status") == "ok")["video_id"].to_list()


# ---------------------------------------------------------------------------------------------- frames
def get_frame_shards():
    return list(range(config["frames"]["shards"]))


def get_backbone():
    return config["features"]["backbone"]


def get_featurize_params():
    """The `features` keys a featurize job reads: all but `threads`, which Snakemake gives it as cores."""
    return {k: v for k, v in config["features"].items() if k != "threads"}


def get_release_annotations():
    """The release's huj_annotations.csv (URL or local copy) whose videos form the test split in release mode."""
    return get_data_path(config["splits"].get("annotations") or config["squid_e_release"]["judgments_csv"])


def get_frame_outputs():
    if not stage_enabled("frames"):
        return []
    return [
        "results/dataset/frames.parquet",
        f"results/features/{get_backbone()}.parquet",
        "results/videos/videos_checked.parquet",
    ]


# ---------------------------------------------------------------------------------------------- judgments
JUDGMENT_SOURCE = config["judgments"]["source"]
FIG3_TITLES = {
    "simulated": "Figure 3 (SIMULATED annotator panel, offline demo)",
    "mturk": "Figure 3 (MTurk judgments)",
    "release": "Figure 3 (SQUID-E release judgments)",
}


def get_judgment_outputs():
    if not stage_enabled("judgments"):
        return []
    outputs = [
        "results/judgments/judgments.parquet",
        "results/judgments/annotator_report.parquet",
        "results/judgments/image_scores.parquet",
        "results/tables/table7_agreement.csv",
        "results/tables/table7_agreement.md",
        "results/figures/fig3_judgments.png",
    ]
    if JUDGMENT_SOURCE != "release":
        outputs += expand("results/annotation/hits_{variant}.csv", variant=["A", "B"])
        outputs += ["results/annotation/hit_template.html"]
    return outputs


def get_judgment_frames(wildcards):
    """frames.parquet, except for the release's judgments, which are read without any frames."""
    return {} if JUDGMENT_SOURCE == "release" else {"frames": "results/dataset/frames.parquet"}


def get_judgment_batches():
    """The batch-results CSVs to ingest, each with its round (1 = the task, 2 = a repeat of it)."""
    if JUDGMENT_SOURCE == "simulated":
        return [
            {"path": "results/judgments/simulated/batch_results.csv", "round": 1},
            {"path": "results/judgments/simulated/batch_results_repeat.csv", "round": 2},
        ]
    if JUDGMENT_SOURCE == "mturk":
        return config["judgments"]["batches"]
    return []


def get_release_judgments_csv():
    return get_data_path(config["squid_e_release"]["judgments_csv"])


def get_judgment_inputs(wildcards):
    """What ingestion reads: batch CSVs, frames (to know the images), or a local copy of the release CSV."""
    inputs = get_judgment_frames(wildcards)
    batches = get_judgment_batches()
    if batches:
        inputs["batches"] = [b["path"] for b in batches]
    release = get_release_judgments_csv()
    if JUDGMENT_SOURCE == "release" and not is_url(release):
        inputs["release"] = release
    return inputs


# ---------------------------------------------------------------------------------------------- comparison sets
COMPARISON = config["comparison"]


def get_comparison_outputs():
    if not stage_enabled("comparison"):
        return []
    return [
        "results/comparison/corpus.parquet",
        "results/comparison/pool.parquet",
        "results/comparison/sets.parquet",
        "results/annotation/comparison_hits.csv",
        "results/annotation/comparison_hits.html",
        "results/comparison/metrics.json",
    ]


def get_sherlock_annotations():
    return get_data_path(config["sherlock"]["annotations"])


def get_comparison_corpus_inputs(wildcards):
    """The Sherlock annotation file when it is a local copy (a URL is fetched by the job), or our frames + videos."""
    if COMPARISON["corpus"] == "sherlock":
        source = get_sherlock_annotations()
        return {} if is_url(source) else {"annotations": source}
    return {"frames": "results/dataset/frames.parquet", "videos": "results/videos/videos.parquet"}


def get_comparison_embed_inputs(wildcards):
    """The corpus and its SBERT table, plus the frozen image features for the probe scorer."""
    inputs = {"corpus": "results/comparison/corpus.parquet", "sbert": "results/comparison/sbert.parquet"}
    if COMPARISON["scorer"] == "probe":
        inputs["features"] = f"results/features/{config['features']['backbone']}.parquet"
    return inputs


def get_comparison_ratings(wildcards):
    return {"ratings": COMPARISON["ratings"]} if COMPARISON["ratings"] else {}


def get_comparison_proposals(wildcards):
    return {"proposals": COMPARISON["proposals"]} if COMPARISON["proposals"] else {}


# ---------------------------------------------------------------------------------------------- training and tables
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


# The `training` keys each job reads (squidflow.training.runs.TrainConfig; a test keeps this list equal to its fields).
# Not among them: threads, mem_mb (how a run is scheduled) and the number of seeds (which runs exist).
TRAIN_KEYS = [
    "backbone", "weights", "epochs", "batch_size", "lr", "crop", "num_workers", "amp", "eval_batch_size", "ece_bins",
    "kl_eps", "dropout", "mc_samples", "label_smoothing", "bm_coeff", "focal_gamma", "trainable", "rs_scale",
    "rs_label_smoothing", "mc_average", "augment_geometry", "authors_ece_bins", "authors_ece_batch",
]


def get_train_params(wildcards):
    """A run's `training` keys; of `trainable` only its own method's choice, so changing another method's choice
    reruns nothing here."""
    training = config["training"]
    params = config_keys(training, [k for k in TRAIN_KEYS if k != "trainable"])
    params["trainable"] = {wildcards.method: training["trainable"][wildcards.method]}
    return {**params, "classification": {"events": training["classification"]["events"]}}


def get_training_pool_params():
    """What decoding a pool reads: the image geometry, the data seed and the events."""
    training = config["training"]
    return {
        **config_keys(training, ["resize", "crop", "data_seed"]),
        "classification": {"events": training["classification"]["events"]},
    }


def get_training_sets_params(wildcards):
    """What drawing an experiment's sets reads: the data seed, the events, the sets mode, which human means, and that
    experiment's set sizes (not its seeds or methods, which decide the runs)."""
    training = config["training"]
    not_sets = {"seeds", "methods", "variants", "train_sets"}
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
    """A table's row order: the experiment's variants (Table 1) or methods (Tables 3, 9), as configured."""
    section = config["training"][TRAINING_TABLES[wildcards.table]]
    return list(section.get("variants") or section.get("methods"))


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
    return [
        *expand("results/tables/{table}.{ext}", table=list(TRAINING_TABLES), ext=["csv", "md", "tex"]),
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
    for key, path in (("judgments_csv", get_release_judgments_csv()),
                      ("dataset_csv", get_data_path(config["squid_e_release"]["dataset_csv"]))):
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
        "scores": "results/judgments/image_scores.parquet",
        "judgments": "results/judgments/judgments.parquet",
        "report": "results/judgments/annotator_report.parquet",
    }
    if config["training"]["sets"] == "authors":
        inputs["authors"] = "results/training/authors_sets.parquet"
    return inputs


WHOLE_FRAME_VARIANTS = ("GA", "AU")


def uses_whole_frames(experiment, method):
    """GA and AU of Table 1 start from whole frames when training.augment_geometry is whole_frame."""
    training = config["training"]
    return experiment == "classification" and method in WHOLE_FRAME_VARIANTS and training["augment_geometry"] == "whole_frame"


def get_training_frames_short_side():
    return 2 * config["training"]["crop"]


def get_train_inputs(wildcards):
    """A run's sets and pool caches, plus the whole-frame cache of its training pool for GA/AU on whole frames."""
    inputs = {
        "sets": f"results/training/{wildcards.experiment}/sets.parquet",
        "sd": "results/training/cache/SD.npy",
        "se": "results/training/cache/SE.npy",
    }
    if uses_whole_frames(wildcards.experiment, wildcards.method):
        pool = wildcards.train_set
        inputs["frames"] = f"results/training/cache/{pool}_frames.npy"
        inputs["frames_index"] = f"results/training/cache/{pool}_frames.parquet"
    return inputs


def get_table_sets_summary(wildcards):
    return f"results/training/{TRAINING_TABLES[wildcards.table]}/sets_summary.json"


def _choices(experiment, methods):
    training = config["training"]
    return {
        "sets": training["sets"],
        "target_event": training["calibration"]["target_event"] if experiment == "calibration" else None,
        "trainable": {m: training["trainable"][m] for m in methods},
        **({"rs_scale": training["rs_scale"], "rs_label_smoothing": training["rs_label_smoothing"]}
           if "RS" in methods else {}),
        **({"mc_average": training["mc_average"], "mc_samples": training["mc_samples"]} if "MC" in methods else {}),
        **({"augment_geometry": training["augment_geometry"]} if set(WHOLE_FRAME_VARIANTS) & set(methods) else {}),
        **({"authors_ece_bins": training["authors_ece_bins"], "authors_ece_batch": training["authors_ece_batch"]}
           if experiment == "calibration" else {}),
        "judgments_source": JUDGMENT_SOURCE,
    }


def get_table_choices(wildcards):
    """The definition choices a table's caption names: only those of its experiment and methods."""
    experiment = TRAINING_TABLES[wildcards.table]
    return _choices(experiment, get_table_method_order(wildcards))


def get_figure_choices(wildcards):
    if hasattr(wildcards, "method"):
        return _choices("calibration", [wildcards.method])
    return _choices("classification", list(config["training"]["classification"]["variants"]))


def get_table1_figure_metrics(wildcards):
    return [f"{run}/metrics.json" for run in get_training_runs("classification")]


def get_reliability_predictions(wildcards):
    return [f"{run}/predictions.parquet" for run in get_training_runs("calibration")
            if os.path.basename(os.path.dirname(run)) == wildcards.method]


def get_training_figure_outputs():
    """Table 1 as a plot and a reliability diagram per Table 3 method."""
    return [
        "results/figures/table1_accuracy_by_certainty.png",
        *expand("results/figures/table3_reliability_{method}.png", method=config["training"]["calibration"]["methods"]),
    ]


# ---------------------------------------------------------------------------------------------- evaluation
EVALUATION = config["evaluation"]
EVALUATION_TABLES = ["table2_verbs", "table8_alt_bins"]
ZERO_SHOT_PREDICTIONS = "results/evaluation/predictions/zero_shot.parquet"


def get_evaluation_vocabulary():
    """evaluation.vocabulary as a URL or a local path (None when unset)."""
    return get_data_path(EVALUATION["vocabulary"]) if EVALUATION["vocabulary"] else None


def get_trained_model_predictions(method, seed):
    """The predictions-format file of a Table 1 classifier (training.classification variant `method`, `seed`)."""
    runs = [
        r for r in get_training_runs("classification")
        if os.path.basename(r) == f"seed{seed}" and os.path.basename(os.path.dirname(r)) == method
    ]
    if not runs:
        raise ValueError(
            f"evaluation.trained_models: {method} seed {seed} is not a configured classification run "
            f"(training.classification.variants: {config['training']['classification']['variants']}, seeds 0.."
            f"{config['training']['classification']['seeds'] - 1}); fix evaluation.trained_models or trained_seed"
        )
    return runs[0].replace("results/runs/", "results/evaluation/predictions/runs/", 1) + ".parquet"


def get_evaluation_models():
    """Every model of Tables 2 and 8, in table order: evaluation.models, the zero-shot CLIP baseline (when enabled),
    the trained Table 1 classifiers of evaluation.trained_models, and the text baselines (get_text_baseline_models,
    when that stage defines it). Each: name, id (file name), predictions, reference_accuracy, images, demo."""
    models = [
        {"name": m["name"], "predictions": get_data_path(m["predictions"]),
         "reference_accuracy": m.get("reference_accuracy"),
         "images": get_data_path(m["images"]) if m.get("images") else None, "demo": False}
        for m in EVALUATION["models"]
    ]
    zero_shot = EVALUATION["zero_shot"]
    if zero_shot["enabled"]:
        if not EVALUATION["vocabulary"]:
            raise ValueError("evaluation.zero_shot.enabled needs evaluation.vocabulary: the label list CLIP ranks "
                             "(e.g. the imSitu verbs, https://raw.githubusercontent.com/my89/imSitu/master/imsitu_space.json)")
        models.append({"name": zero_shot["name"], "predictions": ZERO_SHOT_PREDICTIONS, "reference_accuracy": None,
                       "images": None, "demo": False})
    for method in EVALUATION["trained_models"]:
        seed = EVALUATION["trained_seed"]
        models.append({"name": f"{method} classifier seed {seed}",
                       "predictions": get_trained_model_predictions(method, seed),
                       "reference_accuracy": None, "images": None, "demo": JUDGMENT_SOURCE == "simulated"})
    text_baselines = globals().get("get_text_baseline_models")  # defined by the text stage, when present
    if text_baselines is not None:
        for m in text_baselines():
            models.append({"name": m["name"], "predictions": m["predictions"],
                           "reference_accuracy": m.get("reference_accuracy"), "images": None,
                           "demo": JUDGMENT_SOURCE == "simulated"})
    seen = {}
    for m in models:
        m["id"] = evaluation_model_id(m["name"])
        if m["id"] in seen:
            raise ValueError(f"evaluation.models: the names {seen[m['id']]!r} and {m['name']!r} both become the file "
                             f"name {m['id']!r}; give the models distinct names")
        seen[m["id"]] = m["name"]
    return models


def get_evaluation_model_ids():
    return [m["id"] for m in get_evaluation_models()]


def get_evaluation_model(wildcards):
    """The model whose file name is the {model} wildcard."""
    for m in get_evaluation_models():
        if m["id"] == wildcards.model:
            return m
    raise ValueError(f"results/evaluation/models/{wildcards.model}: no model of that name in evaluation.models "
                     f"(models: {get_evaluation_model_ids()})")


def get_evaluation_table_models(wildcards):
    """The tables' models in order (a function of wildcards, so stages included later can add models)."""
    return [{"name": m["name"], "reference_accuracy": m["reference_accuracy"], "demo": m["demo"]}
            for m in get_evaluation_models()]


def get_evaluation_table_inputs(wildcards):
    """Every model's accuracy rows and check summary."""
    ids = get_evaluation_model_ids()
    return {
        "accuracy": [f"results/evaluation/models/{i}.parquet" for i in ids],
        "summary": [f"results/evaluation/models/{i}.json" for i in ids],
    }


def get_model_accuracy_inputs(wildcards):
    """Judgments, the predictions file when it is local (a URL is fetched by the job), its mapping table and the
    vocabulary when local, and the frames (a model may predict unjudged frames) when the frames stage runs."""
    model = get_evaluation_model(wildcards)
    inputs = {"scores": "results/judgments/image_scores.parquet"}
    for key, path in (("predictions", model["predictions"]), ("images", model["images"]),
                      ("vocabulary", get_evaluation_vocabulary())):
        if path and not is_url(path):
            inputs[key] = path
    if stage_enabled("frames") or model["predictions"] == ZERO_SHOT_PREDICTIONS:
        inputs["frames"] = "results/dataset/frames.parquet"
    return inputs


def get_zero_shot_inputs(wildcards):
    inputs = {"frames": "results/dataset/frames.parquet"}
    vocabulary = get_evaluation_vocabulary()
    if vocabulary and not is_url(vocabulary):
        inputs["vocabulary"] = vocabulary
    return inputs


def get_evaluated_runs():
    """Every training run's predictions (both experiments), for results/evaluation/runs.parquet."""
    return [f"{run}/predictions.parquet" for e in ("classification", "calibration") for run in get_training_runs(e)]


def get_evaluation_outputs():
    if not stage_enabled("evaluation"):
        return []
    outputs = expand("results/tables/{table}.{ext}", table=EVALUATION_TABLES, ext=["csv", "md", "tex"])
    if stage_enabled("tables"):
        outputs.append("results/evaluation/runs.parquet")
    return outputs


# ---------------------------------------------------------------------------------------------- litmus test
LITMUS = config["litmus"]
LITMUS_DEMO_DIR = "results/litmus/demo/"
LITMUS_METHODS = LITMUS["guesser"]["methods"]
# What a litmus_train_guesser job reads of litmus.guesser: GuesserConfig's fields (not seeds, methods or threads).
LITMUS_GUESSER_KEYS = [
    "epochs", "batch_size", "lr", "word_dim", "hidden_dim", "category_dim", "target_weight", "min_word_count",
]
LITMUS_MODELS = {m["name"]: m["probabilities"] for m in LITMUS["models"]}
_litmus_clash = sorted(set(LITMUS_MODELS) & {"STL-CE", "MTL-KL"})
if _litmus_clash:
    raise ValueError(f"litmus.models: the name(s) {_litmus_clash} belong to the trained guessers; rename the model(s)")


def _litmus_path(path):
    """A configured file: the demo's own outputs as they are (rules make them), anything else via get_data_path."""
    return path if path.startswith(LITMUS_DEMO_DIR) else get_data_path(path)


def get_litmus_game_sources():
    """The configured games files as {path, split, name}; the split comes from the entry or the file name."""
    sources = []
    for entry in LITMUS["games"]:
        path, split = litmus_game_source(entry)
        sources.append({"path": _litmus_path(path), "split": split, "name": path})
    return sources


def get_litmus_game_files(wildcards):
    """The local games files (URLs are downloaded by the job); the demo's tie litmus_demo_games into the DAG."""
    return [s["path"] for s in get_litmus_game_sources() if not is_url(s["path"])]


def get_litmus_human_annotations():
    return _litmus_path(LITMUS["human_annotations"]) if LITMUS["human_annotations"] else ""


def get_litmus_human_inputs(wildcards):
    path = get_litmus_human_annotations()
    inputs = {"games": "results/litmus/games.parquet", "soft_labels": "results/litmus/soft_labels.parquet"}
    if path and not is_url(path):
        inputs["annotations"] = path
    return inputs


def get_litmus_data_note():
    """What the tables say about their data: the demo's games and annotations are synthetic / simulated."""
    demo_games = any(s["path"].startswith(LITMUS_DEMO_DIR) for s in get_litmus_game_sources())
    demo_human = get_litmus_human_annotations().startswith(LITMUS_DEMO_DIR)
    notes = []
    if demo_games:
        notes.append("Games: SYNTHETIC, generated in the GuessWhat?! format by the offline demo (not GuessWhat?! data).")
    if demo_human:
        notes.append("Human annotations: SIMULATED annotators (offline demo).")
    return " ".join(notes)


def get_litmus_model_source(wildcards):
    return _litmus_path(LITMUS_MODELS[wildcards.model])


def get_litmus_model_inputs(wildcards):
    inputs = {"games": "results/litmus/games.parquet"}
    source = get_litmus_model_source(wildcards)
    if not is_url(source):
        inputs["probabilities"] = source
    return inputs


def get_litmus_probability_files():
    """Every guesser's first-turn probabilities: the trained ones per method and seed, then the configured files."""
    trained = [
        f"results/litmus/runs/{method}/seed{seed}/probabilities.parquet"
        for method in LITMUS_METHODS
        for seed in range(LITMUS["guesser"]["seeds"])
    ]
    return trained + [f"results/litmus/models/{name}/probabilities.parquet" for name in LITMUS_MODELS]


def get_litmus_model_order():
    return [*LITMUS_METHODS, *LITMUS_MODELS]


def get_litmus_outputs():
    if not stage_enabled("litmus"):
        return []
    outputs = [
        "results/litmus/soft_labels.parquet",
        *expand("results/tables/litmus_{table}.{ext}", table=["questions", "rules"], ext=["csv", "md"]),
    ]
    if get_litmus_probability_files():
        outputs += expand("results/tables/litmus_{table}.{ext}", table=["correlation", "grounding"], ext=["csv", "md"])
    if LITMUS["human_annotations"]:
        outputs += expand("results/tables/litmus_human.{ext}", ext=["csv", "md"])
    return outputs


# ---------------------------------------------------------------------------------------------- text baselines
TEXT = config["text"]
KEYWORD_GOLD = "results/judgments/keywords.parquet"
KEYWORD_HITS = "results/annotation/hits_K.csv"
SIMULATED_KEYWORDS = "results/judgments/simulated/keyword_batch_results.csv"


def get_keyword_batches():
    """The keyword task's batch-results CSVs (variant K), each with its round: the SIMULATED panel's for the demo,
    else text.gold.batches."""
    if JUDGMENT_SOURCE == "simulated":
        return [{"path": SIMULATED_KEYWORDS, "round": 1}]
    return [{"path": b["path"], "round": b.get("round", 1)} for b in TEXT["gold"]["batches"]]


def get_keyword_gold_inputs(wildcards):
    return {"batches": [b["path"] for b in get_keyword_batches()], "frames": "results/dataset/frames.parquet"}


def get_demo_subtitle_files(wildcards):
    """The demo videos' SYNTHETIC subtitles (written by make_demo_subtitles) when the demo is a source: they lie beside
    the videos, where the reader looks for every video's subtitles."""
    if "demo" not in [s["type"] for s in config["sources"]]:
        return []
    return expand("results/videos/demo/{video_id}.en.vtt", video_id=DEMO_VIDEO_IDS)


def get_text_baseline_setting():
    """The preprocessing setting the text-only event baseline reads: text.baseline.setting by name, else the first."""
    settings = TEXT["keywords"]["settings"]
    name = TEXT["baseline"]["setting"]
    if name is None:
        return settings[0]
    for s in settings:
        if s["name"] == name:
            return s
    raise ValueError(f"text.baseline.setting = {name!r} names no entry of text.keywords.settings "
                     f"({[s['name'] for s in settings]})")


def get_text_baseline_models():
    """The text-only event baselines, in the predictions format, for the evaluation stage (Table 2 style rows)."""
    if not stage_enabled("text"):
        return []
    return [{"name": f"text-{m} (co-occurring text)", "predictions": f"results/text/baseline_{m}.parquet"}
            for m in TEXT["baseline"]["methods"]]


def get_text_outputs():
    if not stage_enabled("text"):
        return []
    outputs = ["results/text/cooccurring.parquet", "results/text/cooccurring_report.md", "results/text/keywords.parquet"]
    outputs += [m["predictions"] for m in get_text_baseline_models()]
    if JUDGMENT_SOURCE != "release":  # the keyword task to post on MTurk (variant K)
        outputs += [KEYWORD_HITS, "results/annotation/keyword_template.html"]
    if get_keyword_batches():
        outputs += expand("results/tables/text_keywords.{ext}", ext=["csv", "md", "tex"])
    return outputs


# ---------------------------------------------------------------------------------------------- figures and the report
# Each stage's look-at-it figures (results/figures/), self-contained copies of the annotation task pages and the run
# summary, so that `snakemake --report results/report.zip` has every result of the run (workflow/rules/report.smk).
REPORT = config["report"]
RUN_SUMMARY = "results/report/run_summary.html"


def get_report_note(*kinds):
    """What a figure or page says about its data, empty for real data: `videos` -> SYNTHETIC demo videos,
    `judgments` -> a SIMULATED annotator panel."""
    notes = []
    if "videos" in kinds and "demo" in [s["type"] for s in config["sources"]]:
        notes.append("The videos are SYNTHETIC, made by ffmpeg by the offline demo (squidflow.demo).")
    if "judgments" in kinds and JUDGMENT_SOURCE == "simulated":
        notes.append("The judgments come from a SIMULATED annotator panel, not from people.")
    return " ".join(notes)


def get_acquisition_figure_videos(wildcards):
    """The manifest with frame extraction's verdict when the frames stage runs (undecodable videos are corrupt)."""
    return "results/videos/videos_checked.parquet" if stage_enabled("frames") else VIDEO_MANIFEST


def get_contact_sheet_inputs(wildcards):
    """The selected frames and, when the judgments stage runs, the image scores (the certainty under each frame)."""
    inputs = {"frames": "results/dataset/frames.parquet"}
    if stage_enabled("judgments"):
        inputs["scores"] = "results/judgments/image_scores.parquet"
    return inputs


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
        outputs.append("results/figures/videos_status.png")
    if stage_enabled("frames"):
        outputs += ["results/figures/frames_contact_sheets", "results/figures/frames_spread.png"]
    if stage_enabled("judgments"):
        outputs += ["results/figures/judgments_annotators.png", "results/figures/table7_agreement.png"]
    if stage_enabled("comparison"):
        outputs.append("results/figures/comparison_sets.png")
    outputs += expand("results/report/annotation/{page}.html", page=get_task_pages())
    return [*outputs, RUN_SUMMARY]


def get_run_summary_inputs(wildcards):
    """Every other final output: the summary is written after the jobs it describes."""
    return [o for o in get_final_outputs() if o != RUN_SUMMARY]
