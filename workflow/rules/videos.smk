# Stage: videos. Every configured source (demo, local, urls, youtube, squid-e-release) -> the video manifest
# results/videos/videos.parquet (one row per video, status ok | unavailable | failed | corrupt, and for each video
# that is not ok a `reason` from the closed set of squidflow.videos.failures) and results/videos/download_report.md.
# Library: squidflow.videos.{sources, youtube, download, failures, brake, shards, probe, manifest}.
#
# Shape: checkpoint video_candidates lists every source's videos (the network is touched here and in the download
# jobs only, never while the DAG is built). The videos to download are split into `download.shards` shards by a
# stable hash of their id; one acquire_videos job per shard downloads its videos with `download.workers` workers and
# writes the shard's status table results/videos/status/shard{shard}of{shards}.g{generation}.parquet and the folder
# results/videos/downloads/shard{shard}of{shards}.g{generation}/ with the shard's `ok` videos ({video_id}.mp4,
# subtitles beside them as {video_id}.<lang>.vtt, and the marker file .squidflow-videos, so it is never empty): the
# table's `path` names them there, and the frames stage and the subtitles reader declare these folders as inputs.
# Files already on disk (demo, local, UCF-Crime) are only probed, by rule check_local_videos, which knows each file
# by its size and modification time. A failed video is a row with a status and a reason, so the workflow completes.
#
# Kills and reruns: each finished video is appended at once to results/videos/journal/ (one JSON line), so a shard
# job killed mid-shard loses no finished video; its rerun takes every journalled video as it is (no request) and
# downloads the rest. The videos download to working copies that outlive the job (results/videos/<type>/
# {video_id}.mp4, as the candidates name them, beside the journal; see acquire_videos' params), because Snakemake
# deletes a declared folder before it runs the job again; the folder gets hard links to them (no second copy). The
# manifest asks for each shard's newest status table on disk (the candidates are an ancient() input, so listing the
# sources again redoes no download): a rerun with nothing to do downloads nothing.
# `--config retry_failed=true` asks, for each shard table that has videos not `ok` and is older than this
# invocation, for the next generation `.g<N+1>`, whose job tries exactly those videos again, once per invocation.
#
# How to download (pace, workers, brake, retries, cookies, subtitles) reaches the jobs through
# results/videos/download_settings.json, an ancient() input written by rule download_settings from its params: a new
# pace or worker count applies to the next download without redoing a finished shard, the manifest, or anything
# after it. The brake's shared state (pauses, refusals in a row, stops, pacing slots) lives in
# results/videos/brake/, one flock-guarded file per site, seen by every concurrent shard job; a site the brake
# stopped is named in one line at the end of the run (onsuccess/onerror) and at the top of the report.
#
# Downloads run on the machine that runs Snakemake (localrules): compute nodes of many clusters have no internet,
# and one place of origin keeps the pace and the brake meaningful.


include: "inputs/videos.smk"


wildcard_constraints:
    generation=r"\d+",
    shard=r"\d+",
    shards=r"\d+",


localrules:
    video_candidates,
    download_settings,
    acquire_videos,
    check_local_videos,
    video_manifest,
    dropped_videos,
    acquisition_figure,


checkpoint video_candidates:
    input:
        unpack(get_video_candidate_inputs),
    output:
        candidates=VIDEO_CANDIDATES,
        notes=CANDIDATES_NOTES,
        takedown_log=TAKEDOWN_LOG,
    log:
        "logs/video_candidates/video_candidates.log",
    conda:
        "../../envs/video.yaml"
    params:
        # listed so that editing the sources (or the release location) lists them again
        sources=config["sources"],
        release=config["squid_e_release"],
        search_network=get_video_search_network_params(),
        cache_dir=DOWNLOADS_DIR,
        # the files of local folders (and the UCF-Crime folder): one added or removed lists the sources again
        local_files=get_local_video_files(),
        # the takedown list (an input too): its videos are left out, their downloads and journal lines deleted
        takedown=config["takedown"],
        journal_dirs=[JOURNAL_DIR, JOURNAL_LOCAL_DIR],
        status_dir=STATUS_DIR,
        downloads_dir=os.path.dirname(VIDEO_SHARD_DIR),  # a removed video's links in every shard folder
    script:
        "../../scripts/video_candidates.py"


rule download_settings:
    output:
        DOWNLOAD_SETTINGS,
    log:
        "logs/download_settings/download_settings.log",
    conda:
        "../../envs/video.yaml"
    params:
        download=get_download_settings_params(),
    script:
        "../../scripts/download_settings.py"


rule acquire_videos:
    input:
        candidates=ancient(VIDEO_CANDIDATES),
        settings=ancient(DOWNLOAD_SETTINGS),
    output:
        status="results/videos/status/shard{shard}of{shards}.g{generation}.parquet",
        # the journal's records of this shard's videos (what was fetched, what failed and why), declared so that
        # they reach object storage; the working journal (journal_dir) stays beside the job (see below)
        journal="results/videos/status/shard{shard}of{shards}.g{generation}.journal.jsonl",
        # the shard's ok videos and their subtitles (hard links to the working copies), never empty (a marker file)
        videos=directory(VIDEO_SHARD_DIR),
    log:
        "logs/acquire_videos/shard{shard}of{shards}.g{generation}.log",
    benchmark:
        "results/benchmarks/acquire_videos/shard{shard}of{shards}.g{generation}.tsv"
    conda:
        "../../envs/video.yaml"
    resources:
        downloads=1,
    params:
        # Not declared, on purpose: the working journal and the videos' working copies (the candidates' `path`)
        # must outlive a killed job and its rerun (Snakemake deletes a declared output before it runs a job again),
        # and the brake's files are shared by the concurrent shard jobs. All are on the machine that runs Snakemake
        # (localrules), under the job's results folder (squidflow.contracts.paths.job_file: results/ here,
        # Snakemake's local copies under .snakemake/storage/ on object storage, so a run's working folder keeps
        # nothing else there).
        journal_dir=JOURNAL_DIR,
        brake_dir=BRAKE_DIR,
    script:
        "../../scripts/acquire_videos.py"


# Files already on disk (demo, local, UCF-Crime) are probed here, each known by its size and modification time: the
# params carry every local file's `<path> <size>:<mtime_ns>`, so a file replaced in place reruns this job, which
# probes only the files whose fingerprint changed (results/videos/journal_local/ keeps each probe, one JSON line, so a
# kill loses none). retry_failed asks for the next generation `.g<N+1>` when the newest table has videos not `ok`.
rule check_local_videos:
    input:
        unpack(get_local_video_inputs),
    output:
        status="results/videos/status/local.g{generation}.parquet",
        journal="results/videos/status/local.g{generation}.journal.jsonl",  # as acquire_videos' journal
    log:
        "logs/check_local_videos/local.g{generation}.log",
    conda:
        "../../envs/video.yaml"
    threads: 2
    params:
        decode_frames=config["download"]["decode_frames"],
        journal_dir=JOURNAL_LOCAL_DIR,  # not declared, as acquire_videos' journal_dir
        fingerprints=get_local_video_fingerprints(),
    script:
        "../../scripts/check_local_videos.py"


rule video_manifest:
    input:
        candidates=VIDEO_CANDIDATES,
        notes=CANDIDATES_NOTES,
        statuses=get_video_status_files,
    output:
        manifest=VIDEO_MANIFEST,
        report=report(
            DOWNLOAD_REPORT,
            caption="../report/videos/download_report.rst",
            category="Acquisition",
            subcategory="Videos",
            labels={"result": "acquisition report", "format": "markdown"},
        ),
    log:
        "logs/video_manifest/video_manifest.log",
    conda:
        "../../envs/video.yaml"
    params:
        brake_dir=BRAKE_DIR,
    script:
        "../../scripts/video_manifest.py"


# Videos per event × status and the failure reasons, for the report (squidflow.videos.figures).
rule acquisition_figure:
    input:
        videos=get_acquisition_figure_videos,
    output:
        report(
            VIDEOS_STATUS_FIGURE,
            caption="../report/videos/acquisition_figure.rst",
            category="Acquisition",
            subcategory="Videos",
            labels={"result": "videos per event and status, failure reasons"},
        ),
    log:
        "logs/acquisition_figure/acquisition_figure.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        note=get_report_note("videos"),
    script:
        "../../scripts/acquisition_figure.py"


# At the end of the run (after frame extraction when the frames stage runs): every dropped video, at which stage, why,
# and where to look, and the files the sources skipped; the same counts are printed as one line (onsuccess).
rule dropped_videos:
    input:
        videos=get_acquisition_figure_videos,
        notes=CANDIDATES_NOTES,
    output:
        report(
            DROPPED_REPORT,
            caption="../report/videos/dropped_videos.rst",
            category="Acquisition",
            subcategory="Videos",
            labels={"result": "dropped videos", "format": "markdown"},
        ),
    log:
        "logs/dropped_videos/dropped_videos.log",
    conda:
        "../../envs/video.yaml"
    params:
        frame_shards=config["frames"]["shards"],
        manifest_path=get_acquisition_figure_videos,  # named in the report (the input, as a label)
    script:
        "../../scripts/dropped_videos.py"


onsuccess:
    print_dropped_videos()
    print_brake_notes()


onerror:
    print_brake_notes()
