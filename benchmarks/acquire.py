"""Acquisition at scale: download throughput side by side with video2dataset, and the time to plan many videos.

    .venv/bin/python -m benchmarks.acquire [--videos 150 3000] [--workers 8] [--plan 20000 100000]
                                           [--cache-dir results/benchmark_cache] [--no-video2dataset]

1. Throughput, at each `--videos` size (150 and 3,000). That many small MP4 links (distinct URLs ending in .mp4, 1 s
   of 96x64 H.264) are served from a loopback HTTP server (TCP_NODELAY, as web servers set it), and the same list
   is downloaded by
   - squidflow: one shard job per core (the code path of rule acquire_videos: direct links on pooled connections,
     the journal, the brake, the no-false-success check: the container read and the first frames decoded by
     torchcodec in process, the frames stage's decoder; and the videos put into the shard's folder at its end),
     `--workers` threads each;
   - video2dataset 1.3.0 (installed by this benchmark into its own venv under the cache dir; its import-time model
     dependencies — torch 2.1.2, torchaudio, transformers 4.37 — cannot be installed beside this environment's torch,
     so the venv sees this environment's packages and an empty module stands in for torchaudio, which its download
     path never calls), `processes_count` = cores, `thread_count` = `--workers`, its default config (download only,
     no decode check), output format `files`.
   End to end: wall time from starting the processes to all done; videos per second per core = videos / seconds /
   cores. After start-up: squidflow's slowest shard job timed from after its imports (torchcodec loaded) to its
   status table; video2dataset's own rate (its log's `total` line). video2dataset checks nothing it downloads, so
   its figures carry no check; squidflow's carry the decode check of every video and are compared as they are (no
   allowance is made for the check: the ratio is squidflow with the check against video2dataset without one).
   If video2dataset cannot be installed or run, the benchmark says so and reports squidflow alone.
   Goal: squidflow >= video2dataset end to end at 3,000 videos on the same machine in the same run.
2. Planning. For `--plan` N (20,000 and 100,000) URL candidates: the Snakemake run of checkpoint video_candidates
   (listing the URL list) and the dry run that then plans the download jobs (`snakemake -n`), in seconds.
   Goal: under a minute for 100,000 on 2 cores.
"""

from __future__ import annotations

import argparse
import http.server
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

V2D_VERSION = "1.3.0"
# What video2dataset's package imports when imported, less what this environment already has (torch, numpy, pandas,
# pyarrow, requests, yt-dlp, ffmpeg-python, tqdm, fsspec): installed into its venv with pip.
V2D_DEPS = ["fire<0.6", "omegaconf", "wandb", "webdataset", "webvtt-py", "scenedetect==0.6.2", "einops", "decord",
            "langdetect", "timeout-decorator"]  # fmt: skip
V2D_NO_DEPS = [f"video2dataset=={V2D_VERSION}", "torchdata==0.7.1"]  # pinned to torch 2.1.2, which is not installable


def make_mp4(path: Path) -> bytes:
    subprocess.run(
        ["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=96x64:rate=25", "-t", "1",
         "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast", str(path)],
        check=True,
    )  # fmt: skip
    return path.read_bytes()


def serve(body: bytes) -> tuple[http.server.ThreadingHTTPServer, str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # as web servers do (nginx tcp_nodelay): else each answer waits on an ACK

        def log_message(self, *args):
            pass

        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "video/mp4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 256

        def handle_error(self, request, client_address):  # a client closing early (yt-dlp's probe GET) is fine
            pass

    httpd = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


# --- squidflow ---------------------------------------------------------------------------------------------------
def shard_job(candidates: str, shard: int, shards: int, workers: int, workdir: str) -> None:
    """One shard job, as rule acquire_videos runs it (here without Snakemake around it)."""
    os.chdir(workdir)
    from squidflow.contracts import schemas
    from squidflow.contracts.io import read_parquet, write_parquet
    from squidflow.videos.download import DownloadOptions
    from squidflow.videos.download_shards import acquire_shard, brake_for
    from squidflow.videos.probe import in_process

    opts = DownloadOptions(workers=workers, retries=1, backoff_s=0.1)
    in_process()  # start-up: the decoder (torch, torchcodec) loads before the clock starts
    start = time.perf_counter()
    status = acquire_shard(read_parquet(candidates, schemas.VIDEO_CANDIDATES), shard=shard, shards=shards,
                           generation=0, opts=opts, journal_dir="journal", brake=brake_for(opts, "brake", "bench"),
                           progress=False, folder=f"downloads/shard{shard}of{shards}.g0")  # fmt: skip
    write_parquet(status, f"status/shard{shard}of{shards}.parquet", schemas.VIDEO_STATUS)
    print("SHARD_SECONDS", time.perf_counter() - start, flush=True)


def run_squidflow(urls: list[str], workdir: Path, cores: int, workers: int) -> tuple[float, int, float]:
    """Wall seconds (processes started to all done), videos ok, and the slowest job's seconds after its imports."""
    import polars as pl

    from squidflow.contracts import schemas
    from squidflow.contracts.io import write_parquet
    from squidflow.videos.sources import urls_source

    workdir.mkdir(parents=True)
    table = pl.DataFrame({"url": urls, "event": ["bench"] * len(urls)})
    write_parquet(urls_source(table, "bench").candidates, workdir / "candidates.parquet", schemas.VIDEO_CANDIDATES)
    start = time.perf_counter()
    jobs = [subprocess.Popen([sys.executable, __file__, "--shard-job", str(workdir / "candidates.parquet"), str(k),
                              str(cores), str(workers), str(workdir)], stdout=subprocess.PIPE, text=True)
            for k in range(cores)]  # fmt: skip
    outs = [j.communicate()[0] for j in jobs]
    if any(j.returncode != 0 for j in jobs):
        raise RuntimeError("a squidflow shard job failed")
    seconds = time.perf_counter() - start
    ok = sum((pl.read_parquet(p)["status"] == "ok").sum() for p in (workdir / "status").glob("*.parquet"))
    inside = max(float(line.split()[1]) for out in outs for line in out.splitlines() if line.startswith("SHARD_"))
    return seconds, int(ok), inside


# --- video2dataset -----------------------------------------------------------------------------------------------
V2D_RUNNER = """
import importlib.machinery, os, sys, time, types
# video2dataset imports its audio decoder (torchaudio) at import time; downloading never calls it, and no PyPI
# torchaudio matches this environment's torch: an empty module stands in for it.
ta = types.ModuleType("torchaudio"); ta.functional = types.ModuleType("torchaudio.functional")
ta.__spec__ = importlib.machinery.ModuleSpec("torchaudio", None); ta.__path__ = []
sys.modules["torchaudio"] = ta; sys.modules["torchaudio.functional"] = ta.functional
from video2dataset import video2dataset
from video2dataset.configs import CONFIGS
from omegaconf import OmegaConf


def main():  # video2dataset starts its workers with `spawn`: the script's work must sit under __main__
    url_list, out, processes, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    config = OmegaConf.to_container(CONFIGS["default"])
    config["distribution"].update(processes_count=processes, thread_count=threads, subjob_size=1000)
    config["storage"]["number_sample_per_shard"] = 1000
    os.makedirs(out + "_tmp", exist_ok=True)
    start = time.perf_counter()
    video2dataset(url_list=url_list, output_folder=out, output_format="files", input_format="csv", url_col="url",
                  config=config, tmp_dir=out + "_tmp")
    print("V2D_SECONDS", time.perf_counter() - start)


if __name__ == "__main__":
    main()
"""


def ensure_video2dataset(cache: Path) -> tuple[Path | None, str]:
    """The python of a venv with video2dataset, or None and why not."""
    venv = cache / "video2dataset-venv"
    py = venv / "bin" / "python"
    marker = venv / ".installed"
    if marker.exists():
        return py, f"video2dataset {V2D_VERSION} (cached venv {venv})"
    try:
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, text=True)
        site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              check=True, capture_output=True, text=True).stdout.strip()  # fmt: skip
        import sysconfig

        # after its own site-packages: this environment's torch, numpy, pandas, pyarrow, yt-dlp...
        Path(site, "zz_squidflow_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
        pip = [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        print(f"installing video2dataset {V2D_VERSION} into {venv} (once; a minute or two)...", flush=True)
        subprocess.run([*pip, "--no-deps", *V2D_NO_DEPS], check=True, capture_output=True, text=True, timeout=900)
        subprocess.run([*pip, *V2D_DEPS], check=True, capture_output=True, text=True, timeout=900)
        (cache / "v2d_runner.py").write_text(V2D_RUNNER)
        check = subprocess.run([str(py), "-c", V2D_RUNNER.split("from omegaconf")[0]], capture_output=True, text=True)
        if check.returncode != 0:
            return None, f"video2dataset does not import: {check.stderr.strip().splitlines()[-1:]}"
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        err = getattr(exc, "stderr", "") or ""
        return None, f"video2dataset could not be installed: {str(err).strip()[-300:] or exc}"
    marker.write_text(V2D_VERSION)
    return py, f"video2dataset {V2D_VERSION} (venv {venv})"


def run_video2dataset(py: Path, urls: list[str], workdir: Path, cores: int, workers: int) -> tuple[float, int, float]:
    """Wall seconds (process started to done), videos ok, and video2dataset's own rate in videos/s (its log's
    `total` line, which leaves its start-up out)."""
    workdir.mkdir(parents=True)
    (workdir / "urls.csv").write_text("url\n" + "\n".join(urls) + "\n")
    runner = workdir / "runner.py"
    runner.write_text(V2D_RUNNER)
    start = time.perf_counter()
    res = subprocess.run([str(py), str(runner), str(workdir / "urls.csv"), str(workdir / "out"), str(cores),
                          str(workers)], capture_output=True, text=True, timeout=1800, cwd=workdir)  # fmt: skip
    seconds = time.perf_counter() - start
    if res.returncode != 0:
        raise RuntimeError(f"video2dataset failed: {res.stderr.strip()[-500:]}")
    ok = len(list((workdir / "out").rglob("*.mp4")))
    rates = [line.split("videos per sec:")[1].split("-")[0] for line in (res.stdout + res.stderr).splitlines()
             if line.startswith("total") and "videos per sec:" in line]  # fmt: skip
    return seconds, ok, float(rates[-1]) if rates else float("nan")


# --- planning ----------------------------------------------------------------------------------------------------
def plan(n: int, workdir: Path) -> tuple[float, float, str]:
    """Seconds for Snakemake to list `n` URL candidates (checkpoint video_candidates) and to plan the downloads."""
    import polars as pl
    import yaml

    workdir.mkdir(parents=True)
    pl.DataFrame({"url": [f"http://127.0.0.1:9/v/{i}.mp4" for i in range(n)], "event": ["bench"] * n}).write_csv(
        workdir / "urls.csv"
    )
    (workdir / "config.yaml").write_text(
        yaml.safe_dump({"stages": ["videos"], "sources": [{"type": "urls", "path": "urls.csv"}]})
    )
    base = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "--directory", str(workdir),
            "--configfile", str(workdir / "config.yaml"), "--cores", "1"]  # fmt: skip
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    t0 = time.perf_counter()
    subprocess.run([*base, "results/videos/candidates.parquet"], check=True, capture_output=True, env=env)
    t1 = time.perf_counter()
    dry = subprocess.run([*base, "-n"], check=True, capture_output=True, text=True, env=env)
    t2 = time.perf_counter()
    jobs = [line.split() for line in (dry.stdout + dry.stderr).splitlines() if line.startswith("acquire_videos")]
    return t1 - t0, t2 - t1, f"{jobs[0][1] if jobs else '?'} acquire_videos job(s)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--videos", type=int, nargs="+", default=[150, 3000])
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--plan", type=int, nargs="*", default=[20000, 100000])
    ap.add_argument("--cache-dir", type=Path, default=ROOT / "results" / "benchmark_cache")
    ap.add_argument("--no-video2dataset", action="store_true")
    ap.add_argument("--shard-job", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.shard_job:
        cands, shard, shards, workers, workdir = args.shard_job
        shard_job(cands, int(shard), int(shards), int(workers), workdir)
        return

    cores = max(1, args.cores)
    tmp = Path(tempfile.mkdtemp(prefix="squidflow-bench-acquire-"))
    try:
        httpd, base = serve(make_mp4(tmp / "clip.mp4"))
        py, what = None, "skipped (--no-video2dataset)"
        if not args.no_video2dataset:
            py, what = ensure_video2dataset(args.cache_dir)
        for n in args.videos:
            throughput(n, base, tmp / f"n{n}", cores, args.workers, py, what)
        httpd.shutdown()
        for n in args.plan:
            list_s, plan_s, jobs = plan(n, tmp / f"plan{n}")
            verdict = "" if n < 100000 else f" (goal < 60 s: {'met' if list_s + plan_s < 60 else 'NOT met'})"
            print(f"planning {n:>7,} videos: list {list_s:5.1f} s + plan {plan_s:5.1f} s = {list_s + plan_s:5.1f} s, "
                  f"{jobs}{verdict}")  # fmt: skip
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def throughput(n: int, base: str, work: Path, cores: int, workers: int, py: Path | None, what: str) -> None:
    """Both tools on the same `n` links, one after the other: a line each, then the ratios."""
    urls = [f"{base}/v/{i}.mp4" for i in range(n)]
    print(f"-- {n} MP4 links on {base}, {cores} core(s), {workers} workers per process")
    sf_s, sf_ok, sf_inside = run_squidflow(urls, work / "squidflow", cores, workers)
    sf_rate, sf_steady = n / sf_s / cores, n / sf_inside / cores
    print(f"squidflow:     {sf_ok}/{n} ok in {sf_s:6.2f} s = {sf_rate:7.2f} videos/s/core end to end; "
          f"{sf_steady:7.2f} after start-up (every video decode-checked)")  # fmt: skip
    if py is None:
        print(f"video2dataset: not measured: {what}; squidflow alone")
        return
    try:
        v_s, v_ok, v_own = run_video2dataset(py, urls, work / "video2dataset", cores, workers)
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        print(f"video2dataset: not measured: {exc}; squidflow alone")
        return
    v2d_rate, v2d_steady = n / v_s / cores, v_own / cores
    print(f"video2dataset: {v_ok}/{n} ok in {v_s:6.2f} s = {v2d_rate:7.2f} videos/s/core end to end; "
          f"{v2d_steady:7.2f} after start-up, by its own log ({what}; download only, no check)")  # fmt: skip
    verdict = "met" if sf_rate >= v2d_rate else "NOT met"
    goal = f" (goal >= 1 at 3,000: {verdict})" if n >= 3000 else ""
    print(f"ratio squidflow / video2dataset at {n}: {sf_rate / v2d_rate:.2f} end to end{goal}, "
          f"{sf_steady / v2d_steady:.2f} after start-up")  # fmt: skip


if __name__ == "__main__":
    main()
