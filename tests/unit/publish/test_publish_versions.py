"""Versions a reader can trust (issue 58): a next round and a change of method raise the minor number, a removal
on request the patch number; the card lists each version with counts and never a video id; `publish check` names data that changed while
the version did not."""

from __future__ import annotations

import polars as pl

from squidflow.publish import card, methods
from squidflow.publish.check import check_version
from squidflow.publish.facts import Facts
from squidflow.publish.shards import folder_digest
from squidflow.videos.takedown import published_version


def test_rounds_raise_the_minor_number_and_removals_the_patch():
    steps = [published_version("1.0.0", 0, 0), published_version("1.0.0", 0, 1), published_version("1.0.0", 0, 2)]
    assert [*steps, published_version("1.0.0", 1, 2)] == ["1.0.0", "1.1.0", "1.2.0", "1.2.1"]
    assert published_version("v1", 1, 1) == "v1+round.1.takedown.1"


def test_the_card_lists_each_version_with_counts_and_publish_check_compares_the_data(tmp_path):
    data = tmp_path / "data" / "judgments"
    data.mkdir(parents=True)
    pl.DataFrame({"rating": [1, 2]}).write_parquet(data / "train-00000.parquet")
    f = Facts.__new__(Facts)  # Facts is frozen: its fields are set as gather_facts would have set them
    f.__dict__.update(
        {
            "version": "1.2.1",
            "base_version": "1.0.0",
            "waves": {"first": 500, "round2": 40, "round3": 12},
            "changes": {"privacy": 1},
            "taken_down": {"ratings": 30, "images": 4},
            "method_changes": [],
            "data_digest": folder_digest(tmp_path),
        }
    )
    rows = card.version_rows(f)
    assert rows == [
        ("1.0.0", "first release: 500 ratings of round 1"),
        ("1.1.0", "round 2: 40 ratings added"),
        ("1.2.0", "round 3: 12 ratings added"),
        ("1.2.1", "1 video removed on request (privacy 1): 30 ratings and 4 rated images removed"),
    ]
    (tmp_path / "README.md").write_text("\n".join(card.changes_section(f)))
    meta = {"version": "1.2.1"}
    assert check_version(tmp_path, meta) == []
    assert "differs from croissant.json" in check_version(tmp_path, {"version": "1.2.0"})[0]
    pl.DataFrame({"rating": [1, 2, 3]}).write_parquet(data / "train-00000.parquet")  # a round added, version kept
    assert "the data files changed while the version stayed 1.2.1" in " ".join(check_version(tmp_path, meta))


def test_a_change_of_method_is_recorded_once_and_raises_the_minor_number(tmp_path):
    config = {"intervals": {"level": 0.95}, "judgments": {"quality": {"exclude": "triage"}}, "frames": {"n": 12}}
    assert methods.next_method(config, []) == 1
    folder = tmp_path / methods.METHODS_DIR
    folder.mkdir(parents=True)
    (folder / "1.json").write_text(methods.record_text(methods.method(config), 1))
    recorded = methods.recorded(tmp_path)
    assert methods.next_method(config, recorded) is None  # the same method: nothing to record, no new version
    config["frames"] |= {"shards": 4}  # how a job runs is no method
    assert methods.next_method(config, recorded) is None
    config["judgments"]["quality"] = {"exclude": "none"}
    assert methods.next_method(config, recorded) == 2
    (folder / "2.json").write_text(methods.record_text(methods.method(config), 2))
    recorded = methods.recorded(tmp_path)
    assert methods.changes(recorded) == [["judgments.quality"]]

    f = Facts.__new__(Facts)
    f.__dict__.update(
        {
            "version": "1.2.1",
            "base_version": "1.0.0",
            "waves": {"first": 500, "round2": 40},
            "changes": {"privacy": 1},
            "taken_down": {},
            "method_changes": methods.changes(recorded),
        }
    )
    assert published_version("1.0.0", 1, 1 + len(f.method_changes)) == "1.2.1"
    assert card.version_rows(f)[1:3] == [("1.1.0", "round 2: 40 ratings added"),
                                         ("1.2.0", "method changed: judgments.quality")]  # fmt: skip
