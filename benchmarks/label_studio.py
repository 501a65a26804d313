"""Benchmark of the Label Studio path and crowd-kit's models at the SQUID-E release's size.

1. Push: `squidflow label-studio push` creates the A and B projects and imports the tasks of the release's 3,600
   images (600 six-image tasks, images by URL) on a local server (tests/helpers/label_studio_server.py: its own venv,
   SQLite). Baseline in the same run: the same tasks POSTed straight to /api/projects/<id>/import with `requests`
   (what the SDK subprocess and squidflow add). Target: < 60 s.
2. Pull: `squidflow label-studio pull` exports the two projects holding the release's 10,800 ratings (3,600
   one-image tasks with 3 annotations each, imported with their annotations) and the exports are ingested; the
   judgments must equal the release's. Baseline: GET /api/projects/<id>/export?exportType=JSON with `requests`.
   Target: < 60 s.
3. crowd-kit: majority vote, Dawid–Skene, GLAD and MACE on the 10,800 release ratings' certainty bins, with the
   schema's defaults (n_iter 20, 2 MACE restarts). Baseline: majority vote alone. Target: < 30 s.

    python -m benchmarks.label_studio [--skip-server] [--release ../shared/data/squid-e/huj_annotations.csv]

On a shared machine under load the times are indicative only; the ratios are measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RELEASE = (
    Path(os.environ.get("SQUIDFLOW_DATA", ROOT.parent / "shared" / "data")) / "squid-e" / "huj_annotations.csv"
)


def cli(srv, work: Path, *args: str) -> float:
    env = {**os.environ, "LABEL_STUDIO_API_KEY": srv.token}
    t0 = time.perf_counter()
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "squidflow.cli",
            "label-studio",
            *args,
            str(work / "config.yaml"),
            "--directory",
            str(work),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )
    if res.returncode:
        raise SystemExit(res.stderr[-3000:])
    return time.perf_counter() - t0


def server_phase(release_csv: Path, out: dict) -> None:
    import polars as pl
    import requests

    from squidflow.contracts.io import write_csv
    from squidflow.judgments.annotation import make_hits
    from squidflow.judgments.ingest import read_release
    from squidflow.judgments.label_studio import tasks as ls
    from squidflow.judgments.label_studio.run_exports import ingest_exports
    from tests.helpers import label_studio_server as lss

    why = lss.ensure_venv()
    if why:
        raise SystemExit(why)
    release, _ = read_release(release_csv)
    base = Path(tempfile.mkdtemp(prefix="squidflow-ls-bench-"))
    work = base / "work"
    work.mkdir()
    t0 = time.perf_counter()
    srv = lss.start(base / "data", work)
    out["server_start_s"] = round(time.perf_counter() - t0, 1)
    try:
        # 1. push the tasks of the release's 3,600 images (per variant: 1,800 images -> 300 six-image tasks)
        images = release.select("video_id", "frame_index", "variant").unique()
        for variant in ("A", "B"):
            v = images.filter(pl.col("variant") == variant)
            frames = v.with_columns(
                (pl.col("video_id") + "_" + pl.col("frame_index").cast(pl.Utf8)).alias("image_id"),
                pl.col("video_id").alias("event"),
            )
            # one "event" per video keeps make_hits' variant-A rule (six videos per task) trivially satisfiable: the
            # grouping is not what is measured here, the tasks' number and size are
            frames = frames.with_columns(pl.lit("release").alias("event"))
            write_csv(make_hits(frames, "A", base_url="https://images.example/squid-e"), work / f"hits_{variant}.csv")
            hits = pl.read_csv(work / f"hits_{variant}.csv", infer_schema_length=0).with_columns(
                pl.lit(variant).alias("variant")
            )
            write_csv(hits, work / f"hits_{variant}.csv")
        counts = ls.build_label_studio_tasks(
            work / "results/annotation/label_studio",
            frames_path=None,
            hits={v: work / f"hits_{v}.csv" for v in ("A", "B")},
            images={"mode": "url", "base_url": "https://images.example/squid-e"},
            images_per_hit=6,
        )
        out["push_tasks"] = counts
        s = requests.Session()
        s.headers["Authorization"] = f"Token {srv.token}"
        (work / "config.yaml").write_text(f"annotation:\n  label_studio: {{url: '{srv.url}'}}\n")
        out["push_s"] = round(cli(srv, work, "push"), 2)
        t0 = time.perf_counter()
        for v in ("A", "B"):
            p = s.post(
                f"{srv.url}/api/projects/",
                json={
                    "title": f"baseline {v}",
                    "label_config": (work / f"results/annotation/label_studio/{v}/label_config.xml").read_text(),
                },
                timeout=600,
            ).json()
            tasks = json.loads((work / f"results/annotation/label_studio/{v}/tasks.json").read_text())
            s.post(f"{srv.url}/api/projects/{p['id']}/import", json=tasks, timeout=600).raise_for_status()
        out["push_baseline_s"] = round(time.perf_counter() - t0, 2)
        # 2. the release's 10,800 ratings as annotated tasks, pulled back and ingested
        named = release.with_columns((pl.col("annotator") + "@" + pl.col("variant") + ".example").alias("annotator"))
        users = {}
        for who in sorted(named["annotator"].unique()):
            users[who] = s.post(
                f"{srv.url}/api/users/",
                json={"username": who.split(".")[0], "email": who, "password": "bench-" + who},
                timeout=60,
            ).json()["id"]
        ids = {}
        for v in ("A", "B"):
            export = ls.export_from_judgments(named.filter(pl.col("variant") == v))
            for t in export:  # what an import takes: data, and annotations with their results and annotator
                t.pop("id"), t.pop("drafts"), t.pop("predictions"), t.pop("meta")
                t["annotations"] = [
                    {"result": a["result"], "completed_by": users[a["completed_by"]["email"]], "was_cancelled": False}
                    for a in t["annotations"]
                ]
            p = s.post(
                f"{srv.url}/api/projects/",
                json={"title": f"release {v}", "label_config": ls.rating_config(1)},
                timeout=600,
            ).json()
            s.post(f"{srv.url}/api/projects/{p['id']}/import", json=export, timeout=1800).raise_for_status()
            ids[v] = p["id"]
        (work / "results/annotation/label_studio/projects.json").write_text(
            json.dumps({"url": srv.url, "projects": ids})
        )
        out["pull_s"] = round(cli(srv, work, "pull"), 2)
        t0 = time.perf_counter()
        for pid in ids.values():
            s.get(
                f"{srv.url}/api/projects/{pid}/export?exportType=JSON&download_all_tasks=true", timeout=1800
            ).raise_for_status()
        out["pull_baseline_s"] = round(time.perf_counter() - t0, 2)
        t0 = time.perf_counter()
        got, _ = ingest_exports(
            [{"path": work / f"results/annotation/answers/label_studio/{v}.json"} for v in ("A", "B")], on_error="skip"
        )
        out["ingest_s"] = round(time.perf_counter() - t0, 2)
        key = ["video_id", "frame_index", "event_prompt", "variant", "annotator", "position", "rating"]
        got = got.with_columns(pl.col("annotator").str.replace(r"@[AB]\.example$", ""))
        out["pulled_judgments"] = len(got)
        out["pulled_equal_release"] = got.select(key).sort(key).equals(release.select(key).sort(key))
    finally:
        srv.stop()


def crowd_phase(release_csv: Path, out: dict) -> None:
    from squidflow.judgments import crowd
    from squidflow.judgments.ingest import read_release

    release, _ = read_release(release_csv)
    answers = crowd.rating_answers(release)
    crowd.fit(answers.head(30), "majority_vote")  # crowd-kit's import (transformers, nltk) is not the baseline's cost
    t0 = time.perf_counter()
    crowd.fit(answers, "majority_vote")
    out["crowd_baseline_majority_vote_s"] = round(time.perf_counter() - t0, 2)
    for name in crowd.MODELS:
        t0 = time.perf_counter()
        crowd.fit(answers, name)
        out[f"crowd_{name}_s"] = round(time.perf_counter() - t0, 2)
    out["crowd_all_s"] = round(sum(out[f"crowd_{m}_s"] for m in crowd.MODELS), 2)
    out["crowd_ratings"] = len(answers)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--release", type=Path, default=DEFAULT_RELEASE)
    ap.add_argument("--skip-server", action="store_true", help="only crowd-kit's models")
    ap.add_argument("--skip-crowd", action="store_true")
    args = ap.parse_args()
    out: dict = {}
    if not args.skip_server:
        server_phase(args.release, out)
        out["push_ratio"] = round(out["push_s"] / out["push_baseline_s"], 2)
        out["pull_ratio"] = round(out["pull_s"] / out["pull_baseline_s"], 2)
    if not args.skip_crowd:
        crowd_phase(args.release, out)
        out["crowd_ratio_vs_majority_vote"] = round(
            out["crowd_all_s"] / max(out["crowd_baseline_majority_vote_s"], 1e-3), 1
        )
    print(json.dumps(out, indent=1))
    ok = out.get("push_s", 0) < 60 and out.get("pull_s", 0) < 60 and out.get("crowd_all_s", 0) < 30
    print(
        "targets (push < 60 s, pull < 60 s, crowd-kit < 30 s):",
        "met" if ok else "NOT met (see the figures; under load?)",
    )


if __name__ == "__main__":
    main()
