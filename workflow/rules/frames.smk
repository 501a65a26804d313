# Stage: frames, features and selection (SQUID-E supplement A.1). Videos are sharded by a stable hash of their id into
# `frames.shards` groups (the ids are unknown when the DAG is built): one extraction and one featurization job per
# shard, so a GPU job sees large batches; selection gathers. A video ffmpeg cannot decode is recorded as `corrupt` in
# results/frames/shard{shard}_status.parquet, left out of selection, and marked in
# results/videos/videos_checked.parquet (the manifest with extraction's verdict).


include: "inputs/frames.smk"


rule extract_frames:
    input:
        unpack(get_extract_frames_inputs),
        # the download shards' folders that can hold this shard's videos (the manifest names them): those whose
        # number agrees with the shard's modulo the gcd of the two shard counts, not every folder
        downloads=get_extract_frames_downloads,
    output:
        frames=FRAME_SHARD_TABLE,
        status=FRAME_SHARD_STATUS_TABLE,
        images=directory(FRAME_SHARD_DIR),
    log:
        "logs/extract_frames/shard{shard}.log",
    benchmark:
        "results/benchmarks/extract_frames/shard{shard}.tsv"
    wildcard_constraints:
        shard=r"\d+",
    conda:
        "../../envs/video.yaml"
    threads: 2
    params:
        frames=config_fields(FramesConfig, config["frames"]),
        image_format=config["selection"]["image_format"],
        image_quality=config["selection"]["image_quality"],
    script:
        "../../scripts/extract_frames.py"


rule check_videos:
    input:
        videos=VIDEO_MANIFEST,
        status=expand(FRAME_SHARD_STATUS_TABLE, shard=get_frame_shards()),
    output:
        VIDEOS_CHECKED,
    log:
        "logs/check_videos/check_videos.log",
    conda:
        "../../envs/video.yaml"
    script:
        "../../scripts/check_videos.py"


rule featurize:
    input:
        frames=FRAME_SHARD_TABLE,
        images=FRAME_SHARD_DIR,
    output:
        "results/features/{backbone}/shard{shard}.parquet",
    log:
        "logs/featurize/{backbone}_shard{shard}.log",
    benchmark:
        "results/benchmarks/featurize/{backbone}_shard{shard}.tsv"
    wildcard_constraints:
        shard=r"\d+",
    conda:
        "../../envs/gpu.yaml"
    threads: config["features"]["threads"]
    resources:
        gpu=1,
    params:
        features=get_featurize_params(),
    script:
        "../../scripts/featurize.py"


rule gather_features:
    input:
        expand("results/features/{{backbone}}/shard{shard}.parquet", shard=get_frame_shards()),
    output:
        FEATURES_TABLE,
    log:
        "logs/gather_features/{backbone}.log",
    conda:
        "../../envs/gpu.yaml"
    script:
        "../../scripts/gather_features.py"


rule select_frames:
    input:
        features=FEATURES_TABLE.format(backbone=get_backbone()),
        frames=expand(FRAME_SHARD_TABLE, shard=get_frame_shards()),
        status=expand(FRAME_SHARD_STATUS_TABLE, shard=get_frame_shards()),
        videos=VIDEOS_CHECKED,
        # videos taken down on request keep their place in the split shuffle (no other video changes split)
        takedown_log=TAKEDOWN_LOG,
        # the extracted images the selected ones are linked (or copied) from
        images=expand(FRAME_SHARD_DIR, shard=get_frame_shards()),
    output:
        frames=FRAMES_TABLE,
        images=directory(DATASET_IMAGES),
    log:
        "logs/select_frames/select_frames.log",
    benchmark:
        "results/benchmarks/select_frames/select_frames.tsv"
    conda:
        "../../envs/gpu.yaml"
    params:
        selection=config_fields(SelectionConfig, config["selection"]),
        splits=config_fields(SplitsConfig, config["splits"]),
        annotations=get_release_annotations(),
    script:
        "../../scripts/select_frames.py"


# What was selected, for the report (squidflow.frames.figures): a contact sheet per event, and where in each video
# the selected frames fall.
rule contact_sheets:
    input:
        unpack(get_contact_sheet_inputs),
    output:
        report(
            directory(CONTACT_SHEETS_DIR),
            patterns=["{event}.png"],
            caption="../report/frames/contact_sheets.rst",
            category="Frames",
            subcategory="Contact sheets",
            labels={"event": "{event}", "result": "contact sheet"},
        ),
    log:
        "logs/contact_sheets/contact_sheets.log",
    benchmark:
        "results/benchmarks/contact_sheets/contact_sheets.tsv"
    conda:
        "../../envs/reporting.yaml"
    params:
        max_videos=REPORT["contact_sheet_videos"],
        events=config["events"],
        note=get_report_note("videos"),
    script:
        "../../scripts/contact_sheets.py"


rule frame_spread_figure:
    input:
        frames=FRAMES_TABLE,
        videos=VIDEOS_CHECKED,
    output:
        report(
            FRAME_SPREAD_FIGURE,
            caption="../report/frames/frame_spread.rst",
            category="Frames",
            subcategory="Frame selection",
            labels={"result": "spread of the selected frames over each video"},
        ),
    log:
        "logs/frame_spread_figure/frame_spread_figure.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        max_videos=REPORT["contact_sheet_videos"],
        note=get_report_note("videos"),
    script:
        "../../scripts/frame_spread_figure.py"
