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
import polars as pl

from squidflow import manifest as squidflow_manifest


wildcard_constraints:
    generation=r"\d+",


localrules:
    video_candidates,
    acquire_video,
    video_manifest,


VIDEO_CANDIDATES = "results/videos/candidates.parquet"
VIDEO_MANIFEST = "results/videos/videos.parquet"


def get_video_outputs():
    if not stage_enabled("videos"):
        return []
    return [VIDEO_MANIFEST, "results/videos/download_report.md"]


def get_video_candidate_inputs(wildcards):
    """Files the listing reads: the demo catalog (ties make_demo_videos into the DAG) and local url lists."""
    inputs = {}
    types = [s["type"] for s in config["sources"]]
    if "demo" in types:
        inputs["demo_catalog"] = "results/videos/demo/catalog.parquet"
    inputs["url_lists"] = [s["path"] for s in config["sources"] if s["type"] == "urls"]
    return inputs


def retry_failed_requested():
    return config["retry_failed"]


STATUS_DIR = "results/videos/status"
RUN_STARTED = squidflow_manifest.run_started()  # a record written after this is this invocation's own retry


def get_video_status_files(wildcards):
    """One status record per candidate that needs a download (known once the checkpoint has listed them).

    The newest generation on disk is taken as is; with retry_failed a record that is not ok asks for the next
    generation, which a new acquire_video job writes (older generations stay as the history of attempts).
    """
    candidates = checkpoints.video_candidates.get().output.candidates
    ids = pl.read_parquet(candidates, columns=["video_id", "download"]).filter(pl.col("download"))["video_id"]
    return squidflow_manifest.status_record_paths(
        ids.to_list(), STATUS_DIR, retry_failed=retry_failed_requested(), started=RUN_STARTED
    )


def get_ok_video_ids(wildcards=None):
    """For later stages: the ids of `ok` videos (call from an input function; waits for the manifest)."""
    manifest = checkpoints.video_manifest.get().output.manifest
    return pl.read_parquet(manifest, columns=["video_id", "status"]).filter(pl.col("status") == "ok")["video_id"].to_list()


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
        cache_dir="results/downloads",
    log:
        "logs/video_candidates/video_candidates.log",
    conda:
        "../../envs/video.yaml"
    script:
        "../../scripts/videos_candidates.py"


rule acquire_video:
    input:
        candidates=ancient(VIDEO_CANDIDATES),
    output:
        "results/videos/status/{video_id}.g{generation}.parquet",
    resources:
        downloads=1,
    log:
        "logs/acquire_video/{video_id}.g{generation}.log",
    conda:
        "../../envs/video.yaml"
    script:
        "../../scripts/videos_acquire.py"


checkpoint video_manifest:
    input:
        candidates=VIDEO_CANDIDATES,
        notes="results/videos/candidates_notes.txt",
        statuses=get_video_status_files,
    output:
        manifest=VIDEO_MANIFEST,
        report="results/videos/download_report.md",
    threads: 2
    log:
        "logs/video_manifest/video_manifest.log",
    conda:
        "../../envs/video.yaml"
    script:
        "../../scripts/videos_manifest.py"
