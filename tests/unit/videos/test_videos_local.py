"""Real folders, real reruns (issue 25): files on disk known by their content, reasons at every stage, skipped files
named, manifest facts as displayed and decoded. Every file is made here by ffmpeg."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import polars as pl
import pytest
import yaml
from helpers import runs
from helpers.faults import tried
from helpers.runs import in_folder
from test_videos import make_mp4

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet
from squidflow.frames.extract import FramesConfig, checked_manifest, extract_videos
from squidflow.videos.download import DownloadOptions
from squidflow.videos.manifest import build_manifest, check_local, download_report, dropped_line, dropped_report
from squidflow.videos.probe import probe
from squidflow.videos.sources import combine, local_source

ROOT = Path(__file__).resolve().parents[3]
OPTS = DownloadOptions()


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True)


def audio_only(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-c:a", "aac", str(path))
    return path


def run_local(work: Path, *extra: str, popen: bool = False, slow_probes: Path | None = None):
    """The videos stage on the folder's local source (config.yaml in `work`), waited for or started (`popen`)."""
    env = {}
    if slow_probes is not None:  # every Python the run starts (its jobs included) loads the folder's sitecustomize
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(slow_probes), os.environ.get("PYTHONPATH")]))
    args = in_folder(work, work / "config.yaml", cores_=2) + list(extra)
    if popen:
        return runs.start(*args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    return runs.snakemake(*args, env=env, timeout=600)


def local_work(work: Path) -> Path:
    work.mkdir(parents=True, exist_ok=True)
    cfg = {"stages": ["videos"], "sources": [{"type": "local", "root": "lib"}]}
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    return work


def manifest_of(work: Path) -> pl.DataFrame:
    return read_parquet(work / "results/videos/videos.parquet", schemas.VIDEOS).sort("video_id")


# --- finding 1: a fixed file is picked up ----------------------------------------------------------------------------
@pytest.mark.slow  # runs Snakemake jobs
def test_a_replaced_local_file_is_checked_again_without_a_flag_and_its_facts_are_the_new_files(tmp_path):
    work = local_work(tmp_path / "work")
    make_mp4(work / "lib" / "wedding" / "good.mp4", seconds=1.0)
    make_mp4(work / "lib" / "wedding" / "resized.mp4", seconds=1.0)
    (work / "lib" / "parade").mkdir()
    (work / "lib" / "parade" / "broken.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42 not a video at all")
    first = run_local(work)
    assert first.returncode == 0, first.stderr[-3000:]
    m = manifest_of(work)
    assert dict(zip(m["video_id"], m["status"], strict=True)) == {"broken": "corrupt", "good": "ok", "resized": "ok"}
    assert "dropped" in first.stderr and "dropped_videos.md" in first.stderr  # one console line at the end

    # the broken file is replaced by a good one, the other in place by a longer one with another size: no flag
    make_mp4(work / "lib" / "parade" / "broken.mp4", seconds=1.0)
    make_mp4(work / "lib" / "wedding" / "resized.mp4", seconds=2.0, size="160x120")
    second = run_local(work)
    assert second.returncode == 0, second.stderr[-3000:]
    m = manifest_of(work).to_dicts()
    by_id = {r["video_id"]: r for r in m}
    assert by_id["broken"]["status"] == "ok" and by_id["broken"]["reason"] is None
    assert (by_id["resized"]["width"], by_id["resized"]["n_frames"]) == (160, 50)  # the new file's facts
    assert by_id["resized"]["duration_s"] == pytest.approx(2.0, abs=0.05)
    probed = [json.loads(line)["video_id"] for line in (work / "results/videos/journal_local/local.jsonl").open()]
    assert sorted(probed) == ["broken", "broken", "good", "resized", "resized"]  # the unchanged file: probed once

    # nothing changed: nothing to do
    third = run_local(work)
    assert third.returncode == 0 and "Nothing to be done" in third.stdout + third.stderr
    tried(
        "a corrupt local video replaced by a good one, another replaced in place, no flag",
        "checked again: ok, facts of the new files; unchanged files not probed again",
    )


@pytest.mark.slow  # runs Snakemake jobs
def test_retry_failed_checks_an_unchanged_local_failure_again(tmp_path):
    """A file fixed without changing its size or modification time (restored from a copy with `cp -p`, say) is
    not seen by the fingerprint; `retry_failed` checks the local failures again, once per invocation."""
    work = local_work(tmp_path / "work")
    good = make_mp4(tmp_path / "good.mp4")
    target = work / "lib" / "fire" / "v.mp4"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"\x00" * good.stat().st_size)  # same size, not a video
    st = good.stat()
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert run_local(work).returncode == 0
    assert manifest_of(work)["status"].to_list() == ["corrupt"]
    shutil.copyfile(good, target)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size and mtime: the same fingerprint
    assert run_local(work).returncode == 0
    assert manifest_of(work)["status"].to_list() == ["corrupt"]
    retry = run_local(work, "--config", "retry_failed=true")
    assert retry.returncode == 0, retry.stderr[-3000:]
    assert manifest_of(work)["status"].to_list() == ["ok"]
    assert (work / "results/videos/status/local.g1.parquet").exists()
    calm = run_local(work)
    assert calm.returncode == 0 and "Nothing to be done" in calm.stdout + calm.stderr
    tried(
        "a local failure fixed without changing size or mtime, then retry_failed",
        "checked again: ok, once per invocation",
    )


def slow_probe_site(folder: Path, *, seconds: float) -> Path:
    """A folder whose sitecustomize makes every probe of a local file take `seconds` longer (squidflow itself is
    unchanged): put on PYTHONPATH, it reaches the jobs Snakemake starts."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(
        "import time\n"
        "import squidflow.videos.manifest as m\n"
        "_probe = m.probe_existing\n"
        "def probe_existing(*args, **kwargs):\n"
        f"    time.sleep({seconds})\n"
        "    return _probe(*args, **kwargs)\n"
        "m.probe_existing = probe_existing\n"
    )
    return folder


@pytest.mark.slow  # runs Snakemake jobs
def test_kill_during_the_recheck_of_a_replaced_file_then_rerun_equals_a_clean_run(tmp_path):
    files = {f"e{i % 2}/v{i}.mp4": 1.0 + (i % 3) * 0.2 for i in range(12)}
    clean, killed = local_work(tmp_path / "clean"), local_work(tmp_path / "killed")
    for path, seconds in files.items():
        make_mp4(killed / "lib" / path, seconds=seconds)
    assert run_local(killed).returncode == 0
    # replace every file (and break one), then kill -9 the run while the local check is under way
    for path, seconds in files.items():
        make_mp4(killed / "lib" / path, seconds=seconds + 0.4, pattern="smptebars")
    (killed / "lib" / "e0/v0.mp4").write_bytes(b"")
    journal = killed / "results/videos/journal_local/local.jsonl"
    lines_before = len(journal.read_text().splitlines())
    # a probe takes ~2 ms, so the whole check can end between two looks at the journal: here each probe of the
    # killed run takes 0.25 s more, so the kill lands in the middle of the check on any machine
    proc = run_local(killed, popen=True, slow_probes=slow_probe_site(tmp_path / "slow", seconds=0.25))
    deadline = time.time() + 120
    while time.time() < deadline and len(journal.read_text().splitlines()) < lines_before + 3:
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert len(journal.read_text().splitlines()) < lines_before + len(files), "the check finished before the kill"
    assert run_local(killed, "--unlock").returncode == 0  # what Snakemake asks for after a kill
    rerun = run_local(killed, "--rerun-incomplete")
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    # a clean run on the same files
    shutil.copytree(killed / "lib", clean / "lib")
    assert run_local(clean).returncode == 0
    a, b = manifest_of(killed), manifest_of(clean)
    cols = ["video_id", "event", "status", "reason", "duration_s", "fps", "n_frames", "width", "height", "path"]
    assert a.select(cols).equals(b.select(cols))
    assert a.filter(pl.col("video_id") == "v0")["reason"].to_list() == ["empty_file"]
    assert (a.filter(pl.col("video_id") == "v3")["duration_s"].item()) == pytest.approx(1.4, abs=0.05)
    tried(
        "kill -9 during the re-check of replaced local files, then a rerun", "recovered: same manifest as a clean run"
    )


# --- findings 3 and 4: reasons at every stage, skipped files, one report -------------------------------------------
def test_reasons_at_every_stage_and_skipped_files_are_named(tmp_path):
    lib = tmp_path / "lib"
    make_mp4(lib / "fire" / "good.mp4")
    (lib / "fire" / "empty.mp4").write_bytes(b"")
    audio_only(lib / "fire" / "song.mp4")
    (lib / "fire" / "notes.txt").write_text("not a video")
    make_mp4(lib / "loose.mp4")  # not in an event folder
    (lib / "fire" / "more").mkdir()
    cands, notes = combine([local_source(lib)])
    status = check_local(cands, OPTS, journal_dir=tmp_path / "journal")
    manifest = build_manifest(cands, [status])
    reason = dict(zip(manifest["video_id"], manifest["reason"], strict=True))
    assert reason == {"empty": "empty_file", "good": None, "song": "no_video_stream"}
    report = download_report(manifest, notes)
    assert "## Skipped files" in report and "3 files in the source folders were not taken" in report
    for name in ("notes.txt", "loose.mp4", "more"):
        assert name in report
    assert "downloads it again" not in report  # advice fits files on disk
    assert "replace the file: the next run checks it again" in report

    # frame extraction drops a video that probed fine: it gets a reason and a stage too
    cut = lib / "fire" / "good.mp4"
    videos = manifest.with_columns(pl.when(pl.col("video_id") == "good").then(pl.lit("ok")).otherwise(pl.col("status"))
                                   .alias("status"))  # fmt: skip
    cut.write_bytes(cut.read_bytes()[:3000])  # damaged after the check
    _, ext_status = extract_videos(videos.filter(pl.col("status") == "ok"), FramesConfig(n=4), tmp_path / "img")
    checked = checked_manifest(videos, ext_status)
    row = checked.filter(pl.col("video_id") == "good").row(0, named=True)
    assert (row["status"], row["reason"]) == ("corrupt", "frames_undecodable")
    dropped = dropped_report(checked, notes, frame_shards=2)
    assert "| frames | `frames_undecodable`" in dropped and "logs/extract_frames/shard" in dropped
    assert "| acquisition | `empty_file`" in dropped and "| acquisition | `no_video_stream`" in dropped
    assert "loose.mp4" in dropped
    line = dropped_line(checked, notes)
    assert line.startswith("squidflow videos: 3 of 3 dropped") and "3 files skipped" in line
    assert "frames: frames_undecodable 1" in line and "results/videos/dropped_videos.md" in line
    for case in (
        "an empty video file",
        "an audio-only file",
        "a file that fails at frame extraction",
        "non-video files and a video outside an event folder",
    ):
        tried(case, "named reason: in the dropped-videos report and the console line")


# --- finding 5: facts as displayed and as decoded ------------------------------------------------------------------
def test_manifest_sizes_are_as_displayed_and_frame_counts_as_decoded(tmp_path):
    plain, rotated = tmp_path / "plain.mp4", tmp_path / "rotated.mp4"
    ffmpeg(
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=96x64:rate=30",
        "-t",
        "1",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-pix_fmt",
        "yuv420p",
        str(plain),
    )
    ffmpeg("-i", str(plain), "-c", "copy", "-metadata:s:v:0", "rotate=90", str(rotated))
    info = probe(rotated)
    assert (info.width, info.height, info.stored_width, info.stored_height) == (64, 96, 96, 64)
    # an edit list: the header counts 90 packets, 75 frames decode (OpenCV's count)
    base, edit = tmp_path / "base.mp4", tmp_path / "edit.mp4"
    ffmpeg(
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=96x64:rate=30",
        "-t",
        "3",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-g",
        "30",
        "-bf",
        "2",
        "-pix_fmt",
        "yuv420p",
        str(base),
    )
    ffmpeg("-ss", "0.5", "-i", str(base), "-c", "copy", str(edit))
    from helpers.videotools import opencv_frames

    decoded = len(opencv_frames(edit))
    assert probe(edit).n_frames != decoded  # what the header says
    # Matroska has no frame count in its header: an audio track outlasting the video made duration x fps say 133
    mkv = tmp_path / "av.mkv"
    ffmpeg(
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=96x64:rate=30",
        "-f",
        "lavfi",
        "-i",
        "sine=duration=4.5",
        "-map",
        "0:v",
        "-map",
        "1:a",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-pix_fmt",
        "yuv420p",
        "-c:a",
        "aac",
        "-frames:v",
        "132",
        str(mkv),
    )
    assert probe(mkv).n_frames == len(opencv_frames(mkv)) == 132
    lib = tmp_path / "lib" / "phone"
    lib.mkdir(parents=True)
    shutil.copy(rotated, lib / "rotated.mp4")
    shutil.copy(edit, lib / "edit.mp4")
    cands, _ = combine([local_source(tmp_path / "lib")])
    manifest = build_manifest(cands, [check_local(cands, OPTS, journal_dir=tmp_path / "j")])
    _, st = extract_videos(manifest, FramesConfig(n=4), tmp_path / "img")
    checked = {r["video_id"]: r for r in checked_manifest(manifest, st).iter_rows(named=True)}
    assert checked["edit"]["n_frames"] == decoded
    assert (checked["rotated"]["width"], checked["rotated"]["height"]) == (64, 96)
    assert (checked["rotated"]["stored_width"], checked["rotated"]["stored_height"]) == (96, 64)


def test_ffprobe_and_decoder_messages_name_their_file(tmp_path, capfd):
    """A cut MP4 ("moov atom not found"): every message about it names the file."""
    good = make_mp4(tmp_path / "lib" / "fire" / "ok.mp4")
    cut = tmp_path / "lib" / "fire" / "cut.mp4"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    cands, _ = combine([local_source(tmp_path / "lib")])
    manifest = build_manifest(cands, [check_local(cands, OPTS, journal_dir=tmp_path / "j")])
    row = manifest.filter(pl.col("video_id") == "cut").row(0, named=True)
    assert row["reason"] == "corrupt" and row["error"].startswith(str(cut))  # ffprobe's or torchcodec's words
    _, st = extract_videos(manifest.with_columns(pl.lit("ok").alias("status")), FramesConfig(n=4), tmp_path / "img")
    out = capfd.readouterr()
    for line in (out.out + out.err).splitlines():
        if "moov" in line:
            assert "cut.mp4" in line, f"a message without its file: {line!r}"


def _format_duration(path: Path) -> float:
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", str(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return float(out.strip())


SRC = ("-f", "lavfi", "-i", "testsrc2=size=96x64:rate=30")
X264 = ("-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p")
CLIPS = {  # issue 32: each had duration_s = 0.0 in videos.parquet while ffprobe's format duration was right
    "h264.mp4": (*SRC, "-t", "1.5", *X264),  # MP4 carries a stream duration: the first place looked
    "remux_h264.mkv": None,  # an MP4 remuxed into Matroska without re-encoding
    "vp9.webm": (
        *SRC,
        "-t",
        "2",
        "-c:v",
        "libvpx-vp9",
        "-deadline",
        "realtime",
        "-cpu-used",
        "8",
        "-pix_fmt",
        "yuv420p",
    ),
    "av1.webm": (*SRC, "-t", "1.5", "-c:v", "libsvtav1", "-preset", "12", "-pix_fmt", "yuv420p"),
    "audio_first.mkv": (
        "-f",
        "lavfi",
        "-i",
        "sine=duration=2.5",
        *SRC,
        "-map",
        "0:a",
        "-map",
        "1:v",
        *X264,
        "-c:a",
        "aac",
        "-t",
        "2.5",
    ),
}


def _clip(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    if name == "remux_h264.mkv":
        mp4 = tmp_path / "source.mp4"
        ffmpeg(*SRC, "-t", "3", *X264, str(mp4))
        ffmpeg("-i", str(mp4), "-c", "copy", str(path))
    else:
        encoders = subprocess.run(["ffmpeg", "-hide_banner", "-encoders"], capture_output=True, text=True).stdout
        codec = CLIPS[name][CLIPS[name].index("-c:v") + 1]
        if codec not in encoders:
            pytest.skip(f"this ffmpeg has no {codec} encoder")
        ffmpeg(*CLIPS[name], str(path))
    return path


@pytest.mark.parametrize("name", list(CLIPS))
@pytest.mark.parametrize("in_process", [True, False], ids=["torchcodec", "ffprobe"])
def test_duration_of_every_container_is_the_one_ffprobe_reports(tmp_path, monkeypatch, name, in_process):
    """duration_s from the stream, else the container (Matroska/WebM have no stream duration), else frames / fps:
    never 0 for a decodable video; the frame stage's checked manifest and the spread figure's positions use it."""
    import squidflow.videos.probe as probe_module
    from squidflow.frames.figures import relative_positions

    path = _clip(tmp_path, name)
    monkeypatch.setattr(probe_module, "in_process", lambda: in_process)
    info = probe(path)
    want = _format_duration(path)
    assert info.duration_s == pytest.approx(want, abs=0.05), (info, want)
    assert info.duration_s > 0
    if in_process:  # the frame stage: its checked manifest keeps the duration
        lib = tmp_path / "lib" / "clips"  # a folder per event
        lib.mkdir(parents=True)
        shutil.copy(path, lib / path.name)
        cands, _ = combine([local_source(lib.parent)])
        manifest = build_manifest(cands, [check_local(cands, OPTS, journal_dir=tmp_path / "j")])
        _, status = extract_videos(manifest, FramesConfig(n=4), tmp_path / "img")
        checked = checked_manifest(manifest, status)
        assert checked["duration_s"][0] == pytest.approx(want, abs=0.05)
        frames = pl.DataFrame({"video_id": [checked["video_id"][0]] * 2, "event": ["e", "e"], "pts_s": [0.0, want / 2]})
        assert relative_positions(frames, checked)["position"].to_list() == pytest.approx([0.0, 0.5], abs=0.03)


def test_spread_positions_read_a_zero_duration_as_missing():
    from squidflow.frames.figures import relative_positions

    frames = pl.DataFrame({"video_id": ["v", "v"], "event": ["e", "e"], "pts_s": [0.0, 1.0]})
    videos = pl.DataFrame({"video_id": ["v"], "duration_s": [0.0], "n_frames": [120], "fps": [30.0]})
    assert relative_positions(frames, videos)["position"].to_list() == [0.0, 0.25]
