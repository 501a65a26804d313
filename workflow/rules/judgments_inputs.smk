# Input functions and the getter of the judgments stage (workflow/rules/judgments.smk): kept apart from the rules,
# as `snakemake --lint` asks.
import os

from squidflow.fetch import is_url

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
    """squid_e_release.judgments_csv: a URL as is; a relative local path from the working directory, else from the
    repository root (so `../shared/data/...` finds the data beside the clone from any --directory)."""
    release = config["squid_e_release"]["judgments_csv"]
    if is_url(release) or os.path.isabs(release) or os.path.exists(release):
        return release
    beside_repo = os.path.normpath(os.path.join(workflow.basedir, release))
    return beside_repo if os.path.exists(beside_repo) else release


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
