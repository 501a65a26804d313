# The input functions, params and paths of workflow/rules/evaluation.smk (a rules file may not hold functions,
# says `snakemake --lint`); included at the top of evaluation.smk.
from squidflow.evaluation.models import model_id as evaluation_model_id

EVALUATION = config["evaluation"]
EVALUATION_TABLES = ["table2_verbs", "table8_alt_bins"]
EVALUATION_RUNS_TABLE = "results/evaluation/runs.parquet"
ZERO_SHOT_PREDICTIONS = "results/evaluation/predictions/zero_shot.parquet"
SOFT_LABEL_TABLE = "results/tables/soft_label_measures"  # .csv, .md, .tex
MODEL_RELIABILITY_FIGURE = "results/figures/model_reliability.png"
SATURATION_FIGURE = "results/figures/annotation_saturation.png"
PER_IMAGE_POINTS_TABLE = "results/evaluation/per_image_points.parquet"  # schemas.PER_IMAGE_POINTS


def get_evaluation_vocabulary():
    """evaluation.vocabulary as a URL or a local path (None when unset)."""
    return get_data_path(EVALUATION["vocabulary"]) if EVALUATION["vocabulary"] else None


def get_trained_model_predictions(method, seed):
    """The predictions-format file of a Table 1 classifier (training.classification method `method`, `seed`)."""
    runs = [
        r
        for r in get_training_runs("classification")
        if os.path.basename(r) == f"seed{seed}" and os.path.basename(os.path.dirname(r)) == method
    ]
    if not runs:
        raise ValueError(
            f"evaluation.trained_models: {method} seed {seed} is not a configured classification run "
            f"(training.classification.methods: {config['training']['classification']['methods']}, seeds 0.."
            f"{config['training']['classification']['seeds'] - 1}); fix evaluation.trained_models or trained_seed"
        )
    return runs[0].replace("results/runs/", "results/evaluation/predictions/runs/", 1) + ".parquet"


def get_evaluation_models():
    """Every model of Tables 2 and 8, in table order: evaluation.models, the zero-shot CLIP baseline (when enabled),
    the trained Table 1 classifiers of evaluation.trained_models, and the text baselines (get_text_baseline_models,
    when that stage defines it). Each: name, id (file name), predictions, reference_accuracy, images, demo."""
    models = [
        {
            "name": m["name"],
            "predictions": get_data_path(m["predictions"]),
            "reference_accuracy": m.get("reference_accuracy"),
            "images": get_data_path(m["images"]) if m.get("images") else None,
            "demo": False,
        }
        for m in EVALUATION["models"]
    ]
    zero_shot = EVALUATION["zero_shot"]
    if zero_shot["enabled"]:
        if not EVALUATION["vocabulary"]:
            raise ValueError(
                "evaluation.zero_shot.enabled needs evaluation.vocabulary: the label list CLIP ranks "
                "(e.g. the imSitu verbs, https://raw.githubusercontent.com/my89/imSitu/master/imsitu_space.json)"
            )
        models.append(
            {
                "name": zero_shot["name"],
                "predictions": ZERO_SHOT_PREDICTIONS,
                "reference_accuracy": None,
                "images": None,
                "demo": False,
            }
        )
    for method in EVALUATION["trained_models"]:
        seed = EVALUATION["trained_seed"]
        models.append(
            {
                "name": f"{method} classifier seed {seed}",
                "predictions": get_trained_model_predictions(method, seed),
                "reference_accuracy": None,
                "images": None,
                "demo": JUDGMENT_SOURCE == "simulated",
            }
        )
    text_baselines = globals().get("get_text_baseline_models")  # defined by the text stage, when present
    if text_baselines is not None:
        for m in text_baselines():
            models.append(
                {
                    "name": m["name"],
                    "predictions": m["predictions"],
                    "reference_accuracy": m.get("reference_accuracy"),
                    "images": None,
                    "demo": JUDGMENT_SOURCE == "simulated",
                }
            )
    seen = {}
    for m in models:
        m["id"] = evaluation_model_id(m["name"])
        if m["id"] in seen:
            raise ValueError(
                f"evaluation.models: the names {seen[m['id']]!r} and {m['name']!r} both become the file "
                f"name {m['id']!r}; give the models distinct names"
            )
        seen[m["id"]] = m["name"]
    return models


def get_evaluation_model_ids():
    return [m["id"] for m in get_evaluation_models()]


def get_evaluation_model(wildcards):
    """The model whose file name is the {model} wildcard."""
    for m in get_evaluation_models():
        if m["id"] == wildcards.model:
            return m
    raise ValueError(
        f"results/evaluation/models/{wildcards.model}: no model of that name in evaluation.models "
        f"(models: {get_evaluation_model_ids()})"
    )


def get_evaluation_table_models(wildcards):
    """The tables' models in order (a function of wildcards, so stages included later can add models)."""
    return [
        {"name": m["name"], "reference_accuracy": m["reference_accuracy"], "demo": m["demo"]}
        for m in get_evaluation_models()
    ]


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
    inputs = {"scores": IMAGE_SCORES_TABLE}
    for key, path in (
        ("predictions", model["predictions"]),
        ("images", model["images"]),
        ("vocabulary", get_evaluation_vocabulary()),
    ):
        if path and not is_url(path):
            inputs[key] = path
    if stage_enabled("frames") or model["predictions"] == ZERO_SHOT_PREDICTIONS:
        inputs["frames"] = FRAMES_TABLE
    return inputs


def get_zero_shot_inputs(wildcards):
    inputs = {"frames": FRAMES_TABLE, "dataset_images": DATASET_IMAGES}
    vocabulary = get_evaluation_vocabulary()
    if vocabulary and not is_url(vocabulary):
        inputs["vocabulary"] = vocabulary
    return inputs


def get_evaluated_runs():
    """Every training run's predictions (both experiments), for results/evaluation/runs.parquet."""
    return [f"{run}/predictions.parquet" for e in ("classification", "calibration") for run in get_training_runs(e)]


def get_soft_label_models(wildcards):
    """The Table 2 models whose predictions per_image_points scores (for the soft-label table and its figures):
    name, predictions, images."""
    return [
        {"name": m["name"], "predictions": m["predictions"], "images": m["images"]} for m in get_evaluation_models()
    ]


def get_soft_label_inputs(wildcards):
    """Judgments and the annotator report (the people's ratings, their exclusions), every model's local predictions
    and mapping table, and the frames (a model may predict unjudged frames) when the frames stage runs."""
    inputs = {"judgments": JUDGMENTS_TABLE, "report": ANNOTATOR_REPORT_TABLE}
    local = [p for m in get_evaluation_models() for p in (m["predictions"], m["images"]) if p and not is_url(p)]
    if local:
        inputs["predictions"] = local
    if stage_enabled("frames") or any(m["predictions"] == ZERO_SHOT_PREDICTIONS for m in get_evaluation_models()):
        inputs["frames"] = FRAMES_TABLE
    return inputs


def get_evaluation_outputs():
    if not stage_enabled("evaluation"):
        return []
    outputs = expand(TABLE_FILE, table=EVALUATION_TABLES, ext=["csv", "md", "tex"])
    outputs += [
        *expand(f"{SOFT_LABEL_TABLE}.{{ext}}", ext=["csv", "md", "tex"]),
        MODEL_RELIABILITY_FIGURE,
        SATURATION_FIGURE,
    ]
    if stage_enabled("training"):
        outputs.append(EVALUATION_RUNS_TABLE)
    return outputs
