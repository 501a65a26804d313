# The demo's room: every SIMULATED stand-in for the outside world, so that the whole workflow runs offline.
# - the synthetic video corpus: event videos whose every frame's content is known (results/videos/demo/truth.parquet),
#   with synthetic metadata (catalog.parquet) for the acquisition stage and subtitles for the text stage;
# - the SIMULATED annotators: the panel's MTurk batch results (rounds 1 and 2), its keywords (variant K) and its
#   Label Studio exports, read by the judgments stage as it reads real ones;
# - the synthetic GuessWhat?! games and human annotations of the litmus stage.
# Included after the stages whose paths it writes (their input files define them); library: squidflow.demo.
from squidflow.demo import videos as squidflow_demo

# Every demo video id, from the `demo:` config alone, so the gather step can expand() them before anything runs.
DEMO_CONFIG = squidflow_demo.DemoConfig.from_config(config["demo"])
DEMO_VIDEO_IDS = squidflow_demo.video_ids(DEMO_CONFIG)
# One event's video ids, the event a wildcard: {event}_00 .. (the ids of squidflow.demo.videos.video_ids).
DEMO_EVENT_VIDEO_IDS = [f"{{event}}_{i:02d}" for i in range(DEMO_CONFIG.videos_per_event)]


# One job per event renders its videos one after the other (each from its own seeded generators: the same bytes as
# a job per video), so the 24 videos of the small demo pay 4 Python start-ups, not 24. Asking for one video's file
# renders its event's.
rule make_demo_videos:
    output:
        video=expand(DEMO_VIDEO, video_id=DEMO_EVENT_VIDEO_IDS),
        truth=expand(DEMO_VIDEO_TRUTH, video_id=DEMO_EVENT_VIDEO_IDS),
    log:
        expand("logs/make_demo_videos/{video_id}.log", video_id=DEMO_EVENT_VIDEO_IDS),
    benchmark:
        "results/benchmarks/make_demo_videos/{event}.tsv"
    wildcard_constraints:
        event="|".join(DEMO_CONFIG.events),
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


# --- the SIMULATED annotators (judgments stage; squidflow.demo.panel, keyword_panel, label_studio) ----------------
rule simulate_panel:
    input:
        unpack(get_takedown_list),
        hits_A=HITS_A,
        hits_B=HITS_B,
        truth=SIMULATED_TRUTH,
    output:
        batch=SIMULATED_BATCH_RESULTS,
        repeat=SIMULATED_BATCH_REPEAT,
        planted=PLANTED_FAULTS,
    log:
        "logs/simulate_panel/simulate_panel.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        panel=SIMULATED_PANEL,
        assignments_per_hit=config["annotation"]["assignments_per_hit"],
    script:
        "../../scripts/simulate_panel.py"


# The demo with annotation.platform label_studio: the SIMULATED panel's batch results, as Label Studio would export
# them had its annotators answered there, so that ingestion reads the export format without a server.
rule simulate_label_studio:
    input:
        batch=rules.simulate_panel.output.batch,
        repeat=rules.simulate_panel.output.repeat,
    output:
        **SIMULATED_LABEL_STUDIO,
    log:
        "logs/simulate_label_studio/simulate_label_studio.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        images_per_hit=config["annotation"]["images_per_hit"],
    script:
        "../../scripts/simulate_label_studio.py"


# The demo's second round: the SIMULATED panel rates the round-2 HITs; the report shows the intervals before and after.
rule simulate_next_round:
    input:
        unpack(get_takedown_list),
        hits_A=f"{NEXT_ROUND_DIR}/hits_A.csv",
        hits_B=f"{NEXT_ROUND_DIR}/hits_B.csv",
        truth=SIMULATED_TRUTH,
    output:
        batch=SIMULATED_NEXT_ROUND,
    log:
        "logs/simulate_next_round/simulate_next_round.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        panel={**SIMULATED_PANEL, "repeat_hits": 0},
        assignments_per_hit=config["annotation"]["assignments_per_hit"],
    script:
        "../../scripts/simulate_next_round.py"


rule simulate_keywords:
    input:
        hits=KEYWORD_HITS,
        truth=SIMULATED_TRUTH,
    output:
        batch=SIMULATED_KEYWORDS,
    log:
        "logs/simulate_keywords/simulate_keywords.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        panel={**TEXT["gold"]["panel"], "keywords_per_image": TEXT["gold"]["keywords_per_image"]},
    script:
        "../../scripts/simulate_keywords.py"


# --- the synthetic GuessWhat?! games and their human annotations (litmus stage; squidflow.demo.litmus) ------------
rule litmus_demo_games:
    output:
        train="results/litmus/demo/guesswhat.train.jsonl.gz",
        test="results/litmus/demo/guesswhat.test.jsonl.gz",
    log:
        "logs/litmus_demo_games/litmus_demo_games.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        demo=config_keys(LITMUS["demo"], ["train_games", "test_games", "target_area_bias", "seed"]),
    script:
        "../../scripts/litmus_demo_games.py"


rule litmus_demo_annotations:
    input:
        LITMUS_GAMES_TABLE,
    output:
        "results/litmus/demo/human_annotations.csv",
    log:
        "logs/litmus_demo_annotations/litmus_demo_annotations.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        demo=config_keys(LITMUS["demo"], ["human_qa", "annotators", "noise", "seed"]),
        split=LITMUS["train_split"],
    script:
        "../../scripts/litmus_demo_annotations.py"
