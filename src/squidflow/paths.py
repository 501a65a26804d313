"""The results paths that the library itself names (in a default or in a message to the user), each written once.

The rules files import them from here (workflow/rules/common.smk), so a path the library and the workflow both name
is renamed in one edit; every other results path is a constant of the rules files alone.
tests/unit/structure/test_layout.py fails on a results path spelled out twice anywhere in workflow/, scripts/ or src/.
"""

from __future__ import annotations

import os
from pathlib import Path

DOWNLOADS_DIR = "results/downloads"  # cached public files (squidflow.fetch), shared by every stage
VIDEOS_CHECKED = "results/videos/videos_checked.parquet"
DOWNLOAD_REPORT = "results/videos/download_report.md"
DROPPED_REPORT = "results/videos/dropped_videos.md"
ANNOTATOR_REPORT_TABLE = "results/judgments/annotator_report.parquet"
KEYWORD_HITS = "results/annotation/hits_K.csv"


# --- where this job sees the workflow's files ----------------------------------------------------------------------
# "." when the workflow's files are where its rules name them; the folder of a storage plugin's local copies when they
# are not (`--default-storage-provider s3`: `.snakemake/storage/s3/<bucket>/<prefix>`). Set by squidflow.logs.setup
# from the job's log path. `job_file` maps a path a table or the config names (`results/frames/shard0/v/3.jpg`) to
# it, `recorded_path` maps a file the job wrote back, so a run on object storage records what a local run records.
_JOB_ROOT = ["."]


def job_root_of(log_path: str | os.PathLike) -> str:
    """The folder that stands for the working directory, from a job's log as the job sees it: every rule's log is
    `logs/<rule>/...` (DEVELOPERS.md), so what comes before the last `logs` folder is a storage plugin's local-copy
    folder ("." without one)."""
    parts = Path(log_path).parts
    starts = [i for i, part in enumerate(parts[:-1]) if part == "logs"]
    return str(Path(*parts[: starts[-1]])) if starts and starts[-1] > 0 else "."


def set_job_root(log_path: str | os.PathLike) -> None:
    _JOB_ROOT[0] = job_root_of(log_path)


def job_file(path: str | os.PathLike) -> str:
    """A path the workflow names relative to its working directory (a table's `results/...`, a config's relative
    path), where this job sees it. Absolute paths and URLs stay as they are."""
    text = os.fspath(path)
    root = _JOB_ROOT[0]
    if root == "." or os.path.isabs(text) or "://" in text or os.path.normpath(text).startswith(root + os.sep):
        return text  # already where the job sees it (a declared input, as Snakemake hands it over)
    return os.path.join(root, text)


def recorded_path(path: str | os.PathLike) -> str:
    """The inverse of `job_file`: a file this job wrote or read, by its path in the workflow (as tables record it)."""
    text = os.fspath(path)
    if _JOB_ROOT[0] == "." or os.path.isabs(text) or "://" in text:
        return text
    rel = os.path.relpath(text, _JOB_ROOT[0])
    return text if rel.startswith("..") else rel
