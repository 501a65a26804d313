# The input functions, params and paths of workflow/rules/litmus.smk (a rules file may not hold functions,
# says `snakemake --lint`); included at the top of litmus.smk.
from squidflow.litmus.config import GuesserConfig
from squidflow.litmus.games import source_of as litmus_game_source

LITMUS_RUN_PROBABILITIES = "results/litmus/runs/{method}/seed{seed}/probabilities.parquet"
LITMUS_TABLE_FILE = "results/tables/litmus_{table}.{ext}"

LITMUS_METRICS_TABLE = "results/litmus/metrics.parquet"
LITMUS_METRIC_INTERVALS_TABLE = "results/litmus/metric_intervals.parquet"
LITMUS_GAMES_TABLE = "results/litmus/games.parquet"
LITMUS_SOFT_LABELS_TABLE = "results/litmus/soft_labels.parquet"


LITMUS = config["litmus"]
LITMUS_DEMO_DIR = "results/litmus/demo/"
LITMUS_METHODS = LITMUS["guesser"]["methods"]
LITMUS_SEEDS = list(range(LITMUS["guesser"]["seeds"]))
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
    inputs = {"games": LITMUS_GAMES_TABLE, "soft_labels": LITMUS_SOFT_LABELS_TABLE}
    if path and not is_url(path):
        inputs["annotations"] = path
    return inputs


def get_litmus_data_note():
    """What the tables say about their data: the demo's games and annotations are synthetic / simulated."""
    demo_games = any(s["path"].startswith(LITMUS_DEMO_DIR) for s in get_litmus_game_sources())
    demo_human = get_litmus_human_annotations().startswith(LITMUS_DEMO_DIR)
    notes = []
    if demo_games:
        notes.append(
            "Games: SYNTHETIC, generated in the GuessWhat?! format by the offline demo (not GuessWhat?! data)."
        )
    if demo_human:
        notes.append("Human annotations: SIMULATED annotators (offline demo).")
    return " ".join(notes)


def get_litmus_model_source(wildcards):
    return _litmus_path(LITMUS_MODELS[wildcards.model])


def get_litmus_model_inputs(wildcards):
    inputs = {"games": LITMUS_GAMES_TABLE}
    source = get_litmus_model_source(wildcards)
    if not is_url(source):
        inputs["probabilities"] = source
    return inputs


def get_litmus_probability_files():
    """Every guesser's first-turn probabilities: the trained ones per method and seed, then the configured files."""
    trained = expand(LITMUS_RUN_PROBABILITIES, method=LITMUS_METHODS, seed=LITMUS_SEEDS)
    return trained + [f"results/litmus/models/{name}/probabilities.parquet" for name in LITMUS_MODELS]


def get_litmus_model_order():
    return [*LITMUS_METHODS, *LITMUS_MODELS]


def get_litmus_outputs():
    if not stage_enabled("litmus"):
        return []
    outputs = [
        LITMUS_SOFT_LABELS_TABLE,
        *expand(LITMUS_TABLE_FILE, table=["questions", "rules"], ext=["csv", "md"]),
    ]
    if get_litmus_probability_files():
        outputs += expand(LITMUS_TABLE_FILE, table=["correlation", "grounding"], ext=["csv", "md"])
    if LITMUS["human_annotations"]:
        outputs += expand("results/tables/litmus_human.{ext}", ext=["csv", "md"])
    return outputs
