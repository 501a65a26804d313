# Glue shared by every stage: the library on the path, config validation, wildcard constraints, input functions.
import os
import sys

# Rule scripts (also in conda envs and on SLURM nodes, which parse this file again) import the library from src/.
_SRC = os.path.abspath(os.path.join(workflow.basedir, "src"))
if _SRC not in sys.path:
    sys.path.insert(0, _SRC)
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_SRC, os.environ.get("PYTHONPATH")) if p)

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
    """What `rule all` builds: the final outputs of every enabled stage (each stage file defines its getter)."""
    return [
        *get_video_outputs(),
        *get_frame_outputs(),
        *get_judgment_outputs(),
        *get_comparison_outputs(),
        *get_table_outputs(),
    ]
