# Glue shared by every stage: the library on the path, config validation, wildcard constraints, the helpers every
# stage's input functions use. Each stage's own input functions are in workflow/rules/inputs/<stage>.smk.
import dataclasses
import os

# The library (src/squidflow) is on the path since workflow/checks.smk, included first (DEVELOPERS.md, "How the
# library is found").
from snakemake.exceptions import WorkflowError
from squidflow.config.validation import ConfigError, validate_config
from squidflow.fetch import is_url, local_copy
from squidflow.contracts.paths import (
    ANNOTATOR_REPORT_TABLE,
    DOWNLOAD_REPORT,
    DOWNLOADS_DIR,
    DROPPED_REPORT,
    KEYWORD_HITS,
    VIDEOS_CHECKED,
)
from squidflow import version as squidflow_version
from squidflow.runtime.input_sizes import patch_input_sizes
from squidflow.runtime.s3_plugin import patch_directory_check, patch_inventory
from squidflow.runtime.command_line import redact_command_line

# Snakemake's log header quotes its command line ("Command: ..."), into .snakemake/log/ too: a proxy password in
# --config (issue 44) and a --storage-*-secret*/-token*/-password* value (issue 57) are redacted there
# (squidflow.runtime.command_line; docs/upstream.md, change 4). The config keeps the proxy; the download jobs get it
# in their environment (squidflow.fetch.PROXY_ENV), never in a file.
redact_command_line()

# The config is checked here, before any job (its files were parsed strictly in workflow/checks.smk): every key
# against the schema, keys that go together, and every local input path the config names (relative to the
# working directory). A problem stops the run with its key and fix.
try:
    validate_config(
        config, workflow.source_path("../schemas/config.schema.yaml"), inputs_base=os.getcwd(), repo_root=SQUIDFLOW_ROOT
    )
except ConfigError as _error:
    raise WorkflowError(str(_error)) from None  # the message says it all: no traceback
# Which squidflow this is (version and `git describe`), for the report's front page (workflow/report/workflow.rst
# reads only the config). Set after validation; no rule reads it.
config["_squidflow"] = {"made_by": squidflow_version.describe(SQUIDFLOW_ROOT)}
# On S3 (profiles/s3) a folder output is looked up again after its job uploaded it: the plugin keeps a folder's first
# "missing"; each folder is listed once while the DAG is built, not a request per file; a file found is not listed as
# a folder and a bucket found not asked again (squidflow.runtime.s3_plugin, docs/upstream.md, changes 3 and 3a). On
# any storage the scheduler asks an input's size once, not in every round (squidflow.runtime.input_sizes, change 3b).
if getattr(workflow.storage_settings, "default_storage_provider", None) == "s3":
    patch_directory_check()
    patch_inventory()
if getattr(workflow.storage_settings, "default_storage_provider", None) is not None:
    patch_input_sizes()
# (The `onstart:` handler — writable results/ and logs/, the Slurm watch — is in workflow/checks.smk: a rules file
# with functions may not also hold a handler, says `snakemake --lint`.)


# Every global constraint is declared here, before any rule: a `wildcard_constraints:` block after rules makes Snakemake
# 9.27 rebuild those rules' outputs, and an output on S3 (snakemake-storage-plugin-s3 0.3.6) then loses its
# constraints (its local path is made again from the bucket and key, without them), so `results/features/{backbone}`
# matched `efficientnet_lite0/shard0` on S3 and the DAG could not be built (docs/upstream.md).
wildcard_constraints:
    video_id=r"[A-Za-z0-9_\-]+",
    event=r"[A-Za-z0-9_\-]+",
    backbone=r"[a-z0-9_]+",
    variant=r"[AB]",
    seed=r"\d+",
    text_method="tfidf|sbert",


# The artifacts more than one stage reads (one name each, used wherever the path is named).
VIDEO_MANIFEST = "results/videos/videos.parquet"
FRAMES_TABLE = "results/dataset/frames.parquet"
DATASET_IMAGES = "results/dataset/images"  # the selected frames' images, named in FRAMES_TABLE's image_path
JUDGMENTS_TABLE = "results/judgments/judgments.parquet"
IMAGE_SCORES_TABLE = "results/judgments/image_scores.parquet"
# The demo's inputs, and outputs written or read by more than one stage's rules.
DEMO_TRUTH_TABLE = "results/videos/demo/truth.parquet"
DEMO_CATALOG_TABLE = "results/videos/demo/catalog.parquet"
DEMO_SUBTITLES = "results/videos/demo/{video_id}.en.vtt"
DEMO_VIDEO = "results/videos/demo/{video_id}.mp4"
DEMO_VIDEO_TRUTH = "results/videos/demo/truth/{video_id}.parquet"
AGREEMENT_TABLE_CSV = "results/tables/table7_agreement.csv"
HIT_TEMPLATE = "results/annotation/hit_template.html"
KEYWORD_TEMPLATE = "results/annotation/keyword_template.html"
COMPARISON_HITS = "results/annotation/comparison_hits.csv"
TABLE_CSV = "results/tables/{table}.csv"
TABLE_MD = "results/tables/{table}.md"
TABLE_TEX = "results/tables/{table}.tex"
TABLE_FILE = "results/tables/{table}.{ext}"
# The raters aggregation leaves out, under judgments.quality.exclude: the rubric's report, or the triage's exclusions.
TRIAGE_EXCLUSIONS_TABLE = "results/judgments/annotator_exclusions.parquet"
EXCLUSIONS_TABLE = (
    ANNOTATOR_REPORT_TABLE if config["judgments"]["quality"]["exclude"] == "rubric" else TRIAGE_EXCLUSIONS_TABLE
)


def stage_enabled(stage):
    return stage in config["stages"]


def get_data_path(path):
    """A public-data location from the config: a URL as is, or its local copy under $SQUIDFLOW_DATA (an offline
    mirror, `squidflow.fetch.local_copy`); a relative local path from the working directory, else from the
    repository root."""
    if is_url(path):
        return local_copy(path) or path
    if os.path.isabs(path) or os.path.exists(path):
        return path
    beside_repo = os.path.normpath(os.path.join(SQUIDFLOW_ROOT, path))
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
        *get_training_outputs(),
        *get_evaluation_outputs(),
        *get_litmus_outputs(),
        *get_text_outputs(),
        *get_publish_outputs(),
        *get_report_outputs(),
    ]


# Where the judgments come from (simulated | mturk | release): the stages after judgments and the report's notes ask.
JUDGMENT_SOURCE = config["judgments"]["source"]


# The report's captions, which every stage's figures and tables use.
# Each stage's look-at-it figures (results/figures/), self-contained copies of the annotation task pages and the run
# summary, so that `snakemake --report results/report.zip` has every result of the run (workflow/rules/report.smk).
REPORT = config["report"]


def get_report_note(*kinds):
    """What a figure or page says about its data, empty for real data (squidflow.presentation.style.report_note: `videos`,
    `judgments`, `run_judgments`)."""
    from squidflow.presentation.style import report_note

    return report_note(
        kinds,
        source_types=[s["type"] for s in config["sources"]],
        judgment_source=JUDGMENT_SOURCE,
        stages=config["stages"],
    )
