"""Your own dataset, end to end, through a real Label Studio server (issue 47's acceptance): two events x three local
clips (mp4, mkv, webm, one file name with a space, made with ffmpeg) -> `squidflow init` -> frames -> Label Studio
tasks pushed -> six annotators answer through the server's API (one of them careless: one rating for everything) ->
pull -> ingest -> the triage excludes the careless one -> the next round pushed, answered and pulled -> publish ->
`squidflow publish check` passes -> the card's α and every soft label recomputed from the published files alone.
Nothing of the demo is made and no rating is SIMULATED. Then the judgment source is switched in the finished folder
without its files: the run stops naming what to run, and the published folder is unchanged (checksums).

Slow: the server starts in a minute or more (its venv is installed on first use, tests/helpers/label_studio_server.py)
and the workflow runs three times on 2 cores."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from helpers import label_studio_server as lss
from helpers.published import alpha_from_rows, card_alpha, published
from helpers.runs import DEMO_CONFIG, in_folder, snakemake
from helpers.videotools import make_clip

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
CLIPS = {
    "concert": [("stage a.mp4", 0), ("crowd.mkv", 20), ("lights.webm", 40)],
    "market": [("stalls.mp4", 180), ("fruit stand.mkv", 200), ("awning.webm", 220)],
}
CAREFUL = ("a1", "a2", "b1", "b2", "b3")
CARELESS = "a3"  # one rating for every image: constant, the triage's clearest careless rater
GROUPS = {"A": ("a1", "a2", "a3"), "B": ("b1", "b2", "b3")}  # the paper's disjoint annotator groups


def make_clips(root: Path) -> None:
    for event, clips in CLIPS.items():
        for name, hue in clips:
            make_clip(root / event / name, size="96x72", rate=12, seconds=3, hue=hue)


def squidflow(work: Path, srv, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "LABEL_STUDIO_API_KEY": srv.token,
        "SQUIDFLOW_LABEL_STUDIO_VENV": str(lss.VENV),
    }
    res = subprocess.run(
        [sys.executable, "-m", "squidflow.cli", *args], capture_output=True, text=True, timeout=900, env=env, cwd=work
    )
    assert not check or res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return res


def run_mine(work: Path, *targets: str, check: bool = True) -> subprocess.CompletedProcess:
    """The workflow on the own dataset's configs (the demo's, mine.yaml, test.yaml) in `work`."""
    configs = (DEMO_CONFIG, work / "mine.yaml", work / "test.yaml")
    return snakemake(*in_folder(work, *configs), *targets, timeout=3000, check=check)


def answer(api: lss.Api, users: dict, project: int, who: tuple[str, ...], event_of: dict, rng) -> int:
    """Every task of a project answered by each of `who`: careful raters rate an image of the prompt's event high and
    any other low (with noise); the careless one gives 50 to everything."""
    n = 0
    for task in api.tasks(project):
        data = task["data"]
        slots = sorted(k for k in data if k.startswith("image_") and k.endswith("_id") and data[k])
        for person in who:
            values = [
                50
                if person == CARELESS
                else int(np.clip((78 if event_of[data[k]] == data["event"] else 22) + rng.normal(0, 6), 8, 92))
                for k in slots
            ]
            result = [
                {"from_name": f"rating_{i}", "to_name": f"image_{i}", "type": "number", "value": {"number": v}}
                for i, v in enumerate(values, start=1)
            ]
            api("POST", f"/api/tasks/{task['id']}/annotations/", json={"result": result, "completed_by": users[person]})
            n += 1
    return n


def checksums(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_own_videos_and_raters_to_a_published_dataset(label_studio):
    work, api, rng = lss.workdir(label_studio, "own_dataset"), lss.Api(label_studio), np.random.default_rng(0)
    make_clips(work / "my videos")
    squidflow(
        work,
        label_studio,
        "init",
        "my videos",
        "--output",
        "mine.yaml",
        "--name",
        "my-events",
        "--license",
        "cc-by-4.0",
        "--citation",
        "@misc{myevents, title={My events}}",
    )
    (work / "test.yaml").write_text(
        yaml.safe_dump(
            {  # the test's small sizes and its server
                "frames": {"n": 12, "shards": 1},
                "selection": {"k": 2},
                "annotation": {
                    # budget in ratings (issue 59): two soft labels get three more. The careful raters agree so
                    # well that every soft label meets the default target (an interval of 15 points) after round 1
                    # and the plan rightly buys nothing: a narrower target leaves some to re-rate
                    "next_round": {"budget": 6, "target": {"interval_width": 3}},
                    "label_studio": {"url": label_studio.url, "images": "local_files"},
                },
            }
        )
    )
    configs = [str(ROOT / "config" / "config.yaml"), "mine.yaml", "test.yaml"]
    assert "valid" in squidflow(work, label_studio, "check-config", *configs).stdout

    # frames and the Label Studio tasks; push; six annotators answer; pull
    run_mine(work, "results/annotation/label_studio/A/tasks.json", "results/annotation/label_studio/B/tasks.json")
    squidflow(work, label_studio, "label-studio", "push", *configs)
    projects = json.loads((work / "results/annotation/label_studio/projects.json").read_text())["projects"]
    assert set(projects) == {"A", "B"}
    users = {p: api.user(p) for p in (*CAREFUL, CARELESS)}
    frames = pl.read_parquet(work / "results/dataset/frames.parquet")
    event_of = dict(zip(frames["image_id"], frames["event"], strict=True))
    for variant, who in GROUPS.items():
        assert answer(api, users, projects[variant], who, event_of, rng) > 0
    squidflow(work, label_studio, "label-studio", "pull", *configs)

    # ingest, triage, publish, and the next round's tasks
    run_mine(work)
    exclusions = pl.read_parquet(work / "results/judgments/annotator_exclusions.parquet")
    assert exclusions.filter(pl.col("excluded"))["annotator"].to_list() == [f"{CARELESS}@lab.example"]
    assert (work / "results/annotation/label_studio/A_round2/tasks.json").exists()

    # the next round: pushed on its own, answered by the careful raters, pulled, ingested as wave round2
    squidflow(work, label_studio, "label-studio", "push", *configs)
    projects = json.loads((work / "results/annotation/label_studio/projects.json").read_text())["projects"]
    # the chosen images may all be one variant's: a variant with no task gets no project (issue 58)
    assert {"A", "B"} < set(projects) <= {"A", "B", "A_round2", "B_round2"}
    round2 = {"A_round2": ("a1", "a2"), "B_round2": ("b1", "b2")}
    assert sum(answer(api, users, projects[t], who, event_of, rng) for t, who in round2.items() if t in projects) > 0
    squidflow(work, label_studio, "label-studio", "pull", *configs)
    run_mine(work)  # the pulled A_round2.json and B_round2.json are ingested beside round 1's, as wave round2

    judgments = pl.read_parquet(work / "results/judgments/judgments.parquet")
    assert set(judgments["source"]) == {"label_studio"}
    assert set(judgments["wave"]) == {"first", "round2"} and set(judgments["round"]) == {1}
    files = {Path(p).name for p in judgments["source_file"]}
    assert {"A.json", "B.json"} < files <= {"A.json", "B.json", "A_round2.json", "B_round2.json"}
    assert not (work / "results/videos/demo").exists() and not (work / "results/judgments/simulated").exists()

    folder = work / "results/publish/my-events"
    check = squidflow(work, label_studio, "publish", "check", str(folder))
    assert "passes" in check.stderr, check.stdout
    card = (folder / "README.md").read_text()
    assert "SIMULATED" not in card and "Platform: Label Studio" in card
    assert "Raters excluded: 1 of 6" in card and "Ratings per wave: first" in card
    # the next round closes the loop: the card and next_round.md say what the wave added and how the intervals narrowed
    added = judgments.filter(pl.col("wave") == "round2").height
    assert f"- Next round: round2 added {added:,} ratings to " in card, card
    next_round = (work / "results/tables/next_round.md").read_text()
    assert f"- round2 added {added:,} ratings to " in next_round and "the median width of the interval" in next_round
    rows = published(folder, "judgments")
    assert rows.height == judgments.height and set(rows["source"]) == {"label_studio"}
    assert (
        set(rows.filter(pl.col("excluded"))["annotator"].unique()) == {rows.filter(pl.col("excluded"))["annotator"][0]}
        and rows.filter(pl.col("excluded"))["excluded_because"][0]
    )
    first = rows.filter(~pl.col("excluded") & (pl.col("round") == 1) & (pl.col("wave") == "first"))
    alphas = card_alpha(card)
    for variant in ("A", "B"):
        assert alphas[variant] == pytest.approx(alpha_from_rows(first.filter(pl.col("variant") == variant)), abs=5e-4)
    used = rows.filter(~pl.col("excluded") & (pl.col("round") == 1))  # soft labels: every wave
    mine_soft = used.group_by("image_id", "prompt", "variant").agg(
        pl.col("rating").mean().alias("m"), pl.len().alias("k")
    )
    soft = published(folder, "soft_labels").join(
        mine_soft, on=["image_id", "prompt", "variant"], how="full", coalesce=True
    )
    assert soft["n"].to_list() == soft["k"].to_list()
    assert (soft["mean"] - soft["m"]).abs().max() < 1e-9
    images = published(folder, "images")
    assert not any(s.startswith("/") for s in images["source"]) and "concert/stage a.mp4" in set(images["source"])

    # switching the judgment source without its files: the run stops with what to run; nothing published changes
    before = checksums(folder)
    (work / "results/annotation/answers/label_studio").rename(work / "pulled")
    res = run_mine(work, check=False)
    out = res.stdout + res.stderr
    assert res.returncode != 0 and "squidflow label-studio pull" in out, out[-3000:]
    (work / "pulled").rename(work / "results/annotation/answers/label_studio")
    mine = yaml.safe_load((work / "mine.yaml").read_text())
    mine["judgments"] = {**mine["judgments"], "source": "mturk", "batches": [{"path": "mturk/batch_results.csv"}]}
    (work / "mine.yaml").write_text(yaml.safe_dump(mine, sort_keys=False))
    res = run_mine(work, check=False)
    assert (
        res.returncode != 0
        and "judgments.batches[0].path = 'mturk/batch_results.csv': no such file" in res.stdout + res.stderr
    )
    assert checksums(folder) == before
