# Glue shared by every stage: the library on the path, config validation, wildcard constraints, input functions.
import os
import sys

# The library lives in src/. It is installed in .venv (`make setup`); this line also makes it importable when
# snakemake runs from another environment. Rule scripts find it through scripts/squidflow (a link to src/squidflow),
# because Snakemake puts each script's folder on its path — in conda envs and on cluster nodes too.
sys.path.insert(0, os.path.join(workflow.basedir, "src"))

from squidflow.config import validate_config

validate_config(config, workflow.source_path("../schemas/config.schema.yaml"))


wildcard_constraints:
    video_id=r"[A-Za-z0-9_\-]+",
    event=r"[A-Za-z0-9_\-]+",
    backbone=r"[a-z0-9_]+",
    variant=r"[AB]",
    seed=r"\d+",


def stage_enabled(stage):
    return stage in config["stages"]


def get_final_outputs():
    """The default target: the final outputs of every enabled stage (each stage file defines its getter)."""
    return [
        *get_video_outputs(),
        *get_frame_outputs(),
        *get_judgment_outputs(),
        *get_comparison_outputs(),
        *get_table_outputs(),
    ]
