# Stage: videos. Every configured source (demo, local, urls, youtube, squid-e-release) -> the video manifest
# results/videos/videos.parquet (one row per video, status ok | unavailable | failed | corrupt) and
# results/videos/download_report.md. Library: squidflow.{sources,youtube,download,probe,manifest,release}.
#
# Shape: checkpoint video_candidates lists every source's videos (the network is touched here and in the
# per-video jobs only, never while the DAG is built), then one acquire_video job per video to download writes its
# status record results/videos/status/{video_id}.g{generation}.parquet (the video itself lands in
# results/videos/<type>/{video_id}.mp4); files already on disk (demo, local, UCF-Crime) are only probed, inside
# video_manifest. A failed video still writes its status record, so the workflow completes.
#
# Reruns: the manifest asks for each video's newest status record on disk, which is up to date (the candidates are
# an ancient() input, so listing the sources again redoes no download), and a job that does run keeps an existing
# decodable file: a rerun downloads nothing already `ok`. `--config retry_failed=true` asks, for each record that
# is not `ok` and older than this invocation, for the next generation `.g<N+1>`, so exactly those videos are tried
# again, once per invocation; older generations stay as the history of attempts. (Params-based rerun triggers do
# not work here: Snakemake evaluates a job's params again after removing its old output.)
#
# Downloads run on the machine that runs Snakemake (localrules): compute nodes of many clusters have no internet,
# and one place of origin keeps request pacing (download.sleep_s) meaningful. Cap parallel downloads with
# `--resources downloads=N`.


wildcard_constraints:
    generation=r"\d+",


localrules:
    video_candidates,
    acquire_video,
    video_manifest,


checkpoint video_candidates:
    input:
        unpack(get_video_candidate_inputs),
    output:
        candidates=VIDEO_CANDIDATES,
        notes="results/videos/candidates_notes.txt",
    params:
        # listed so that editing the sources (or the release location) lists them again
        sources=config["sources"],
        release=config["squid_e_release"],
        download=config["download"],
        cache_dir="results/downloads",
    log:
        "logs/video_candidates/video_candidates.log",
    conda:
        "../../envs/video.yaml"
    script:
        "../../scripts/video_candidates.py"


rule acquire_video:
    input:
        candidates=ancient(VIDEO_CANDIDATES),
    output:
        "results/videos/status/{video_id}.g{generation}.parquet",
    params:
        download=config["download"],
    resources:
        downloads=1,
    log:
        "logs/acquire_video/{video_id}.g{generation}.log",
    conda:
        "../../envs/video.yaml"
    script:
        "../../scripts/acquire_video.py"


checkpoint video_manifest:
    input:
        candidates=VIDEO_CANDIDATES,
        notes="results/videos/candidates_notes.txt",
        statuses=get_video_status_files,
    output:
        manifest=VIDEO_MANIFEST,
        report="results/videos/download_report.md",
    params:
        download=config["download"],
    threads: 2
    log:
        "logs/video_manifest/video_manifest.log",
    conda:
        "../../envs/video.yaml"
    script:
        "../../scripts/video_manifest.py"
