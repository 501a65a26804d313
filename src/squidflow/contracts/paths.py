"""The results paths that the library itself names (in a default or in a message to the user), each written once.

The rules files import them from here (workflow/rules/common.smk), so a path the library and the workflow both name
is renamed in one edit; every other results path is a constant of the rules files alone.
tests/unit/structure/test_layout.py fails on a results path spelled out twice anywhere in workflow/, scripts/ or src/.
"""

from __future__ import annotations

DOWNLOADS_DIR = "results/downloads"  # cached public files (squidflow.fetch), shared by every stage
VIDEOS_CHECKED = "results/videos/videos_checked.parquet"
DOWNLOAD_REPORT = "results/videos/download_report.md"
DROPPED_REPORT = "results/videos/dropped_videos.md"
ANNOTATOR_REPORT_TABLE = "results/judgments/annotator_report.parquet"
KEYWORD_HITS = "results/annotation/hits_K.csv"
