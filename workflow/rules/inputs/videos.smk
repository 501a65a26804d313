# The input functions, params and paths of workflow/rules/videos.smk (a rules file may not hold functions,
# says `snakemake --lint`); included at the top of videos.smk.
from squidflow.videos import manifest as squidflow_manifest
import polars as pl

BRAKE_DIR = "results/videos/brake"
VIDEOS_STATUS_FIGURE = "results/figures/videos_status.png"

VIDEO_CANDIDATES = "results/videos/candidates.parquet"
TAKEDOWN_LOG = "results/videos/takedown_log.csv"
JOURNAL_DIR = "results/videos/journal"  # each finished download, one JSON line (squidflow.videos.download_shards)
JOURNAL_LOCAL_DIR = "results/videos/journal_local"  # each probe of a file on disk
CANDIDATES_NOTES = "results/videos/candidates_notes.txt"


def get_video_outputs():
    if not stage_enabled("videos"):
        return []
    return [VIDEO_MANIFEST, DOWNLOAD_REPORT, DROPPED_REPORT]


def get_video_candidate_inputs(wildcards):
    """Files the listing reads: the demo catalog (ties make_demo_videos into the DAG) and local url lists."""
    inputs = {}
    types = [s["type"] for s in config["sources"]]
    if "demo" in types:
        inputs["demo_catalog"] = DEMO_CATALOG_TABLE
        # video_manifest records the subtitles beside each demo video: they must exist before the listing, not
        # just happen to (on a cluster make_demo_subtitles may still be queued when the manifest is written)
        inputs["demo_subtitles"] = rules.make_demo_subtitles.output.vtt
    inputs["url_lists"] = [s["path"] for s in config["sources"] if s["type"] == "urls"]
    if config["takedown"]:  # a video added to the list lists the sources again, and so reruns all after it
        inputs["takedown"] = config["takedown"]
    return inputs


def get_local_video_inputs(wildcards):
    """The candidates, and the files already on disk that the workflow makes itself (the demo's videos and
    subtitles): declared, so that a job on object storage gets its local copies to probe."""
    inputs = {"candidates": VIDEO_CANDIDATES}
    if "demo" in [s["type"] for s in config["sources"]]:
        inputs["demo_videos"] = expand(DEMO_VIDEO, video_id=DEMO_VIDEO_IDS)
        inputs["demo_subtitles"] = rules.make_demo_subtitles.output.vtt
    return inputs


def retry_failed_requested():
    return config["retry_failed"]


STATUS_DIR = "results/videos/status"
DOWNLOAD_SETTINGS = "results/videos/download_settings.json"
RUN_STARTED = squidflow_manifest.run_started()  # a table written after this is this invocation's own retry


def get_video_status_files(wildcards):
    """One status table per download shard, when the checkpoint has listed videos to download (none: no job), and
    the local check's table when it has listed files already on disk.

    The newest generation on disk is taken as is; with retry_failed a table with videos that are not ok asks for
    the next generation, whose job tries those videos again (older tables stay as the history).
    """
    candidates = checkpoints.video_candidates.get().output.candidates
    todo = pl.col("status").fill_null("pending") == "pending"  # the listing settled the others (a licence)
    # through the output's open(): on object storage Snakemake retrieves the checkpoint's table first
    with candidates.open("rb") as fh:
        kinds = pl.read_parquet(fh, columns=["download", "status"]).select(
            (pl.col("download") & todo).any().alias("download"),
            (~pl.col("download") & todo).any().alias("on_disk"),
        )
    paths = []
    if kinds["download"].item():
        paths += squidflow_manifest.shard_status_paths(
            STATUS_DIR, config["download"]["shards"], retry_failed=retry_failed_requested(), started=RUN_STARTED
        )
    if kinds["on_disk"].item():
        paths.append(
            squidflow_manifest.local_status_path(STATUS_DIR, retry_failed=retry_failed_requested(), started=RUN_STARTED)
        )
    return paths


VIDEO_SHARD_DIR = "results/videos/downloads/shard{shard}of{shards}.g{generation}"  # acquire_videos' videos


def get_video_shard_dirs(wildcards, shards=None):
    """The folders of the download shards whose status tables the manifest takes (each shard's newest generation):
    the downloaded videos and subtitles the manifest's `path` names, declared by the jobs that open them (frame
    extraction, the subtitles reader), so that on object storage they get their local copies. `shards`: only these
    download shards' folders (a frame-extraction job's, get_extract_frames_downloads)."""
    folders = []
    for path in get_video_status_files(wildcards):
        m = squidflow_manifest.SHARD_TABLE.fullmatch(os.path.basename(path))
        if m and (shards is None or int(m[1]) in shards):
            folders.append(VIDEO_SHARD_DIR.format(shard=m[1], shards=m[2], generation=m[3]))
    return folders


def get_local_video_files():
    """Every video file of the local sources (and the UCF-Crime folder), sorted: video_candidates lists again when
    one is added or removed."""
    from squidflow.videos.sources import local_files

    return local_files(config["sources"], config["squid_e_release"])


def get_local_video_fingerprints():
    """`<path> <size>:<mtime_ns>` of every local video file: check_local_videos probes again when one changes."""
    from squidflow.videos.sources import local_fingerprints

    return local_fingerprints(config["sources"], config["squid_e_release"])


# The `download` keys the search of a youtube source uses (a new pace or worker count must not list it again).
SEARCH_NETWORK_KEYS = ["cookies", "proxy", "sleep_s", "socket_timeout_s"]


def get_video_search_network_params():
    return redacted_proxy(config_keys(config["download"], SEARCH_NETWORK_KEYS))


def get_download_settings_params():
    """Every `download` key the shard jobs read; `shards` is not one (it names the jobs, see videos.smk)."""
    return redacted_proxy({k: v for k, v in config["download"].items() if k != "shards"})


def redacted_proxy(keys):
    """`download` keys with a proxy's password as `***`: Snakemake records a job's params in .snakemake/metadata and
    may print them in its log (a params change), so the password goes to the jobs in their environment only
    (squidflow.fetch.PROXY_ENV; DownloadOptions.from_config puts it back), never into a file (issue 31)."""
    from squidflow.fetch import PROXY_ENV, redact_url_credentials

    if not keys.get("proxy"):
        return keys
    os.environ[PROXY_ENV] = str(keys["proxy"])
    return {**keys, "proxy": redact_url_credentials(str(keys["proxy"]))}


def print_brake_notes():
    """At the end of a run: one line per site the brake stopped downloading from in this run, and how to resume."""
    from squidflow.videos.brake import run_notes

    for note in run_notes(BRAKE_DIR, str(RUN_STARTED)):
        print(f"squidflow brake: {note}", file=sys.stderr)


def print_dropped_videos():
    """At the end of a run: one line, how many videos were dropped at which stage and why, and the report to read."""
    videos = get_acquisition_figure_videos(None)
    if not stage_enabled("videos") or not os.path.exists(videos) or not os.path.exists(CANDIDATES_NOTES):
        return
    with open(CANDIDATES_NOTES, encoding="utf-8") as fh:
        lines = [line.rstrip("\n") for line in fh if line.strip()]
    print(squidflow_manifest.dropped_line(pl.read_parquet(videos), lines), file=sys.stderr)


def get_acquisition_figure_videos(wildcards):
    """The manifest with frame extraction's verdict when the frames stage runs (undecodable videos are corrupt)."""
    return VIDEOS_CHECKED if stage_enabled("frames") else VIDEO_MANIFEST
