# The input functions, params and paths of workflow/rules/publish.smk (a rules file may not hold functions,
# says `snakemake --lint`); included at the top of publish.smk.
from squidflow.publish import methods as squidflow_methods
from squidflow.publish.facts import required as publish_required

# The demo publishes under its own name and licence; any other run names its dataset, licence and citation
# (publish.name, license, citation), checked here, before any job, with the key to fill.
PUBLISH_DEMO = JUDGMENT_SOURCE == "simulated"  # a SIMULATED panel: the offline demo (or a test of one)
try:
    PUBLISH = publish_required(config["publish"], demo=PUBLISH_DEMO) if stage_enabled("publish") else config["publish"]
except ConfigError as _error:
    raise WorkflowError(str(_error)) from None
PUBLISH_DIR = f"results/publish/{PUBLISH['name'] or 'dataset'}"


def get_publish_outputs():
    return [PUBLISH_DIR] if stage_enabled("publish") else []


def get_publish_inputs(wildcards):
    """squidflow's own tables that the dataset is made of: the judgments always; frames, the video manifest and its
    dropped-videos report unless the judgments are the release's alone; the comparison sets and the keyword task's
    keywords when those stages ran; the task pages annotators saw."""
    inputs = {
        "judgments": JUDGMENTS_TABLE,
        "report": EXCLUSIONS_TABLE,  # the raters judgments.quality.exclude leaves out: flagged in the published rows
        "scores": IMAGE_SCORES_TABLE,
        "table7": AGREEMENT_TABLE_CSV,
        "ingest_counts": INGEST_COUNTS,  # the ratings and images a takedown left out: the card's "Changes"
        "methods": METHOD_RECORDS,  # each change of method raises the minor version (squidflow.publish.methods)
    }
    if JUDGMENT_SOURCE != "release":
        inputs |= {"frames": FRAMES_TABLE, "dataset_images": DATASET_IMAGES, "videos": VIDEOS_CHECKED}
        inputs["dropped"] = DROPPED_REPORT
        if "demo" in [s["type"] for s in config["sources"]]:  # their file times date the collection (the card)
            inputs["demo_videos"] = expand(DEMO_VIDEO, video_id=DEMO_VIDEO_IDS)
        inputs["takedown_log"] = TAKEDOWN_LOG  # removals on request: the version and the card's "Changes"
        inputs["rating_page"] = HIT_TEMPLATE
    if stage_enabled("comparison"):
        inputs["comparison_sets"] = COMPARISON_SETS_TABLE
    if stage_enabled("text") and get_keyword_batches():
        inputs["keywords"] = KEYWORD_GOLD
        inputs["keyword_page"] = KEYWORD_TEMPLATE
    return inputs


def get_publish_frames_settings():
    """How frames were chosen, for the card (none when the judgments are the release's alone), and the settings that
    made their pixels, which the card's rebuild recipe repeats (publish.images: reference)."""
    if JUDGMENT_SOURCE == "release":
        return {}
    frames, selection = config["frames"], config["selection"]
    pixels = {k: frames[k] for k in ("decoder", "letterbox", "letterbox_below", "letterbox_to")}
    pixels |= {k: selection[k] for k in ("image_format", "image_quality")}
    return {"n": frames["n"], "k": selection["k"], "backbone": config["features"]["backbone"], **pixels}


# The methods the run's publications were made with (squidflow.publish.methods): read when the workflow is parsed; a
# method not yet recorded is written by rule method_record before the dataset is published.
try:
    _methods = squidflow_methods.recorded()
except ConfigError as _error:
    raise WorkflowError(str(_error)) from None
NEW_METHOD = squidflow_methods.next_method(config, _methods) if stage_enabled("publish") else None
METHOD_RECORDS = [squidflow_methods.record_path(m["n"]) for m in _methods]
METHOD_RECORDS += [squidflow_methods.record_path(NEW_METHOD)] if NEW_METHOD else []
