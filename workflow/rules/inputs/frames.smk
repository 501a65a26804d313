# The input functions, params and paths of workflow/rules/frames.smk (a rules file may not hold functions,
# says `snakemake --lint`); included at the top of frames.smk.
from squidflow.frames.extract import FramesConfig
from squidflow.frames.selection import SelectionConfig
from squidflow.frames.splits import SplitsConfig

FEATURES_TABLE = "results/features/{backbone}.parquet"
FRAME_SHARD_DIR = "results/frames/shard{shard}"
FRAME_SHARD_TABLE = "results/frames/shard{shard}.parquet"
FRAME_SHARD_STATUS_TABLE = "results/frames/shard{shard}_status.parquet"
CONTACT_SHEETS_DIR = "results/figures/frames_contact_sheets"
FRAME_SPREAD_FIGURE = "results/figures/frames_spread.png"


def get_extract_frames_inputs(wildcards):
    """The manifest, and the shard's videos that the workflow makes itself (the demo's): declared, so that a job on
    object storage gets its local copies (squidflow.contracts.image_ids.shard_of picks the shard's). The downloaded
    videos are the rule's input `downloads` (get_extract_frames_downloads, apart: it waits for the checkpoint)."""
    from squidflow.contracts.image_ids import shard_of

    inputs = {"videos": VIDEO_MANIFEST}
    if "demo" in [s["type"] for s in config["sources"]]:
        shards = config["frames"]["shards"]
        mine = [v for v in DEMO_VIDEO_IDS if shard_of(v, shards) == int(wildcards.shard)]
        inputs["demo_videos"] = expand(DEMO_VIDEO, video_id=mine)
    return inputs


def get_extract_frames_downloads(wildcards):
    """The download shards' folders that can hold this frame shard's videos (squidflow.videos.manifest.shards_holding:
    both shardings hash the id the same way), not every folder: on object storage each declared folder is fetched
    whole. With `download.shards` a multiple of `frames.shards` each folder holds only this shard's videos."""
    mine = squidflow_manifest.shards_holding(
        int(wildcards.shard), config["frames"]["shards"], config["download"]["shards"]
    )
    return get_video_shard_dirs(wildcards, shards=set(mine))


def get_frame_shards():
    return list(range(config["frames"]["shards"]))


def get_backbone():
    return config["features"]["backbone"]


def get_featurize_params():
    """The `features` keys a featurize job reads: all but `threads`, which Snakemake gives it as cores."""
    return {k: v for k, v in config["features"].items() if k != "threads"}


def get_release_annotations():
    """The release's huj_annotations.csv (URL or local copy) whose videos form the test split in release mode."""
    return get_data_path(config["splits"].get("annotations") or config["squid_e_release"]["judgments_csv"])


def get_frame_outputs():
    if not stage_enabled("frames"):
        return []
    return [
        FRAMES_TABLE,
        FEATURES_TABLE.format(backbone=get_backbone()),
        VIDEOS_CHECKED,
    ]


def get_contact_sheet_inputs(wildcards):
    """The selected frames and, when the judgments stage runs, the image scores (the certainty under each frame)."""
    inputs = {"frames": FRAMES_TABLE, "dataset_images": DATASET_IMAGES}
    if stage_enabled("judgments"):
        inputs["scores"] = IMAGE_SCORES_TABLE
    return inputs
