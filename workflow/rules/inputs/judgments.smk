# The input functions, params and paths of workflow/rules/judgments.smk (a rules file may not hold functions,
# says `snakemake --lint`); included at the top of judgments.smk.


FIG3_TITLES = {
    "simulated": "Figure 3 (SIMULATED annotator panel, offline demo)",
    "mturk": "Figure 3 (MTurk judgments)",
    "release": "Figure 3 (SQUID-E release judgments)",
}


def get_judgment_outputs():
    if not stage_enabled("judgments"):
        return []
    outputs = [
        JUDGMENTS_TABLE,
        ANNOTATOR_REPORT_TABLE,
        IMAGE_SCORES_TABLE,
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
    return {} if JUDGMENT_SOURCE == "release" else {"frames": FRAMES_TABLE}


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


# The keyword task (variant K), whose gold the text baselines score against.
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
    return {"batches": [b["path"] for b in get_keyword_batches()], "frames": FRAMES_TABLE}
