"""A dataset that lives, through a real Label Studio server (issue 58's acceptance): own clips -> `squidflow init` ->
round 1 pushed, answered through the API, pulled -> triage, publish 1.0.0 -> round 2 and round 3 pushed, answered,
pulled, ingested (1.1.0, 1.2.0) -> a takedown of one video (1.2.1).

Then: the published judgments are exactly every answer ever given minus those about the removed video's images; the
card's α is recomputed from the published rows; every round's tasks.json is byte-identical from its first push to
the end; the ingestion report counts the answers left out without naming the video; and no file under results/ but
the takedown log and the issued task records under results/annotation/ names it.

Slow: the server starts in a minute or more (tests/helpers/label_studio_server.py) and the workflow runs five times."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from helpers import label_studio_server as lss
from helpers.published import alpha_from_rows, card_alpha, published
from helpers.runs import DEMO_CONFIG, cores, snakemake, squidflow
from helpers.videotools import make_clip

pytestmark = pytest.mark.slow
CLIPS = {"concert": [("stage.mp4", 0), ("crowd.mp4", 30), ("lights.mp4", 60)],
         "market": [("stalls.mp4", 180), ("fruit.mp4", 210), ("awning.mp4", 240)]}  # fmt: skip
GROUPS = {"A": ("a1", "a2", "a3", "a4", "a5"), "B": ("b1", "b2", "b3", "b4")}
CARELESS = "a3"


def answer(api: lss.Api, users: dict, project: int, who, event_of: dict, rng) -> list[tuple[str, int]]:
    """Every task of a project answered by each of `who`; the answers as (image id, rating)."""
    given = []
    for task in api.tasks(project):
        data = task["data"]
        slots = sorted(int(k.split("_")[1]) for k in data if k.startswith("image_") and k.endswith("_id") and data[k])
        for person in who:
            result = []
            for i in slots:
                img = data[f"image_{i}_id"]
                mean = 78 if event_of.get(img, data["event"]) == data["event"] else 22
                value = 50 if person == CARELESS else int(np.clip(mean + rng.normal(0, 6), 5, 95))
                result.append(
                    {"from_name": f"rating_{i}", "to_name": f"image_{i}", "type": "number", "value": {"number": value}}
                )
                given.append((img, value))
            api("POST", f"/api/tasks/{task['id']}/annotations/", json={"result": result, "completed_by": users[person]})
    return given


def names(path: Path, video: str) -> bool:
    if video in path.as_posix():
        return True
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        return any(video in str(v) for c in table.column_names for v in table.column(c).to_pylist())
    if path.suffix in (".jpg", ".png", ".zip", ".mp4"):
        return False
    return video in path.read_text(encoding="utf-8", errors="replace")


def test_three_rounds_and_a_takedown_through_label_studio(label_studio):
    work, api, rng = label_studio.document_root, lss.Api(label_studio), np.random.default_rng(0)
    env = {"LABEL_STUDIO_API_KEY": label_studio.token, "SQUIDFLOW_LABEL_STUDIO_VENV": str(lss.VENV)}
    for event, clips in CLIPS.items():
        for name, hue in clips:
            make_clip(work / "my videos" / event / name, size="96x72", rate=12, seconds=3, hue=hue)
    init = squidflow("init", "my videos", "--output", "mine.yaml", "--name", "my-events", "--license", "cc-by-4.0",
                     "--citation", "@misc{mine, title={Mine}}", cwd=work, env=env)  # fmt: skip
    assert init.returncode == 0, init.stderr
    test = {"frames": {"n": 12, "shards": 1}, "selection": {"k": 2},
            "annotation": {"next_round": {"budget": 20, "target": {"interval_width": 3}}, "assignments_per_hit": 5,
                           "label_studio": {"url": label_studio.url, "images": "local_files"}}}  # fmt: skip
    (work / "test.yaml").write_text(yaml.safe_dump(test))
    configs = [str(DEMO_CONFIG), str(work / "mine.yaml"), str(work / "test.yaml")]
    tasks_dir = work / "results/annotation/label_studio"

    def run(*targets: str) -> None:
        snakemake("--directory", work, "--configfile", *configs, "--cores", str(cores()), *targets, check=True)

    def cli(*args: str) -> None:
        res = squidflow(*args, *configs, "--directory", str(work), cwd=work, env=env)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]

    def version() -> str:
        return json.loads((work / "results/publish/my-events/croissant.json").read_text())["version"]

    users: dict[str, int] = {}
    issued: dict[Path, bytes] = {}
    given: list[tuple[str, int]] = []

    def push_answer_pull(event_of: dict) -> dict:
        """Push what is not pushed yet, keep its tasks.json bytes, answer every new project, pull."""
        before = set(json.loads((tasks_dir / "projects.json").read_text())["projects"]) if users else set()
        cli("label-studio", "push")
        projects = json.loads((tasks_dir / "projects.json").read_text())["projects"]
        if not users:
            for p in (*GROUPS["A"], *GROUPS["B"]):
                users[p] = api.user(p)
        new = {t: pid for t, pid in projects.items() if t not in before}
        assert new, projects
        for task, pid in new.items():
            tasks = tasks_dir / task / "tasks.json"
            assert json.loads(tasks.read_text()), f"an empty project was pushed for {task}"
            issued[tasks] = tasks.read_bytes()
            given.extend(answer(api, users, pid, GROUPS[task[0]], event_of, rng))
        cli("label-studio", "pull")
        return new

    run(f"{tasks_dir.relative_to(work)}/A/tasks.json", f"{tasks_dir.relative_to(work)}/B/tasks.json")
    frames = pl.read_parquet(work / "results/dataset/frames.parquet")
    event_of = dict(zip(frames["image_id"], frames["event"], strict=True))
    assert set(push_answer_pull(event_of)) == {"A", "B"}
    run()
    assert version() == "1.0.0"
    for k in (2, 3):  # each next round: pushed on its own, answered, pulled, ingested; the one after is written
        new = push_answer_pull(event_of)
        assert new and all(t.endswith(f"_round{k}") for t in new), new
        run()
        assert version() == f"1.{k - 1}.0"
        assert any((tasks_dir / f"{v}_round{k + 1}/tasks.json").exists() for v in "AB")
    judgments = pl.read_parquet(work / "results/judgments/judgments.parquet")
    assert set(judgments["wave"]) == {"first", "round2", "round3"} and judgments.height == len(given)
    # a next round's pages are not round 1's: their hit ids differ (A_round2-0), so no rater seems to answer twice
    assert judgments.group_by("hit").agg(pl.col("wave").n_unique().alias("n"))["n"].max() == 1

    video = sorted(frames["video_id"].unique().to_list())[0]
    (work / "takedown.csv").write_text(f"video_id,requested,reason\n{video},2026-11-20,privacy\n")
    test["takedown"] = "takedown.csv"
    (work / "test.yaml").write_text(yaml.safe_dump(test))
    run()
    assert version() == "1.2.1"

    for path, data in issued.items():
        assert path.read_bytes() == data, f"{path} changed after it was pushed"
    folder = work / "results/publish/my-events"
    rows = published(folder, "judgments")
    kept = sorted((img, r) for img, r in given if img.rsplit("_", 1)[0] != video)
    gone = len(given) - len(kept)
    assert gone > 0 and sorted(zip(rows["image_id"], rows["rating"], strict=True)) == kept
    assert set(rows["wave"]) == {"first", "round2", "round3"}
    report = (work / "results/judgments/ingest_report.md").read_text()
    assert f"{gone} ratings of videos taken down" in report and video not in report
    card = (folder / "README.md").read_text()
    assert "| 1.1.0 | round 2: " in card and "| 1.2.0 | round 3: " in card and "| 1.2.1 | 1 video removed" in card
    first = rows.filter(~pl.col("excluded") & (pl.col("round") == 1) & (pl.col("wave") == "first"))
    alphas = card_alpha(card)
    for variant in ("A", "B"):
        assert alphas[variant] == pytest.approx(alpha_from_rows(first.filter(pl.col("variant") == variant)), abs=5e-4)
    check = squidflow("publish", "check", str(folder), cwd=work, env=env)
    assert "passes" in check.stderr, check.stdout + check.stderr
    # kept: the takedown log and the issued task records with their answers as Label Studio exported them
    # (results/annotation/: ids, no pixels; what people answered, matched to the tasks by id)
    kept_files = ("annotation/",)
    offenders = [
        p.relative_to(work / "results").as_posix()
        for p in sorted((work / "results").rglob("*"))
        if p.is_file()
        and p.relative_to(work / "results").as_posix() != "videos/takedown_log.csv"
        and not p.relative_to(work / "results").as_posix().startswith(kept_files)
        and names(p, video)
    ]
    assert not offenders, offenders
    images = [p for p in (work / "results/annotation").rglob("*") if p.suffix in (".jpg", ".png")]
    assert not images, images
