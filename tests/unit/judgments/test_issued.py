"""Issued tasks (issue 58): a round's tasks are a record the workflow reads back, never rewrites; answers are matched
by id, and a taken-down video's answers are left out and counted, never reported as an unknown image."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import polars as pl
import pytest

from squidflow.config.validation import ConfigError
from squidflow.judgments import issued
from squidflow.judgments.ingest import JudgmentError, KnownImages, ingest, taken_down_line
from squidflow.judgments.label_studio.run_exports import ingest_exports

ANNOTATION = {"images_per_hit": 2, "seed": 0, "pairs": [["parade", "protest"]]}


def write_hits(root: Path, k: int, slots: int = 2) -> dict[str, Path]:
    out = {}
    for v, path in issued.hits_paths(k).items():
        p = root / path
        p.parent.mkdir(parents=True, exist_ok=True)
        cols = ["hit_index", "variant", "event", "event_prompt"]
        cols += [f"image_{i}_{x}" for i in range(1, slots + 1) for x in ("id", "url", "event")]
        p.write_text(",".join(cols) + "\n" + ",".join(["0", v, "parade", "parade"] + ["x"] * (3 * slots)) + "\n")
        out[v] = p
    return out


def test_issued_rounds_are_read_back_and_a_changed_setting_stops_naming_the_round(tmp_path):
    assert issued.issued_rounds(tmp_path) == []
    hits = write_hits(tmp_path, 1)
    (tmp_path / issued.record_path(1)).parent.mkdir(parents=True)
    (tmp_path / issued.record_path(1)).write_text(issued.record(ANNOTATION, 1, hits))
    write_hits(tmp_path, 3)
    assert issued.issued_rounds(tmp_path) == [1, 3]
    issued.check_issued(ANNOTATION, [1, 3], tmp_path)  # the settings they were issued with: goes on

    with pytest.raises(ConfigError) as err:
        issued.check_issued({**ANNOTATION, "images_per_hit": 6}, [1, 3], tmp_path)
    assert "round 1's tasks" in str(err.value) and "images_per_hit 2" in str(err.value)
    with pytest.raises(ConfigError, match="annotation.seed is 7, but round 1's tasks"):
        issued.check_issued({**ANNOTATION, "seed": 7}, [1], tmp_path)
    # round 3 has no record (issued before records were kept): its files' columns say its images per HIT
    with pytest.raises(ConfigError, match="round 3's tasks"):
        issued.check_issued({**ANNOTATION, "images_per_hit": 3}, [3], tmp_path)

    # a HITs file rewritten after it was issued stops the run, naming the file and the round
    hits["B"].write_text(hits["B"].read_text().replace("parade", "protest"))
    with pytest.raises(ConfigError, match="hits_B.csv: round 1's variant-B tasks are not the ones issued"):
        issued.check_issued(ANNOTATION, [1], tmp_path)


def test_the_next_round_waits_for_the_answers_of_the_latest():
    assert issued.next_round_number([], set()) == 2
    assert issued.next_round_number([1], set()) == 2
    assert issued.next_round_number([1, 2], set()) is None  # round 2 issued, no answers yet
    assert issued.next_round_number([1, 2], {2}) == 3
    assert issued.next_round_number([1, 2, 3], {2, 3}) == 4
    assert issued.label_studio_task("A", 1) == "A" and issued.label_studio_task("B", 3) == "B_round3"


HEADER = ["HITId", "WorkerId", "AssignmentStatus", "Input.event_prompt", "Input.variant"]
HEADER += ["Input.image_1_id", "Input.image_2_id", "Answer.rating_1", "Answer.rating_2"]


def write_batch(path: Path, rows: list[list]) -> Path:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(HEADER)
        w.writerows(rows)
    return path


def test_an_mturk_batch_keeps_every_answer_but_those_of_a_video_taken_down(tmp_path):
    rows = [
        ["H1", "W1", "Approved", "parade", "A", "kept_1", "gone_4", "40", "90"],
        ["H1", "W2", "Approved", "parade", "A", "kept_1", "gone_4", "35", "80"],
        ["H2", "W1", "Approved", "parade", "A", "kept_2", "kept_3", "10", "20"],
    ]
    batch = write_batch(tmp_path / "batch_results.csv", rows)
    known = KnownImages({"kept_1", "kept_2", "kept_3"}, {"gone"})
    df, report = ingest(source="mturk", batches=[(batch, 1)], known_images=known, removed_videos=frozenset({"gone"}))
    assert df.height == 4 and "gone" not in set(df["video_id"])
    assert sorted(df["rating"].to_list()) == [10, 20, 35, 40]
    assert taken_down_line(2) in report and "gone" not in report

    # an image that is neither in the dataset nor of a video taken down still stops, and names itself
    bad = write_batch(tmp_path / "typo.csv", [["H3", "W3", "Approved", "parade", "A", "kept_9", "kept_1", "1", "2"]])
    with pytest.raises(JudgmentError, match="unknown image 'kept_9'"):
        ingest(source="mturk", batches=[(bad, 1)], known_images=known, removed_videos=frozenset({"gone"}))


def test_a_label_studio_export_keeps_every_answer_but_those_of_a_video_taken_down(tmp_path):
    tasks_json = tmp_path / "tasks.json"
    tasks_json.write_text(
        json.dumps([{"data": {"hit": "A-0", "variant": "A", "image_1_id": "kept_1", "image_2_id": "gone_4"}}])
    )
    result = [
        {"from_name": f"rating_{i}", "to_name": f"image_{i}", "type": "number", "value": {"number": v}}
        for i, v in ((1, 30), (2, 70))
    ]
    export = [
        {
            "id": 1,
            "data": {
                "hit": "A-0",
                "variant": "A",
                "event_prompt": "parade",
                "image_1_id": "kept_1",
                "image_2_id": "gone_4",
            },
            "annotations": [
                {
                    "id": 9,
                    "completed_by": 3,
                    "result": result,
                    "was_cancelled": False,
                    "created_at": "2026-01-01T00:00:00Z",
                }
            ],
            "drafts": [],
        }
    ]
    (tmp_path / "A.json").write_text(json.dumps(export))
    df, report = ingest_exports(
        [{"path": tmp_path / "A.json", "expected": tasks_json}],
        known_images=KnownImages({"kept_1"}, {"gone"}),
        removed_videos=frozenset({"gone"}),
    )
    assert df.select("video_id", "rating").rows() == [("kept", 30)]
    assert taken_down_line(1) in report and "gone" not in report
    assert pl.Series(df["wave"]).to_list() == ["first"]


def test_a_worker_asked_again_in_the_next_round_is_no_duplicate(tmp_path):
    """The next round asks the same workers about the same images on purpose: a duplicate is one within a wave."""
    first = write_batch(
        tmp_path / "batch_results.csv", [["H1", "W1", "Approved", "parade", "A", "a_1", "b_2", "40", "90"]]
    )
    again = write_batch(
        tmp_path / "batch_results_round2.csv", [["H9", "W1", "Approved", "parade", "A", "a_1", "", "55", ""]]
    )
    df, _ = ingest(source="mturk", batches=[(first, 1), (again, 1)], known_images={"a_1", "b_2"})
    assert df.select("wave", "rating").sort("wave", "rating").rows() == [("first", 40), ("first", 90), ("round2", 55)]
    twice = write_batch(tmp_path / "copy.csv", [["H1", "W1", "Approved", "parade", "A", "a_1", "b_2", "40", "90"]])
    with pytest.raises(JudgmentError, match="duplicate judgment"):
        ingest(source="mturk", batches=[(first, 1), (twice, 1)], known_images={"a_1", "b_2"})


def test_the_task_page_preview_shows_no_image_of_a_video_taken_down():
    from squidflow.judgments.annotation import task_pages

    hits = pl.DataFrame(
        {
            "hit_index": ["0", "1"],
            "variant": ["A", "A"],
            "event": ["parade"] * 2,
            "event_prompt": ["parade"] * 2,
            "image_1_id": ["gone_1", "kept_1"],
            "image_1_url": ["../dataset/images/gone/1.jpg", "../dataset/images/kept/1.jpg"],
            "image_1_event": ["parade"] * 2,
        }  # fmt: skip
    )
    _, preview = task_pages(hits, {"kept_1"})
    assert "gone" not in preview and "kept/1.jpg" in preview
