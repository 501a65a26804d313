# Stage: the synthetic demo video corpus : offline event videos whose every frame's content is
# known (results/videos/demo/truth.parquet), with synthetic metadata (catalog.parquet) for the acquisition stage.
from squidflow.demo import videos as squidflow_demo

# Every demo video id, from the `demo:` config alone, so the gather step can expand() them before anything runs.
DEMO_VIDEO_IDS = squidflow_demo.video_ids(squidflow_demo.DemoConfig.from_config(config["demo"]))


rule make_demo_videos:
    output:
        video=DEMO_VIDEO,
        truth=DEMO_VIDEO_TRUTH,
    log:
        "logs/make_demo_videos/{video_id}.log",
    benchmark:
        "results/benchmarks/make_demo_videos/{video_id}.tsv"
    conda:
        "../../envs/video.yaml"
    threads: 1
    params:
        demo=config["demo"],
    script:
        "../../scripts/make_demo_videos.py"


rule demo_corpus:
    input:
        videos=expand(DEMO_VIDEO, video_id=DEMO_VIDEO_IDS),
        truth=expand(DEMO_VIDEO_TRUTH, video_id=DEMO_VIDEO_IDS),
    output:
        truth=DEMO_TRUTH_TABLE,
        catalog=DEMO_CATALOG_TABLE,
    log:
        "logs/demo_corpus/demo_corpus.log",
    conda:
        "../../envs/video.yaml"
    params:
        demo=config["demo"],
    script:
        "../../scripts/demo_corpus.py"


# SYNTHETIC subtitles beside each demo video, named as yt-dlp names English subtitles, so that the text stage reads
# the demo's subtitles exactly as it reads downloaded ones (squidflow.demo.subtitles).
rule make_demo_subtitles:
    input:
        truth=DEMO_TRUTH_TABLE,
    output:
        vtt=expand(DEMO_SUBTITLES, video_id=DEMO_VIDEO_IDS),
    log:
        "logs/make_demo_subtitles/make_demo_subtitles.log",
    conda:
        "../../envs/video.yaml"
    params:
        seed=config["demo"]["seed"],
    script:
        "../../scripts/make_demo_subtitles.py"
