"""The one place where every Parquet artifact's columns are written down.

Rules hand each other Parquet files; a silent change of a column's name or type three stages upstream is the kind
of bug that costs a day. So each artifact has a schema here, `squidflow.io.write_parquet` casts to it and
`squidflow.io.read_parquet` checks it, and both name the artifact in their errors.

Column names are the papers' words (event, prompt, judgment, variant, certainty bin, comparison set, plausibility).
A stage that needs a new column adds it here, and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

# A fixed-size float32 vector whose width depends on the backbone: checked as "Array of Float32, any width".
ANY_WIDTH_F32 = pl.Array(pl.Float32, 1)


@dataclass(frozen=True)
class Schema:
    """An artifact's name, its columns, and which rule makes it (named in errors so users know what to rerun)."""

    name: str
    columns: dict[str, pl.DataType]
    produced_by: str
    optional: tuple[str, ...] = field(default=())

    @property
    def required(self) -> list[str]:
        return [c for c in self.columns if c not in self.optional]


BBOX = pl.Struct({"left": pl.Float64, "top": pl.Float64, "width": pl.Float64, "height": pl.Float64})

# --- videos ------------------------------------------------------------------------------------------------------
VIDEOS = Schema(
    "videos",
    {
        "video_id": pl.Utf8,
        "event": pl.Utf8,
        "source": pl.Utf8,  # demo | local | urls | youtube | squid-e-release
        "path": pl.Utf8,  # local file, relative to the working directory
        "url": pl.Utf8,
        "title": pl.Utf8,
        "description": pl.Utf8,
        "language": pl.Utf8,
        "duration_s": pl.Float64,
        "fps": pl.Float64,
        "n_frames": pl.Int64,
        "width": pl.Int64,
        "height": pl.Int64,
        "status": pl.Utf8,  # ok | unavailable | failed | corrupt | pending
        "error": pl.Utf8,
        # acquisition metadata (SQUID-E §3.1): later stages use the text
        "tags": pl.List(pl.Utf8),
        "uploader": pl.Utf8,
        "upload_date": pl.Utf8,
        "license": pl.Utf8,
        "webpage_url": pl.Utf8,
        "query": pl.Utf8,
        "query_language": pl.Utf8,
        "attempts": pl.Int64,
        # the SQUID-E release's decode-order frame numbers, for exact extraction: the sorted union over the
        # video's release rows; `release_rows` keeps each row (a video listed under two events has two)
        "release_frames": pl.List(pl.Int64),
        "release_rows": pl.List(pl.Struct({"event": pl.Utf8, "frames": pl.List(pl.Int64)})),
        "notes": pl.List(pl.Utf8),  # what the loader noticed (quirks of the source, id collisions), for the report
    },
    produced_by="rule video_manifest (workflow/rules/videos.smk)",
)
VIDEO_STATUSES = ("ok", "unavailable", "failed", "corrupt", "pending")

# The checkpoint's list of every configured source's videos (status `pending`); `download` marks the ones a job
# fetches (youtube, urls, squid-e-release YouTube ids) as opposed to files already on disk (demo, local, UCF).
VIDEO_CANDIDATES = Schema(
    "video_candidates",
    {**VIDEOS.columns, "download": pl.Boolean},
    produced_by="checkpoint video_candidates (workflow/rules/videos.smk)",
)

# One video's outcome, written by its download job; `retry_generation` counts `retry_failed` reruns (see videos.smk).
VIDEO_STATUS = Schema(
    "video_status",
    {**VIDEOS.columns, "retry_generation": pl.Int64},
    produced_by="rule acquire_video (workflow/rules/videos.smk)",
)

# Per-frame ground truth of the synthetic demo videos: what each frame shows.
TRUTH = Schema(
    "truth",
    {
        "video_id": pl.Utf8,
        "event": pl.Utf8,  # the event the video is about (its label)
        "frame_index": pl.Int64,  # decode order
        "pts_s": pl.Float64,
        "condition": pl.Utf8,  # clean | crossfade | occlusion | blur | dark | black | cut
        "evidence": pl.List(pl.Struct({"event": pl.Utf8, "weight": pl.Float64})),  # every demo event, weight in [0,1]
    },
    produced_by="rules make_demo_videos and demo_corpus (workflow/rules/demo.smk)",
)

# Synthetic metadata of each demo video (the text a real upload would carry); acquisition copies it into VIDEOS.
DEMO_CATALOG = Schema(
    "demo_catalog",
    {
        "video_id": pl.Utf8,
        "event": pl.Utf8,
        "path": pl.Utf8,  # relative to the working directory
        "title": pl.Utf8,
        "description": pl.Utf8,  # several sentences: event clues plus remarks on the ambiguous stretches
        "language": pl.Utf8,  # en | es | fr | de
        "tags": pl.List(pl.Utf8),
    },
    produced_by="rule demo_corpus (workflow/rules/demo.smk)",
)

# --- frames, features, selection ---------------------------------------------------------------------------------
EXTRACTED_FRAMES = Schema(
    "extracted_frames",
    {
        "video_id": pl.Utf8,
        "frame_index": pl.Int64,  # decode-order index (exact) or nearest index to the pts (even)
        "pts_s": pl.Float64,
        "is_keyframe": pl.Boolean,
        "image_path": pl.Utf8,
    },
    produced_by="rule extract_frames (workflow/rules/frames.smk)",
)

# One row per video that extraction tried: `corrupt` videos (ffmpeg could not decode them) are left out downstream and
# marked in results/videos/videos_checked.parquet (the manifest with extraction's verdict applied).
EXTRACTION_STATUS = Schema(
    "extraction_status",
    {
        "video_id": pl.Utf8,
        "status": pl.Utf8,  # ok | corrupt
        "error": pl.Utf8,
        "mode": pl.Utf8,  # even | exact (null when corrupt)
        "n_frames": pl.Int64,  # frames extracted
    },
    produced_by="rule extract_frames (workflow/rules/frames.smk)",
)

FEATURES = Schema(
    "features",
    {
        "video_id": pl.Utf8,
        "frame_index": pl.Int64,
        "pts_s": pl.Float64,
        "feature": ANY_WIDTH_F32,
    },
    produced_by="rule featurize (workflow/rules/frames.smk)",
)

FRAMES = Schema(
    "frames",
    {
        "image_id": pl.Utf8,  # f"{video_id}_{frame_index}"
        "video_id": pl.Utf8,
        "event": pl.Utf8,
        "frame_index": pl.Int64,
        "pts_s": pl.Float64,
        "cluster": pl.Int64,
        "distance": pl.Float64,
        "image_path": pl.Utf8,
        "split": pl.Utf8,  # train | val | test
    },
    produced_by="rule select_frames (workflow/rules/frames.smk)",
)

# --- human judgments ---------------------------------------------------------------------------------------------
JUDGMENTS = Schema(
    "judgments",
    {
        "video_id": pl.Utf8,
        "frame_index": pl.Int64,
        "event_prompt": pl.Utf8,
        "variant": pl.Utf8,  # A | B
        "annotator": pl.Utf8,  # MTurk WorkerId; the release has none: its rating positions huj_0..huj_2
        "position": pl.Int64,  # order of the annotator's assignment within its HIT (release: k of huj_k)
        "hit": pl.Utf8,
        "rating": pl.Int64,  # 0..100
        "round": pl.Int64,  # 1 = the annotation task, 2 = a repeat of it (intra-annotator agreement, SQUID-E §4.2)
        "source": pl.Utf8,  # mturk | squid-e-release | simulated
    },
    produced_by="rule ingest_judgments (workflow/rules/judgments.smk)",
)

ANNOTATOR_REPORT = Schema(
    "annotator_report",
    {
        "annotator": pl.Utf8,
        "n_judgments": pl.Int64,
        "flags": pl.List(pl.Utf8),
        "excluded": pl.Boolean,
    },
    produced_by="rule annotator_quality (workflow/rules/judgments.smk)",
)

IMAGE_SCORES = Schema(
    "image_scores",
    {
        "video_id": pl.Utf8,
        "frame_index": pl.Int64,
        "event_prompt": pl.Utf8,
        "variant": pl.Utf8,
        "mean": pl.Float64,
        "std": pl.Float64,
        "n": pl.Int64,
        "certainty_bin": pl.Utf8,  # "0-20" ... "80-100" (100 falls in the last bin)
        "alt_bins": pl.List(pl.Utf8),  # SQUID-E supplement D.3: each judgment binned on its own
        "high_certainty": pl.Boolean,  # mean >= 95 (SQUID-E §4.1, Figure 3)
    },
    produced_by="rule aggregate_judgments (workflow/rules/judgments.smk)",
)

# --- comparison sets (Sherlock §4.3) -----------------------------------------------------------------------------
COMPARISON_CORPUS = Schema(
    "comparison_corpus",
    {
        "instance_id": pl.Utf8,
        "image_id": pl.Utf8,
        "image": pl.Utf8,  # url or path
        "width": pl.Int64,
        "height": pl.Int64,
        "bboxes": pl.List(BBOX),
        "clue": pl.Utf8,
        "inference": pl.Utf8,
        "split": pl.Utf8,
        "confidence": pl.Float64,
        "chunk": pl.Int64,  # retrieval chunk of ~1K instances (Sherlock split_idx 0..22)
    },
    produced_by="rule comparison_corpus (workflow/rules/comparison.smk)",
)

# Per corpus instance, the plausibility scorer's unit vectors: plausibility(q, c) = region[q] · inference[c].
COMPARISON_EMBEDDINGS = Schema(
    "comparison_embeddings",
    {"instance_id": pl.Utf8, "region": ANY_WIDTH_F32, "inference": ANY_WIDTH_F32},
    produced_by="rule comparison_embed (workflow/rules/comparison.smk)",
)

# SBERT (all-MiniLM-L6-v2) embedding of every clue and inference of the corpus, keyed by sha1 of the text.
COMPARISON_SBERT = Schema(
    "comparison_sbert",
    {"key": pl.Utf8, "embedding": ANY_WIDTH_F32},
    produced_by="rule comparison_sbert (workflow/rules/comparison.smk)",
)

COMPARISON_POOL = Schema(
    "comparison_pool",
    {"instance_id": pl.Utf8, "inference": pl.Utf8, "cluster": pl.Int64, "n_clusters": pl.Int64},
    produced_by="rule comparison_pool (workflow/rules/comparison.smk)",
)

COMPARISON_SETS = Schema(
    "comparison_sets",
    {
        "query_id": pl.Utf8,
        "split": pl.Utf8,
        "rank": pl.Int64,  # 1..10
        "candidate_id": pl.Utf8,
        "inference": pl.Utf8,
        "plausibility": pl.Float64,
        "set_rank": pl.Int64,  # 1 = the most promising set of its split (Appendix E ranking)
    },
    produced_by="rule comparison_sets (workflow/rules/comparison.smk)",
)

# --- training runs and tables ------------------------------------------------------------------------------------
RUN_PREDICTIONS = Schema(
    "run_predictions",
    {
        "image_id": pl.Utf8,
        "eval_set": pl.Utf8,
        "label": pl.Int64,
        "probs": pl.List(pl.Float64),
        "human_mean": pl.Float64,  # mean judgment 0..100, null when none
    },
    produced_by="rule train (workflow/rules/training.smk)",
)

# Images a training experiment can use, decoded once into a memory-mapped uint8 tensor file (squidflow.training.cache):
# row `row` of results/training/cache/{pool}.npy holds the pixels of `image_id`.
TRAINING_IMAGES = Schema(
    "training_images",
    {
        "image_id": pl.Utf8,
        "pool": pl.Utf8,  # SD (standard, high-certainty) | SE (selected ambiguous SQUID-E frames)
        "event": pl.Utf8,  # the label: the image's event (SE: its video's event)
        "split": pl.Utf8,  # train | val | test
        "video_id": pl.Utf8,  # null for standard images that are not video frames
        "source_path": pl.Utf8,  # the JPEG, or the video the frame is decoded from
        "frame_index": pl.Int64,  # decode-order frame in source_path; null when source_path is an image
        "row": pl.Int64,  # row in the cache tensor file
    },
    produced_by="rule make_training_cache (workflow/rules/training.smk)",
    optional=("video_id", "frame_index"),
)

# Which images an experiment trains and evaluates on, with labels and human judgments (SQUID-E §5.1, §5.3).
TRAINING_SETS = Schema(
    "training_sets",
    {
        "image_id": pl.Utf8,
        "pool": pl.Utf8,  # SD | SE: which cache the pixels are in
        "row": pl.Int64,  # row in that cache
        "use": pl.Utf8,  # train | eval
        "dataset": pl.Utf8,  # SD | SE: the training set (use=train) or evaluation set (use=eval) it belongs to
        "event": pl.Utf8,
        "label": pl.Int64,  # class index (binary experiment: 1 = target event)
        "human_mean": pl.Float64,  # mean judgment 0..100 for the label's prompt, null when none
    },
    produced_by="rule training_sets (workflow/rules/training.smk)",
)

RESULT_TABLE = Schema(
    "result_table",
    {
        "train_set": pl.Utf8,
        "method": pl.Utf8,
        "metric": pl.Utf8,
        "mean": pl.Float64,
        "std": pl.Float64,
        "n_seeds": pl.Int64,
    },
    produced_by="rule result_table (workflow/rules/training.smk)",
)

ALL: dict[str, Schema] = {
    s.name: s
    for s in (
        VIDEOS,
        VIDEO_CANDIDATES,
        VIDEO_STATUS,
        TRUTH,
        DEMO_CATALOG,
        EXTRACTED_FRAMES,
        EXTRACTION_STATUS,
        FEATURES,
        FRAMES,
        JUDGMENTS,
        ANNOTATOR_REPORT,
        IMAGE_SCORES,
        COMPARISON_CORPUS,
        COMPARISON_EMBEDDINGS,
        COMPARISON_SBERT,
        COMPARISON_POOL,
        COMPARISON_SETS,
        TRAINING_IMAGES,
        TRAINING_SETS,
        RUN_PREDICTIONS,
        RESULT_TABLE,
    )
}


def empty(schema: Schema) -> pl.DataFrame:
    """A zero-row frame with the schema's columns, for stages that legitimately have nothing (all videos failed)."""
    return pl.DataFrame(schema={c: (pl.Array(pl.Float32, 1) if t == ANY_WIDTH_F32 else t) for c, t in schema.columns.items()})
