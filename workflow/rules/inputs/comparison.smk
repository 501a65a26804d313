# The input functions, params and paths of workflow/rules/comparison.smk (a rules file may not hold functions,
# says `snakemake --lint`); included at the top of comparison.smk.
from squidflow.comparison.sets import ComparisonConfig

COMPARISON_HITS_HTML = "results/annotation/comparison_hits.html"
COMPARISON_METRICS = "results/comparison/metrics.json"
COMPARISON_SETS_FIGURE = "results/figures/comparison_sets.png"

COMPARISON_POOL_TABLE = "results/comparison/pool.parquet"
COMPARISON_EMBEDDINGS_TABLE = "results/comparison/embeddings.parquet"
COMPARISON_SBERT_TABLE = "results/comparison/sbert.parquet"
COMPARISON_CORPUS_TABLE = "results/comparison/corpus.parquet"
COMPARISON_SETS_TABLE = "results/comparison/sets.parquet"


COMPARISON = config["comparison"]


def get_comparison_outputs():
    if not stage_enabled("comparison"):
        return []
    return [
        COMPARISON_CORPUS_TABLE,
        COMPARISON_POOL_TABLE,
        COMPARISON_SETS_TABLE,
        COMPARISON_HITS,
        COMPARISON_HITS_HTML,
        COMPARISON_METRICS,
        *(expand("results/tables/crowd_comparison.{ext}", ext=["csv", "md"]) if COMPARISON["ratings"] else []),
    ]


def get_sherlock_annotations():
    return get_data_path(config["sherlock"]["annotations"])


def get_comparison_corpus_inputs(wildcards):
    """The Sherlock annotation file when it is a local copy (a URL is fetched by the job), or our frames + videos."""
    if COMPARISON["corpus"] == "sherlock":
        source = get_sherlock_annotations()
        return {} if is_url(source) else {"annotations": source}
    return {"frames": FRAMES_TABLE, "dataset_images": DATASET_IMAGES, "videos": VIDEO_MANIFEST}


def get_comparison_figure_inputs(wildcards):
    """The sets and the corpus, and with the frames corpus the dataset's images it draws (declared: a job on object
    storage gets its local copies)."""
    inputs = {"sets": COMPARISON_SETS_TABLE, "corpus": COMPARISON_CORPUS_TABLE}
    if COMPARISON["corpus"] != "sherlock":
        inputs["dataset_images"] = DATASET_IMAGES
    return inputs


def get_comparison_embed_inputs(wildcards):
    """The corpus and its SBERT table, plus the frozen image features for the probe scorer."""
    inputs = {"corpus": COMPARISON_CORPUS_TABLE, "sbert": COMPARISON_SBERT_TABLE}
    if COMPARISON["scorer"] == "probe":
        inputs["features"] = FEATURES_TABLE.format(backbone=config["features"]["backbone"])
    return inputs


def get_comparison_ratings(wildcards):
    return {"ratings": COMPARISON["ratings"]} if COMPARISON["ratings"] else {}


def get_comparison_proposals(wildcards):
    return {"proposals": COMPARISON["proposals"]} if COMPARISON["proposals"] else {}
