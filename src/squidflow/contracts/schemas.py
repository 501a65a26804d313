"""The one place where every Parquet artifact's columns are written down.

Rules hand each other Parquet files; a silent change of a column's name or type three stages upstream is the kind
of bug that costs a day. So each artifact has a schema here, `squidflow.contracts.io.write_parquet` casts to it and
`squidflow.contracts.io.read_parquet` checks it, and both name the artifact in their errors.

Column names are the papers' words (event, prompt, judgment, variant, certainty bin, comparison set, plausibility).
A stage that needs a new column adds it here, and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl
from polars._typing import PolarsDataType  # polars' own name for "a DataType class or instance"

# A fixed-size float32 vector whose width depends on the backbone: checked as "Array of Float32, any width".
ANY_WIDTH_F32 = pl.Array(pl.Float32, 1)


@dataclass(frozen=True)
class Schema:
    """An artifact's name, its columns, and which rule makes it (named in errors so users know what to rerun)."""

    name: str
    columns: dict[str, PolarsDataType]  # pl.Utf8 (a class) or pl.List(pl.Utf8)
    produced_by: str
    optional: tuple[str, ...] = field(default=())

    @property
    def required(self) -> list[str]:
        return [c for c in self.columns if c not in self.optional]


BBOX = pl.Struct({"left": pl.Float64, "top": pl.Float64, "width": pl.Float64, "height": pl.Float64})


# --- the offline demo's synthetic videos (demo stage) ----------------------------------------------------------------
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

# --- videos ----------------------------------------------------------------------------------------------------------
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
        # why a video is not ok: one of squidflow.videos.failures.REASONS (null when ok); the raw message is `error`
        "reason": pl.Utf8,
        # subtitle files kept beside the video, `<stem>.<lang>.vtt` or `.srt` (download.subtitles)
        "subtitles": pl.List(pl.Utf8),
        # width/height above are as displayed (rotation metadata applied, as OpenCV and the frames give them); these
        # are the stream's coded size
        "stored_width": pl.Int64,
        "stored_height": pl.Int64,
        # provenance (issue 48): when the download finished (ISO 8601 UTC; null for files already on disk). With
        # `uploader` (the channel), `upload_date`, `license` (as the source states it) and `webpage_url` above.
        "retrieved_at": pl.Utf8,
    },
    produced_by="rule video_manifest (workflow/rules/videos.smk)",
    optional=("reason", "subtitles", "stored_width", "stored_height", "retrieved_at"),
)

VIDEO_STATUSES = ("ok", "unavailable", "failed", "corrupt", "pending")

# The checkpoint's list of every configured source's videos (status `pending`); `download` marks the ones a job
# fetches (youtube, urls, squid-e-release YouTube ids) as opposed to files already on disk (demo, local, UCF).
VIDEO_CANDIDATES = Schema(
    "video_candidates",
    # `licenses`: the licence families its source asks for (sources[].licenses; null = any), for the download's filter
    {**VIDEOS.columns, "download": pl.Boolean, "licenses": pl.List(pl.Utf8)},
    produced_by="checkpoint video_candidates (workflow/rules/videos.smk)",
    optional=(*VIDEOS.optional, "licenses"),
)

# The outcome of each video of a download shard (one table per shard and retry generation, see videos.smk);
# `retry_generation` is the `retry_failed` rerun that settled the video.
VIDEO_STATUS = Schema(
    "video_status",
    {**VIDEOS.columns, "retry_generation": pl.Int64},
    produced_by="rule acquire_videos (workflow/rules/videos.smk)",
    optional=("retrieved_at",),
)

# A `urls` source's list (CSV or Parquet, config sources[].path), conformed to this whatever its file type, so an id
# column of integers is read as strings like any other id.
URL_LIST = Schema(
    "url_list",
    {"url": pl.Utf8, "event": pl.Utf8, "video_id": pl.Utf8, "title": pl.Utf8, "frames": pl.Utf8},
    produced_by="you: a CSV or Parquet list with columns url, event and optionally video_id, title, frames (the "
    "frame numbers to extract, e.g. '12 40 77'; a published dataset's rebuild/videos.csv) (config sources[].path, "
    "type urls)",
    optional=("video_id", "title", "frames"),
)

# --- frames, features, selection -------------------------------------------------------------------------------------
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
        # what the frame table found (null when corrupt): the video's frames as decoded (OpenCV's count), its
        # displayed size; rule check_videos writes them into videos_checked.parquet
        "video_frames": pl.Int64,
        "width": pl.Int64,
        "height": pl.Int64,
    },
    optional=("video_frames", "width", "height"),
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

# --- human judgments (SQUID-E §4; the keyword task of Apples to Oranges) ---------------------------------------------
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
        "source": pl.Utf8,  # where the rating came from: simulated | mturk | label_studio | squid-e-release
        "source_file": pl.Utf8,  # the file it was read from (a batch CSV, a Label Studio export, the release's CSV)
        "wave": pl.Utf8,  # the annotation wave: first (round 1 and its repeat), round2 (the next round), ...
    },
    produced_by="rule ingest_judgments (workflow/rules/judgments.smk)",
    optional=("source_file", "wave"),  # older judgments.parquet files have neither
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
        # people's numbers are `people_*`, a model's `model_*` / `score` (PREDICTIONS): one word, one meaning
        "people_mean": pl.Float64,  # the mean judgment (0-100) of the image's raters
        "people_std": pl.Float64,  # their population standard deviation
        "n": pl.Int64,
        "certainty_bin": pl.Utf8,  # of people_mean: "0-20" ... "80-100" (100 falls in the last bin)
        "alt_bins": pl.List(pl.Utf8),  # SQUID-E supplement D.3: each judgment binned on its own
        "high_certainty": pl.Boolean,  # people_mean >= 95 (SQUID-E §4.1, Figure 3)
    },
    produced_by="rule aggregate_judgments (workflow/rules/judgments.smk)",
)

# Ambiguity or noise (issue #36): per annotator and variant, the signals against them and one verdict.
RATER_TRIAGE = Schema(
    "rater_triage",
    {
        "annotator": pl.Utf8,  # the platform's id: this table stays on this machine (never published)
        "pseudonym": pl.Utf8,  # Ann<k>, the name the report, the tables and the published data give the rater
        "variant": pl.Utf8,
        "n_judgments": pl.Int64,  # round 1
        "n_items": pl.Int64,  # images × prompts shared with at least one other rater
        "agreement": pl.Float64,  # Pearson r of the rater's ratings with the leave-this-rater-out mean, same items
        "agreement_lo": pl.Float64,  # its bootstrap interval over the rater's items (config `intervals`)
        "agreement_hi": pl.Float64,
        "mace_competence": pl.Float64,  # crowd-kit on the certainty bins: MACE's P(not spamming)
        "glad_alpha": pl.Float64,  # GLAD's σ(α)
        "dawid_skene_diagonal": pl.Float64,  # Dawid–Skene: Σ_k prior_k · P(answer k | true k)
        "crowdlab_quality": pl.Float64,  # cleanlab CROWDLAB annotator quality; null when no model probabilities
        "modal_share": pl.Float64,  # share of the rater's ratings equal to their most frequent rating
        "extreme_share": pl.Float64,  # share of ratings at 0-5 or 95-100
        "others_extreme_share": pl.Float64,  # the same share of the other raters' ratings on the same items
        "hit_constant_share": pl.Float64,  # share of the rater's HITs (2+ images) with one rating for every image
        "work_seconds_per_image": pl.Float64,  # null where the platform gives no work time
        "rubric_flags": pl.List(pl.Utf8),  # SQUID-E §3.2 (rule annotator_quality)
        "rubric_excluded": pl.Boolean,
        "verdict": pl.Utf8,  # ok | suspect | careless
        "reasons": pl.List(pl.Utf8),  # the signals that decided it, in words
        "skipped": pl.List(pl.Utf8),  # signals not computed, each with its reason
        "excluded": pl.Boolean,  # excluded from aggregation under judgments.quality.exclude
        "policy": pl.Utf8,  # rubric | triage
        # issue #50: the consensus rounds and the signals that need no consensus or a neighbouring image
        "neighbour_agreement": pl.Float64,  # r of the ratings with the consensus of the next/previous image of the HIT
        "neighbour_pairs": pl.Int64,  # the images it is measured on
        "duplicate_hits": pl.Int64,  # HITs answered image for image as another rater did (3+ answers within 6-94)
        "n_hits_answered": pl.Int64,  # HITs with 3+ answers within 6-94
        "duplicate_share": pl.Float64,  # duplicate_hits / n_hits_answered
        "duplicates": pl.Utf8,  # the raters with those identical answers, by pseudonym (the first five)
        "in_consensus": pl.Boolean,  # in the last round's consensus (not careless the round before)
        "consensus_rounds": pl.Int64,  # rounds until no verdict changed
        "rounds": pl.List(pl.Utf8),  # the rater's verdict changes between rounds, in words
    },
    produced_by="rule rater_triage (workflow/rules/judgments.smk)",
)

IMAGE_TRIAGE = Schema(
    "image_triage",
    {
        "video_id": pl.Utf8,
        "frame_index": pl.Int64,
        "event_prompt": pl.Utf8,
        "n": pl.Int64,  # round-1 ratings, both variants
        "mean": pl.Float64,
        "mean_lo": pl.Float64,  # bootstrap interval of the mean over the image's raters (config `intervals`)
        "mean_hi": pl.Float64,
        "interval_width": pl.Float64,
        "spread": pl.Float64,  # standard deviation of the ratings (ddof 1)
        "spread_screened": pl.Float64,  # the same without suspect and careless raters (null: fewer than 2 left)
        "n_screened": pl.Int64,
        "mean_A": pl.Float64,
        "mean_B": pl.Float64,
        "variant_gap": pl.Float64,  # |mean_A - mean_B|; null unless both variants rated it
        "model_probability": pl.Float64,  # the model's probability of the prompt's event (null: no model)
        "model_distance": pl.Float64,  # |100 · probability - mean| / 100
        "crowdlab_consensus_quality": pl.Float64,  # cleanlab CROWDLAB's consensus quality (null: no model)
        "triage": pl.Utf8,  # clear | ambiguous | contested | undecided
        "reason": pl.Utf8,
    },
    produced_by="rule image_triage (workflow/rules/judgments.smk)",
)

# The next round's plan (annotation.next_round; squidflow.judgments.allocation.plan_next_round): per soft label
# (image, prompt, variant) its precision now against the target and the ratings the next round buys it. The CHOICE
# of ratings; the tasks that carry them are written from it.
NEXT_ROUND_PLAN = Schema(
    "next_round_plan",
    {
        "video_id": pl.Utf8,
        "frame_index": pl.Int64,
        "event_prompt": pl.Utf8,
        "variant": pl.Utf8,
        "ratings": pl.Int64,  # ratings bought so far, every wave, excluded raters' included (round 1)
        "n": pl.Int64,  # the kept ones: excluded raters left out (what the soft label averages)
        "mean": pl.Float64,
        "mean_lo": pl.Float64,  # the interval of the mean (the published one); null: fewer than 2 ratings
        "mean_hi": pl.Float64,
        "spread": pl.Float64,  # SD of the kept ratings (ddof 1); null: fewer than 2
        "interval_width": pl.Float64,  # of the mean (the published mean_lo, mean_hi); null: fewer than 2 ratings
        "target_width": pl.Float64,  # annotation.next_round.target.interval_width
        "ratings_needed": pl.Int64,  # projected kept ratings in all to reach the target, (2 z spread / target)^2
        "ratings_planned": pl.Int64,  # this round's ratings (a multiple of annotation.assignments_per_hit)
        "interval_width_planned": pl.Float64,  # projected width after them, 2 z spread / sqrt(n + planned)
        "reached": pl.Boolean,  # the interval meets the target: no more ratings
        "unreachable": pl.Boolean,  # cannot reach it within max_ratings_per_image: reported, not chased
    },
    produced_by="rule next_round (workflow/rules/judgments.smk)",
)

# The SIMULATED panel's planted faults: which raters and images the triage should find (rule simulate_panel).
PLANTED_FAULTS = Schema(
    "planted_faults",
    {
        "unit": pl.Utf8,  # annotator | image
        "annotator": pl.Utf8,
        "variant": pl.Utf8,
        "image_id": pl.Utf8,
        "event_prompt": pl.Utf8,
        "fault": pl.Utf8,  # careless | constant | extremes | reversed | prior | swapped
    },
    produced_by="rule simulate_panel (workflow/rules/demo.smk)",
)

# Gold keywords from people (the keyword task, variant K): one row per keyword an annotator gave an image.
KEYWORD_JUDGMENTS = Schema(
    "keyword_judgments",
    {
        "video_id": pl.Utf8,
        "frame_index": pl.Int64,
        "annotator": pl.Utf8,  # MTurk WorkerId
        "hit": pl.Utf8,
        "position": pl.Int64,  # the keyword's box (1..N) under its image
        "keyword": pl.Utf8,  # as typed
        "normalised": pl.Utf8,  # NFKC, lowercase, markup and leading formula characters removed, spaces collapsed
        "round": pl.Int64,
        "source": pl.Utf8,  # mturk | simulated
    },
    produced_by="rule ingest_keywords (workflow/rules/judgments.smk)",
)

# --- text: co-occurring text baselines (Apples to Oranges, Mason and Charniak 2012) ----------------------------------
CUE = pl.Struct({"start_s": pl.Float64, "end_s": pl.Float64, "text": pl.Utf8})

# Per ok video, the subtitle file found beside it (`<stem>.<lang>.vtt|srt`) and its time-stamped cues.
SUBTITLES = Schema(
    "subtitles",
    {
        "video_id": pl.Utf8,
        "status": pl.Utf8,  # found | none | unreadable
        "language": pl.Utf8,  # the file's language code (en, en-US, ...); null when none
        "path": pl.Utf8,
        "error": pl.Utf8,  # why an unreadable file could not be read (file, line, problem)
        "n_cues": pl.Int64,
        "cues": pl.List(CUE),  # in file order, markup removed
    },
    produced_by="rule read_subtitles (workflow/rules/text.smk)",
)

# Per selected frame, the text that comes with it: its video's metadata and the subtitle cues around its timestamp.
COOCCURRING = Schema(
    "cooccurring",
    {
        "image_id": pl.Utf8,
        "video_id": pl.Utf8,
        "frame_index": pl.Int64,
        "pts_s": pl.Float64,
        "language": pl.Utf8,  # the metadata's language (title, description, tags)
        "title": pl.Utf8,
        "description": pl.Utf8,
        "tags": pl.List(pl.Utf8),
        "subtitle_status": pl.Utf8,  # found | none | unreadable (the video's, from SUBTITLES)
        "subtitle_language": pl.Utf8,
        "window_start_s": pl.Float64,  # pts_s - text.subtitles.window_s
        "window_end_s": pl.Float64,
        "cues": pl.List(CUE),  # the cues overlapping the window
        "subtitles": pl.Utf8,  # their text, one cue per line ("" when none)
    },
    produced_by="rule cooccurring_text (workflow/rules/text.smk)",
)

# The tf, tf·idf and random keyword baselines: per frame, setting and system, the top-k terms.
TEXT_KEYWORDS = Schema(
    "text_keywords",
    {
        "image_id": pl.Utf8,
        "video_id": pl.Utf8,
        "frame_index": pl.Int64,
        "setting": pl.Utf8,  # a text.keywords.settings name
        "system": pl.Utf8,  # tf | tfidf | random
        "rank": pl.Int64,  # 1 = the system's best keyword
        "keyword": pl.Utf8,  # the term as the setting normalises it (a stem under `normalise: stem`)
        "surface": pl.Utf8,  # the word as written in the text (its first occurrence)
        "score": pl.Float64,  # tf: count; tfidf: count * idf; random: null
    },
    produced_by="rule text_keywords (workflow/rules/text.smk)",
)

# --- comparison sets (Sherlock §4.3) and auto-box proposals (Sherlock §4.2) ------------------------------------------
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

# One row per (image, proposal box), e.g. a detector's 100 proposals per image, with the plausibility scorer's region
# vector for the image with that box highlighted (the same scorer as COMPARISON_EMBEDDINGS): the score of a proposal
# for an inference is region · inference. image_id is the corpus' (the image URL's path for Sherlock).
COMPARISON_PROPOSALS = Schema(
    "comparison_proposals",
    {"image_id": pl.Utf8, "box": BBOX, "region": ANY_WIDTH_F32},
    produced_by="the user's proposal scorer (config comparison.proposals); read by rule comparison_metrics",
)

# --- training runs and tables (SQUID-E §5.1, §5.3, supplement D.1) ---------------------------------------------------
RUN_PREDICTIONS = Schema(
    "run_predictions",
    {
        "image_id": pl.Utf8,
        "eval_set": pl.Utf8,
        "label": pl.Int64,
        "probs": pl.List(pl.Float64),
        "human_mean": pl.Float64,  # mean judgment 0..100, null when none
    },
    produced_by="the train rules (workflow/rules/training.smk)",
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

# Whole frames for the geometric augmentations GA and AU: row `row` of the pool cache, stored at a 2·crop short side
# as C×H×W bytes at `offset` of results/training/cache/{pool}_frames.npy (squidflow.training.cache.build_frame_cache).
TRAINING_FRAMES = Schema(
    "training_frames",
    {"row": pl.Int64, "offset": pl.Int64, "height": pl.Int64, "width": pl.Int64},
    produced_by="rule make_training_frames (workflow/rules/training.smk)",
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

# The release's experiment sets (experiments/indices/*.json) mapped to frames (squidflow.training.authors_sets): one
# row per listed image of Table 1 (`target` null) and of Table 3 per target event.
AUTHORS_SETS = Schema(
    "authors_sets",
    {
        "experiment": pl.Utf8,  # table1 | table3
        "target": pl.Utf8,  # Table 3's target event (release id); null for Table 1
        "split": pl.Utf8,  # train | val (the lists' keys)
        "image": pl.Utf8,  # the release's file name (8 random characters + .png)
        "event": pl.Utf8,  # the image's event (release id), its label
        "data_type": pl.Utf8,  # train (unrated) | eval (rated) in the release's labels files
        "video_id": pl.Utf8,  # dataset.csv's id (renamed videos resolved where the ratings allow)
        "frame_index": pl.Int64,  # the frame, for eval images matched by ratings; null where only the video is known
        "match": pl.Utf8,  # how it was mapped: one of squidflow.training.authors_sets.MATCHES
    },
    produced_by="rule authors_sets (workflow/rules/training.smk)",
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
        # 95% (intervals.level) image-bootstrap interval of the seed mean; null without predictions
        "lo": pl.Float64,
        "hi": pl.Float64,
        # the bootstrap bias (mean of the resampled values − mean) of a bias-adjusted measure (ECE): mean − bias is
        # the debiased estimate; null for the others
        "bias": pl.Float64,
        "interval_method": pl.Utf8,  # percentile, bca or "bias-adjusted percentile" (squidflow.statistics.intervals)
        # against the table's baseline row on the same resampled images (null for the baseline itself)
        "diff": pl.Float64,
        "diff_lo": pl.Float64,
        "diff_hi": pl.Float64,
        "diff_bias": pl.Float64,
        "p_value": pl.Float64,  # two-sided paired bootstrap
        "p_holm": pl.Float64,  # Holm-corrected over the methods of the measure (and training set)
    },
    produced_by="rule result_table (workflow/rules/training.smk)",
    optional=("lo", "hi", "bias", "interval_method", "diff", "diff_lo", "diff_hi", "diff_bias", "p_value", "p_holm"),
)

# --- evaluation: any model against human judgments (SQUID-E §5.2, supplement D.2–D.4) --------------------------------
# A model's ranked labels per image: the one format the evaluation stage reads for every model (configured models,
# the zero-shot CLIP baseline, the classifiers the training stage trains, text baselines). One row per (image, rank),
# rank 1 = the model's top label. The image is (video_id, frame_index), or `image`, a file name that the model's
# mapping table turns into them. Files may be Parquet, CSV or JSON Lines (squidflow.evaluation.predictions).
PREDICTIONS = Schema(
    "predictions",
    {
        "video_id": pl.Utf8,
        "frame_index": pl.Int64,
        "image": pl.Utf8,  # null when video_id/frame_index are given
        "rank": pl.Int64,  # 1 = top label
        "label": pl.Utf8,  # e.g. an imSitu verb, or an event id
        "score": pl.Float64,  # the model's number for the label (a probability for classifiers); people's are people_*
    },
    produced_by="the model's export (README, 'Evaluate your model'), or rules run_predictions / zero_shot_predictions "
    "(workflow/rules/evaluation.smk)",
    optional=("video_id", "frame_index", "image"),
)

# One model's accuracy per certainty bin; also the long CSV of Tables 2 and 8 (table2_verbs.csv, table8_alt_bins.csv).
MODEL_ACCURACY = Schema(
    "model_accuracy",
    {
        "model": pl.Utf8,
        "top": pl.Int64,  # 1 or k (evaluation.top_k)
        "binning": pl.Utf8,  # mean (bin of the mean judgment) | alt (every judgment binned on its own, D.3)
        "bin": pl.Utf8,  # 0-20 | 20-40 | 40-60 | 60-80 | 80-100 | avg
        "accuracy": pl.Float64,  # null for an empty bin
        "n": pl.Int64,  # data points: images (mean) or (image, judgment) pairs (alt)
        "lo": pl.Float64,  # config `intervals`: image-bootstrap interval of the accuracy (null: none computed)
        "hi": pl.Float64,
    },
    produced_by="rule model_accuracy (workflow/rules/evaluation.smk)",
    optional=("lo", "hi"),
)

# Every training run measured against the human judgments the same way (SQUID-E §5.1, §5.3; D.3, D.4): per run,
# binning and certainty bin, accuracy against the ground-truth label and the model's probability of the judged event
# against the mean judgment (MSE, Bernoulli KL). Reliability diagrams plot mean_prob against mean_human.
RUN_EVALUATION = Schema(
    "run_evaluation",
    {
        "experiment": pl.Utf8,  # classification (Table 1) | calibration (Tables 3, 9)
        "train_set": pl.Utf8,  # SD | SE
        "method": pl.Utf8,  # Table 1 method (augmentation) or Table 3 calibration method
        "seed": pl.Int64,
        "binning": pl.Utf8,  # mean | alt
        "bin": pl.Utf8,  # 0-20 ... 80-100 | avg
        "n": pl.Int64,  # images (mean) or (image, judgment) pairs (alt)
        "accuracy": pl.Float64,  # top-1 against the ground-truth label
        "mean_human": pl.Float64,  # mean of the images' mean judgments / 100
        "mean_prob": pl.Float64,  # mean model probability of the judged event
        "mse": pl.Float64,  # mean of (probability - mean judgment / 100)^2
        "kl": pl.Float64,  # mean KL(Bernoulli(mean judgment / 100) || Bernoulli(probability)), clipped to [eps, 1 - eps]
    },
    produced_by="rule evaluate_runs (workflow/rules/evaluation.smk)",
)

# Every Table 2 model's points on the judged images, and the people's ratings of them: computed once (rule
# per_image_points) and read by the soft-label table and its two figures (squidflow.evaluation.points). `role`:
# `model` — one row per judged image the model scored (its `prob`, `confidence`, `correct`, `target` and the image's
# `ratings`); `people` — one row per judged image (`ratings` only), the leave-one-rater-out row's data; `left_out` —
# one row per model whose scores are not probabilities (image and point columns null); `no_images` — one row per
# model with probabilities but no judged image (image and point columns null). Models keep the table's order.
PER_IMAGE_POINTS = Schema(
    "per_image_points",
    {
        "role": pl.Utf8,  # model | people | left_out | no_images
        "model": pl.Utf8,  # the model's name (evaluation.models, ...); null for the people
        "video_id": pl.Utf8,
        "frame_index": pl.Int64,
        "event": pl.Utf8,  # the judged event (evaluation.label_map)
        "prob": pl.Float64,  # the model's P(judged event): the sum of the scores of the event's labels, in [0, 1]
        "confidence": pl.Float64,  # its rank-1 score, in [0, 1]
        "correct": pl.Float64,  # 1 when its rank-1 label is one of the event's labels, else 0
        "target": pl.Float64,  # 1 when the judged event is the image's own (binary ECE)
        "ratings": pl.List(pl.Float64),  # the image's first-round ratings 0..100, excluded annotators left out
    },
    produced_by="rule per_image_points (workflow/rules/evaluation.smk)",
)

# --- litmus test: GuessWhat?! first turns, soft labels, guessers (litmus test, Lucassen et al. 2022, §3, §4.2) -------
# One row per game of the GuessWhat?! JSON Lines files, with its first question-answer turn (answer yes | no | n/a,
# null when the game has no turn) and its candidate objects (MS-COCO boxes: left, top, width, height in pixels).
LITMUS_OBJECT = pl.Struct({"object_id": pl.Int64, "category": pl.Utf8, "category_id": pl.Int64, "bbox": BBOX})

LITMUS_GAMES = Schema(
    "litmus_games",
    {
        "game_id": pl.Int64,
        "split": pl.Utf8,  # train | valid | test
        "source": pl.Utf8,  # the games file (as configured) and line, for errors downstream
        "line": pl.Int64,
        "image_id": pl.Int64,
        "image_width": pl.Float64,
        "image_height": pl.Float64,
        "status": pl.Utf8,  # success | failure | incomplete
        "target_object_id": pl.Int64,
        "n_turns": pl.Int64,
        "qa_id": pl.Int64,  # the first turn's id (human annotations refer to it)
        "question": pl.Utf8,
        "answer": pl.Utf8,  # yes | no | n/a
        "objects": pl.List(LITMUS_OBJECT),
    },
    produced_by="rule litmus_games (workflow/rules/litmus.smk)",
)

# One row per (game, candidate object) of every first turn answered yes or no: the question type, each spatial rule's
# reference-set membership after the answer (R1-R3; null unless spatial), membership for the metrics (category set,
# or any rule's set; null for "other") and the soft label (null for "other" and for QA pairs no rule can ground).
LITMUS_SOFT_LABELS = Schema(
    "litmus_soft_labels",
    {
        "game_id": pl.Int64,
        "split": pl.Utf8,
        "object_id": pl.Int64,
        "category": pl.Utf8,
        "is_target": pl.Boolean,
        "question_type": pl.Utf8,  # category | spatial | other
        "question_form": pl.Utf8,  # the category word (person, animal) or spatial form (left, left_half, top_right)
        "answer": pl.Utf8,  # yes | no
        "r1": pl.Int8,
        "r2": pl.Int8,
        "r3": pl.Int8,
        "in_reference_set": pl.Boolean,
        "soft_label": pl.Float64,
    },
    produced_by="rule litmus_soft_labels (workflow/rules/litmus.smk)",
)

# A guesser's probability for every candidate object of a first turn: trained here (model STL-CE / MTL-KL, one file
# per seed) or read from a user's file (seed null).
LITMUS_PROBABILITIES = Schema(
    "litmus_probabilities",
    {"model": pl.Utf8, "seed": pl.Int64, "game_id": pl.Int64, "object_id": pl.Int64, "probability": pl.Float64},
    produced_by="rules litmus_train_guesser / litmus_model_probabilities (workflow/rules/litmus.smk)",
)

# The litmus metrics (§4.2), long: per model, seed, question type and answer (yes | no | all); `tau` is set for the
# well-grounded shares; `n` counts the QA pairs the value is computed on.
LITMUS_METRICS = Schema(
    "litmus_metrics",
    {
        "model": pl.Utf8,
        "seed": pl.Int64,
        "question_type": pl.Utf8,
        "answer": pl.Utf8,
        "metric": pl.Utf8,  # accuracy | pearson_r | cs_prob_mean | cs_prob_std | wg_rs | wg_cs
        "tau": pl.Float64,
        "value": pl.Float64,
        "n": pl.Int64,
    },
    produced_by="rule litmus_metrics (workflow/rules/litmus.smk)",
)

# Per model, group and metric: the mean over the model's seeds (`value`, as Tables 2 and 3 show it) and its bootstrap
# interval over the evaluated QA pairs (squidflow.litmus.metrics.metric_intervals; config `intervals`).
LITMUS_METRIC_INTERVALS = Schema(
    "litmus_metric_intervals",
    {
        "model": pl.Utf8,
        "question_type": pl.Utf8,
        "answer": pl.Utf8,
        "metric": pl.Utf8,
        "tau": pl.Float64,
        "value": pl.Float64,
        "lo": pl.Float64,
        "hi": pl.Float64,
    },
    produced_by="rule litmus_metrics (workflow/rules/litmus.smk)",
)

# --- the published dataset (publish stage: results/publish/<name>/data/<config>/) -----------------------------------
# The columns of each config a user loads with `datasets.load_dataset(folder, config)`; squidflow.publish.shards turns
# them into the `datasets` features (the `images` config adds `image`, the JPEG bytes, when publish.images is embed).
# Annotators are pseudonyms (Ann<k>), never a platform worker id.
PUBLISH_IMAGES = Schema(
    "publish_images",
    {
        "image_id": pl.Utf8,  # f"{video_id}_{frame_index}"
        "video_id": pl.Utf8,
        "frame_index": pl.Int64,  # decode order: what squidflow's exact extraction rebuilds the frame from
        "timestamp_s": pl.Float64,  # the frame's presentation time (null where the source gives none)
        "event": pl.Utf8,
        "split": pl.Utf8,  # train | validation | test
        "cluster": pl.Int64,  # the frame's k-means cluster within its video (null for the release)
        "source": pl.Utf8,  # the video's URL or local path as published
        "license": pl.Utf8,  # the video's licence as its source states it ("unknown" when it states none)
        # provenance (issue 48): the video's channel or uploader, its upload date (YYYYMMDD, as the site gives it) and
        # when squidflow retrieved it (ISO 8601 UTC; null for files that were already on disk)
        "uploader": pl.Utf8,
        "upload_date": pl.Utf8,
        "retrieved_at": pl.Utf8,
        # face regions blurred in the published JPEG (publish.blur_faces; null: not blurred, or no pixels published)
        "faces_blurred": pl.Int64,
    },
    produced_by="rule publish_dataset (workflow/rules/publish.smk)",
)

PUBLISH_JUDGMENTS = Schema(
    "publish_judgments",
    {
        "image_id": pl.Utf8,
        "video_id": pl.Utf8,
        "frame_index": pl.Int64,
        "prompt": pl.Utf8,  # the event wording the annotator saw
        "variant": pl.Utf8,  # A | B
        "round": pl.Int64,  # 1 = the task, 2 = its repeat
        "annotator": pl.Utf8,  # pseudonym, the same across variants and tasks
        "hit": pl.Utf8,  # the task page (HIT) the rating was given on
        "position": pl.Int64,  # the annotator's assignment within the HIT (release: k of huj_k)
        "rating": pl.Int64,  # 0..100
        "excluded": pl.Boolean,  # the rater was left out of the soft labels and Table 7 (judgments.quality.exclude)
        "excluded_because": pl.Utf8,  # why (the rubric's flags, the triage's reasons); null when not excluded
        "source": pl.Utf8,  # where the rating came from: simulated | mturk | label_studio | squid-e-release
        "wave": pl.Utf8,  # the annotation wave: first, round2 (the next round), ...
    },
    produced_by="rule publish_dataset (workflow/rules/publish.smk)",
)

PUBLISH_SOFT_LABELS = Schema(
    "publish_soft_labels",
    {
        "image_id": pl.Utf8,
        "video_id": pl.Utf8,
        "frame_index": pl.Int64,
        "prompt": pl.Utf8,
        "variant": pl.Utf8,
        "mean": pl.Float64,
        "std": pl.Float64,
        "n": pl.Int64,
        "certainty_bin": pl.Utf8,
        "ratings": pl.List(pl.Int64),  # the first-round ratings the mean is of (excluded annotators left out)
        "mean_lo": pl.Float64,  # interval of the mean over the image's raters (config `intervals`)
        "mean_hi": pl.Float64,
    },
    produced_by="rule publish_dataset (workflow/rules/publish.smk)",
)

PUBLISH_COMPARISON_SETS = Schema(
    "publish_comparison_sets",
    dict(COMPARISON_SETS.columns),  # as the comparison stage ranks them
    produced_by="rule publish_dataset (workflow/rules/publish.smk)",
)

PUBLISH_KEYWORDS = Schema(
    "publish_keywords",
    {
        "image_id": pl.Utf8,
        "video_id": pl.Utf8,
        "frame_index": pl.Int64,
        "annotator": pl.Utf8,
        "position": pl.Int64,
        "keyword": pl.Utf8,
        "normalised": pl.Utf8,
        "round": pl.Int64,
    },
    produced_by="rule publish_dataset (workflow/rules/publish.smk)",
)

# Every artifact by name (io's errors and the docs look schemas up here).
ALL: dict[str, Schema] = {
    s.name: s
    for s in (
        TRUTH,
        DEMO_CATALOG,
        VIDEOS,
        VIDEO_CANDIDATES,
        VIDEO_STATUS,
        URL_LIST,
        EXTRACTED_FRAMES,
        EXTRACTION_STATUS,
        FEATURES,
        FRAMES,
        JUDGMENTS,
        ANNOTATOR_REPORT,
        IMAGE_SCORES,
        RATER_TRIAGE,
        IMAGE_TRIAGE,
        PLANTED_FAULTS,
        KEYWORD_JUDGMENTS,
        SUBTITLES,
        COOCCURRING,
        TEXT_KEYWORDS,
        COMPARISON_CORPUS,
        COMPARISON_EMBEDDINGS,
        COMPARISON_SBERT,
        COMPARISON_POOL,
        COMPARISON_SETS,
        COMPARISON_PROPOSALS,
        RUN_PREDICTIONS,
        TRAINING_IMAGES,
        TRAINING_FRAMES,
        TRAINING_SETS,
        AUTHORS_SETS,
        RESULT_TABLE,
        PREDICTIONS,
        MODEL_ACCURACY,
        RUN_EVALUATION,
        PER_IMAGE_POINTS,
        LITMUS_GAMES,
        LITMUS_SOFT_LABELS,
        LITMUS_PROBABILITIES,
        LITMUS_METRICS,
        LITMUS_METRIC_INTERVALS,
        PUBLISH_IMAGES,
        PUBLISH_JUDGMENTS,
        PUBLISH_SOFT_LABELS,
        PUBLISH_COMPARISON_SETS,
        PUBLISH_KEYWORDS,
    )
}


def empty(schema: Schema) -> pl.DataFrame:
    """A zero-row frame with the schema's columns, for stages that legitimately have nothing (all videos failed)."""
    return pl.DataFrame(
        schema={c: (pl.Array(pl.Float32, 1) if t == ANY_WIDTH_F32 else t) for c, t in schema.columns.items()}
    )
