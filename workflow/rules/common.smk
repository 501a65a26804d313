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
from squidflow.config import validate_config
from squidflow.fetch import is_url
from squidflow.frames.extract import FramesConfig
from squidflow.frames.selection import SelectionConfig
from squidflow.frames.splits import SplitsConfig
from squidflow.videos import manifest as squidflow_manifest

validate_config(config, workflow.source_path("../schemas/config.schema.yaml"))


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
    ]


# ---------------------------------------------------------------------------------------------- videos
VIDEO_CANDIDATES = "results/videos/candidates.parquet"
VIDEO_MANIFEST = "results/videos/videos.parquet"


def get_video_outputs():
    if not stage_enabled("videos"):
        return []
    return [VIDEO_MANIFEST, "results/videos/download_report.md"]


def get_video_candidate_inputs(wildcards):
    """Files the listing reads: the demo catalog (ties make_demo_videos into the DAG) and local url lists."""
    inputs = {}
    types = [s["type"] for s in config["sources"]]
    if "demo" in types:
        inputs["demo_catalog"] = "results/videos/demo/catalog.parquet"
    inputs["url_lists"] = [s["path"] for s in config["sources"] if s["type"] == "urls"]
    return inputs


def retry_failed_requested():
    return config["retry_failed"]


STATUS_DIR = "results/videos/status"
RUN_STARTED = squidflow_manifest.run_started()  # a record written after this is this invocation's own retry


def get_video_status_files(wildcards):
    """One status record per candidate that needs a download (known once the checkpoint has listed them).

    The newest generation on disk is taken as is; with retry_failed a record that is not ok asks for the next
    generation, which a new acquire_video job writes (older generations stay as the history of attempts).
    """
    candidates = checkpoints.video_candidates.get().output.candidates
    ids = pl.read_parquet(candidates, columns=["video_id", "download"]).filter(pl.col("download"))["video_id"]
    return squidflow_manifest.status_record_paths(
        ids.to_list(), STATUS_DIR, retry_failed=retry_failed_requested(), started=RUN_STARTED
    )


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
    "kl_eps", "dropout", "mc_samples", "label_smoothing", "bm_coeff", "focal_gamma",
]


def get_train_params():
    training = config["training"]
    return {**config_keys(training, TRAIN_KEYS), "classification": {"events": training["classification"]["events"]}}


def get_training_pool_params():
    """What decoding a pool reads: the image geometry, the data seed and the events."""
    training = config["training"]
    return {
        **config_keys(training, ["resize", "crop", "data_seed"]),
        "classification": {"events": training["classification"]["events"]},
    }


def get_training_sets_params(wildcards):
    """What drawing an experiment's sets reads: the data seed, the events and that experiment's set sizes (not its
    seeds or methods, which decide the runs)."""
    training = config["training"]
    not_sets = {"seeds", "methods", "variants", "train_sets"}
    params = {
        "data_seed": training["data_seed"],
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
    return expand("results/tables/{table}.{ext}", table=list(TRAINING_TABLES), ext=["csv", "md", "tex"])
