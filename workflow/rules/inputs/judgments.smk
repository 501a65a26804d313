# The input functions, params and paths of workflow/rules/judgments.smk (a rules file may not hold functions,
# says `snakemake --lint`); included at the top of judgments.smk.
import re

from squidflow.judgments import issued as squidflow_issued
from squidflow.judgments.waves import FIRST as FIRST_WAVE, wave_of

HITS_A = squidflow_issued.ROUND1_HITS["A"]
HITS_B = squidflow_issued.ROUND1_HITS["B"]
AGREEMENT_TABLE_MD = "results/tables/table7_agreement.md"
AGREEMENT_FIGURE = "results/figures/table7_agreement.png"
ANNOTATORS_FIGURE = "results/figures/judgments_annotators.png"
FIG3_JUDGMENTS_FIGURE = "results/figures/fig3_judgments.png"
IMAGE_TRIAGE_FIGURE = "results/figures/image_triage.png"
HIGH_CERTAINTY_LIST = "results/judgments/high_certainty.csv"
INGEST_COUNTS = "results/judgments/ingest_counts.json"  # what a takedown left out (the card's "Changes")
SIMULATED_BATCH_RESULTS = "results/judgments/simulated/batch_results.csv"
SIMULATED_BATCH_REPEAT = "results/judgments/simulated/batch_results_repeat.csv"
# The SIMULATED panel's settings, and the truth it sees each image through: the demo videos', or the table that
# judgments.panel.truth names (clips whose content a benchmark declares itself; issue 61).
SIMULATED_PANEL = {k: v for k, v in config["judgments"]["panel"].items() if k != "truth"}
SIMULATED_TRUTH = config["judgments"]["panel"].get("truth") or DEMO_TRUTH_TABLE


JUDGMENTS_FIGURE_TITLES = {
    "simulated": "Figure 3 (SIMULATED annotator panel, offline demo)",
    "mturk": "Figure 3 (MTurk judgments)",
    "release": "Figure 3 (SQUID-E release judgments)",
    "label_studio": "Figure 3 (Label Studio judgments)",
}


def get_judgment_outputs():
    if not stage_enabled("judgments"):
        return []
    outputs = [
        JUDGMENTS_TABLE,
        ANNOTATOR_REPORT_TABLE,
        IMAGE_SCORES_TABLE,
        AGREEMENT_TABLE_CSV,
        AGREEMENT_TABLE_MD,
        FIG3_JUDGMENTS_FIGURE,
    ]
    if JUDGMENT_SOURCE != "release":
        outputs += [HITS_A, HITS_B, HIT_TEMPLATE]
        outputs += [p for k in ISSUED_ROUNDS if k > 1 for p in squidflow_issued.hits_paths(k).values()]
    outputs += expand("results/tables/crowd_aggregation.{ext}", ext=["csv", "md"])
    outputs += [RATER_TRIAGE_TABLE, IMAGE_TRIAGE_TABLE, IMAGE_TRIAGE_FIGURE]
    outputs += expand("results/tables/{t}.{ext}", t=["rater_triage", "image_triage"], ext=["csv", "md"])
    if JUDGMENT_SOURCE == "simulated":
        outputs += expand("results/tables/triage_validation.{ext}", ext=["csv", "md"])
    if NEXT_ROUND:
        outputs += list(squidflow_issued.hits_paths(NEXT_ROUND).values())
    if JUDGMENT_SOURCE != "release" and config["annotation"]["next_round"]["budget"] > 0:
        outputs += [NEXT_ROUND_PLAN_TABLE, NEXT_ROUND_FIGURE] if PLANNED_ROUND else []
        if JUDGMENT_SOURCE == "simulated" or get_next_round_waves():
            outputs += expand("results/tables/next_round.{ext}", ext=["csv", "md"])
    outputs += expand(f"{LABEL_STUDIO_TASKS_DIR}/{{task}}/tasks.json", task=get_label_studio_tasks())
    return outputs


def get_judgment_frames(wildcards):
    """frames.parquet, except for the release's judgments, which are read without any frames."""
    # the images too: the quality rubric and the triage figure look at their pixels
    return {} if JUDGMENT_SOURCE == "release" else {"frames": FRAMES_TABLE, "dataset_images": DATASET_IMAGES}


# Ambiguity or noise: the rater and image triage (squidflow.judgments.triage, image_triage).
RATER_TRIAGE_TABLE = "results/judgments/rater_triage.parquet"


IMAGE_TRIAGE_TABLE = "results/judgments/image_triage.parquet"


PLANTED_FAULTS = "results/judgments/simulated/planted.parquet"


NEXT_ROUND_DIR = squidflow_issued.round_dir(2)  # the demo's SIMULATED next round (rule simulate_next_round)


NEXT_ROUND_PLAN_CSV = "results/tables/next_round_plan.csv"  # the latest round's plan (rule next_round_plan)
NEXT_ROUND_PLAN_TABLE = "results/tables/next_round_plan.md"
NEXT_ROUND_FIGURE = "results/figures/next_round_projection.png"


SIMULATED_NEXT_ROUND = "results/judgments/simulated/batch_results_round2.csv"


TRIAGE_EVENTS = list(config["events"])  # empty: the release's events (squidflow.vocabulary.events.PROMPTS)


def get_triage_predictions(wildcards):
    """The model probabilities CROWDLAB and the image triage read (judgments.triage.predictions): none, the
    zero-shot predictions, or a predictions file."""
    chosen = config["judgments"]["triage"]["predictions"]
    if not chosen:
        return {}
    return {"predictions": ZERO_SHOT_PREDICTIONS if chosen == "zero_shot" else get_data_path(chosen)}


# Label Studio (annotation.platform label_studio): the task folders, and the exports ingestion reads.
ANNOTATION_PLATFORM = config["annotation"]["platform"]


LABEL_STUDIO_TASKS_DIR = "results/annotation/label_studio"


SIMULATED_LABEL_STUDIO = {
    "A": "results/judgments/simulated/label_studio/A.json",
    "B": "results/judgments/simulated/label_studio/B.json",
    "A_repeat": "results/judgments/simulated/label_studio/A_repeat.json",
    "B_repeat": "results/judgments/simulated/label_studio/B_repeat.json",
}


def get_label_studio_tasks():
    """The Label Studio tasks this run writes or holds (annotation.platform label_studio): A and B with the judgments
    stage and each next round's A_round<k>, B_round<k> (issued, or written now), K with the text stage's keyword task,
    the comparison sets with the comparison stage."""
    if ANNOTATION_PLATFORM != "label_studio" or JUDGMENT_SOURCE == "release":
        return []
    tasks = []
    if stage_enabled("judgments"):
        rounds = [1, *(k for k in ISSUED_ROUNDS if k > 1), *([NEXT_ROUND] if NEXT_ROUND else [])]
        tasks = [squidflow_issued.label_studio_task(v, k) for k in rounds for v in squidflow_issued.VARIANTS]
    if stage_enabled("text") and stage_enabled("frames"):
        tasks.append("K")
    if stage_enabled("comparison"):
        tasks.append("comparison")
    return tasks


RATING_TASK = re.compile(r"^([AB])(?:_round([0-9]+))?\Z")  # A, B, A_round2, B_round3, ...


def get_label_studio_hits(wildcards):
    task = wildcards.ls_task
    rating = RATING_TASK.match(task)
    if rating:
        hits = squidflow_issued.hits_paths(int(rating.group(2) or 1))[rating.group(1)]
    else:
        hits = {"K": KEYWORD_HITS, "comparison": COMPARISON_HITS}[task]
    inputs = {"hits": hits}
    if task != "comparison":
        inputs["frames"] = FRAMES_TABLE
    return inputs


def label_studio_task_constraint():
    """The `{ls_task}` wildcard: any task but a rating task whose tasks.json is issued already (squidflow.judgments.
    issued: no rule makes it again, it is an input the rules take as given)."""
    issued = [
        t
        for t in get_label_studio_tasks()
        if RATING_TASK.match(t) and os.path.exists(f"{LABEL_STUDIO_TASKS_DIR}/{t}/tasks.json")
    ]
    return f"(?!(?:{'|'.join(issued)})/)[A-Za-z0-9_]+" if issued else "[A-Za-z0-9_]+"


def get_label_studio_images():
    ls = config["annotation"]["label_studio"]
    return {
        "mode": ls["images"],
        "base_url": ls["image_base_url"] or config["annotation"]["image_base_url"],
        "document_root": ls["document_root"],
    }


def judgments_via_label_studio():
    """Ingestion reads Label Studio exports: your own (source label_studio) or, in the demo with platform
    label_studio, the SIMULATED panel's answers written in Label Studio's export format."""
    return JUDGMENT_SOURCE == "label_studio" or (
        JUDGMENT_SOURCE == "simulated" and ANNOTATION_PLATFORM == "label_studio"
    )


def get_label_studio_exports():
    """The exports to ingest, each {path, round, expected?}: expected = the tasks.json its tasks were imported from."""
    if JUDGMENT_SOURCE == "simulated":
        if ANNOTATION_PLATFORM != "label_studio":
            return []
        return [
            {"path": SIMULATED_LABEL_STUDIO[k], "round": 2 if k.endswith("repeat") else 1}
            for k in ("A", "B", "A_repeat", "B_repeat")
        ]
    if JUDGMENT_SOURCE != "label_studio":
        return []
    check = config["judgments"]["label_studio"]["check_tasks"]
    out = []
    for e in config["judgments"]["label_studio"]["exports"] + get_next_round_exports():
        stem = os.path.splitext(os.path.basename(e["path"]))[0]
        item = {"path": e["path"], "round": e.get("round", 1), "wave": e.get("wave") or ""}
        if check and RATING_TASK.match(stem):
            item["expected"] = f"{LABEL_STUDIO_TASKS_DIR}/{stem}/tasks.json"
        out.append(item)
    return out


LABEL_STUDIO_EXPORTS_DIR = squidflow_issued.ANSWERS_DIR  # the answers collected, kept with the tasks


def get_next_round_exports():
    """The next rounds' exports that `squidflow label-studio pull` wrote (A_round2.json, B_round3.json, ...), ingested
    as waves round2, round3, ... beside round 1's when judgments.label_studio.exports is left at its default (A.json,
    B.json)."""
    listed = [e["path"] for e in config["judgments"]["label_studio"]["exports"]]
    if listed != [f"{LABEL_STUDIO_EXPORTS_DIR}/{t}.json" for t in ("A", "B")]:
        return []
    found = []
    if os.path.isdir(LABEL_STUDIO_EXPORTS_DIR):
        for name in os.listdir(LABEL_STUDIO_EXPORTS_DIR):
            m = RATING_TASK.match(name[: -len(".json")]) if name.endswith(".json") else None
            if m and m.group(2) and int(m.group(2)) >= 2:
                found.append((int(m.group(2)), m.group(1), f"{LABEL_STUDIO_EXPORTS_DIR}/{name}"))
    return [{"path": p} for _, _, p in sorted(found)]


def get_next_round_waves():
    """The next rounds' files that ingestion reads (Label Studio exports, MTurk batches whose wave is not the first:
    squidflow.judgments.waves), for your own judgments; the demo's SIMULATED next round is not ingested."""
    if JUDGMENT_SOURCE not in ("label_studio", "mturk"):
        return []
    files = get_label_studio_exports() if judgments_via_label_studio() else get_judgment_batches()
    return [f["path"] for f in files if (f.get("wave") or wave_of(f["path"])) != FIRST_WAVE]


def get_next_round_effect_inputs(wildcards):
    """What results/tables/next_round.md compares: the demo's SIMULATED next round, ingested there beside the chosen
    images and the rater triage; your own next rounds, the waves judgments.parquet holds, with the raters excluded."""
    if JUDGMENT_SOURCE == "simulated":
        return {
            "exclusions": EXCLUSIONS_TABLE,
            "chosen": squidflow_issued.plan_path(2),
            "batch": SIMULATED_NEXT_ROUND,
            "frames": FRAMES_TABLE,
        }
    return {"exclusions": EXCLUSIONS_TABLE}


def get_judgment_batches():
    """The batch-results CSVs to ingest, each with its round (1 = the task, 2 = a repeat of it)."""
    if judgments_via_label_studio():
        return []
    if JUDGMENT_SOURCE == "simulated":
        return [
            {"path": SIMULATED_BATCH_RESULTS, "round": 1},
            {"path": SIMULATED_BATCH_REPEAT, "round": 2},
        ]
    if JUDGMENT_SOURCE == "mturk":
        return config["judgments"]["batches"]
    return []


def get_release_judgments_csv():
    return get_data_path(config["squid_e_release"]["judgments_csv"])


def check_judgment_files():
    """Ingestion of your own judgments whose files are not there yet stops here, before any job, naming what to run
    (switching judgments.source reruns ingestion: its source is a param; the old judgments are never relabelled)."""
    from squidflow.judgments.command import missing_judgments_message

    exports = [e["path"] for e in get_label_studio_exports()] if JUDGMENT_SOURCE == "label_studio" else []
    batches = [b["path"] for b in get_judgment_batches()] if JUDGMENT_SOURCE == "mturk" else []
    missing = [p for p in exports + batches if not os.path.exists(p)]
    message = missing_judgments_message(JUDGMENT_SOURCE, missing, listed=len(exports + batches))
    if message:
        raise WorkflowError(message)


def get_takedown_list(wildcards):
    """The `takedown:` list, for the jobs that leave its videos' answers out (ingestion, the SIMULATED panel)."""
    return {"takedown": config["takedown"]} if config["takedown"] else {}


def get_judgment_inputs(wildcards):
    """What ingestion reads: batch CSVs, frames (to know the images), or a local copy of the release CSV."""
    check_judgment_files()
    inputs = get_judgment_frames(wildcards)
    batches = get_judgment_batches()
    if batches:
        inputs["batches"] = [b["path"] for b in batches]
    release = get_release_judgments_csv()
    if JUDGMENT_SOURCE == "release" and not is_url(release):
        inputs["release"] = release
    exports = get_label_studio_exports()
    if exports:
        inputs["exports"] = [e["path"] for e in exports]
        # the issued tasks each export's tasks are checked against (judgments.label_studio.check_tasks)
        inputs["expected"] = sorted({e["expected"] for e in exports if e.get("expected")})
    inputs |= get_takedown_list(wildcards)  # the answers about its videos' images are left out, counted in the report
    return inputs


# The keyword task (variant K), whose gold the text baselines score against.
TEXT = config["text"]


KEYWORD_GOLD = "results/judgments/keywords.parquet"


SIMULATED_KEYWORDS = "results/judgments/simulated/keyword_batch_results.csv"


def get_keyword_batches():
    """The keyword task's batch-results CSVs (variant K), each with its round: the SIMULATED panel's for the demo,
    else text.gold.batches."""
    if JUDGMENT_SOURCE == "simulated":
        return [{"path": SIMULATED_KEYWORDS, "round": 1}]
    return [{"path": b["path"], "round": b.get("round", 1)} for b in TEXT["gold"]["batches"]]


def get_keyword_gold_inputs(wildcards):
    return {"batches": [b["path"] for b in get_keyword_batches()], "frames": FRAMES_TABLE}


# The issued tasks (squidflow.judgments.issued): each round's HITs and Label Studio tasks, written once, then read
# back as given. Checked here, before any job: a changed file of the record, or a config asking for other tasks than
# a round was issued with, stops the run naming the round.
ISSUED_ROUNDS = squidflow_issued.issued_rounds() if JUDGMENT_SOURCE != "release" else []
try:
    squidflow_issued.check_issued(config["annotation"], ISSUED_ROUNDS)
except ConfigError as _issued_error:
    raise WorkflowError(str(_issued_error)) from None


def get_answered_rounds():
    """The next rounds (k >= 2) whose answers this run ingests: a Label Studio export or MTurk batch of wave round<k>."""
    if JUDGMENT_SOURCE not in ("label_studio", "mturk"):
        return set()
    files = get_label_studio_exports() if judgments_via_label_studio() else get_judgment_batches()
    waves = [f.get("wave") or wave_of(f["path"]) for f in files]
    return {int(w[len("round") :]) for w in waves if re.fullmatch(r"round[0-9]+", w)}


def next_round_number():
    """The round whose tasks this run chooses and writes (None when there is none to write, as with
    annotation.next_round.budget 0, or while the latest round waits for its answers)."""
    if JUDGMENT_SOURCE == "release" or not stage_enabled("judgments"):
        return None
    if config["annotation"]["next_round"]["budget"] <= 0:
        return None
    return squidflow_issued.next_round_number(ISSUED_ROUNDS, get_answered_rounds())


NEXT_ROUND = next_round_number()


def planned_round():
    """The latest next round whose plan the tables show (made by rule next_round_plan) — the one written now, else
    the latest issued (None without a next round)."""
    if JUDGMENT_SOURCE == "release" or config["annotation"]["next_round"]["budget"] <= 0:
        return None
    return NEXT_ROUND or max((k for k in ISSUED_ROUNDS if k > 1), default=None)


PLANNED_ROUND = planned_round()
