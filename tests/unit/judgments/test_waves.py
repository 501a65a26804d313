"""The next round is its own wave (issue 47): named by its file (A_round2.json, batch_results_round2.csv) or its
config entry, never SQUID-E's repeat `round: 2`; Table 7 stays the first wave's, the image scores use every wave."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from helpers.publish_run import INTERVALS

from squidflow.contracts import schemas
from squidflow.judgments.agreement import agreement_table
from squidflow.judgments.scores import image_scores
from squidflow.judgments.tables import table7
from squidflow.judgments.waves import first_wave, per_wave, wave_of


def test_a_files_name_says_its_wave():
    assert wave_of("results/annotation/answers/label_studio/A_round2.json") == "round2"
    assert wave_of("mturk/batch_results_round3.csv") == "round3"
    assert wave_of("results/annotation/answers/label_studio/A.json") == "first"
    assert wave_of("mturk/batch_results_repeat.csv") == "first"  # a repeat is round 2 of the first wave
    assert wave_of("round1.csv") == "first"


def _judgments() -> pl.DataFrame:
    rows = []
    for img in range(4):
        for pos, (ann, delta) in enumerate([("w1", 0), ("w2", 5), ("w3", -5)]):
            rows.append(
                {
                    "video_id": "v",
                    "frame_index": img,
                    "event_prompt": "a parade",
                    "variant": "A",
                    "annotator": ann,
                    "position": pos,
                    "hit": "h1",
                    "rating": 20 * img + delta,
                    "round": 1,
                    "source": "label_studio",
                    "source_file": "A.json",
                    "wave": "first",
                }
            )
        rows.append(
            {
                "video_id": "v",
                "frame_index": img,
                "event_prompt": "a parade",
                "variant": "A",
                "annotator": "w9",
                "position": 0,
                "hit": "h9",
                "rating": 100 - 20 * img,
                "round": 1,
                "source": "label_studio",
                "source_file": "A_round2.json",
                "wave": "round2",
            }
        )
    return pl.DataFrame(rows, schema=dict(schemas.JUDGMENTS.columns))


def test_table7_is_the_first_waves_and_the_scores_use_every_wave():
    j = _judgments()
    report = pl.DataFrame(
        {"annotator": ["w1", "w2", "w3", "w9"], "n_judgments": [4] * 4, "flags": [[]] * 4, "excluded": [False] * 4},
        schema=dict(schemas.ANNOTATOR_REPORT.columns),
    )
    table, _ = table7(j, report, pl.DataFrame(schema={"variant": pl.Utf8}))
    want = agreement_table(first_wave(j)).drop("n_items")
    assert table.select(want.columns).equals(want)
    scores = image_scores(j, [])
    assert scores.filter(pl.col("frame_index") == 0)["people_mean"][0] == (0 + 5 - 5 + 100) / 4
    assert per_wave(j) == {"first": 12, "round2": 4}


def _rating(img: int, ann: str, hit: str, pos: int, rating: int, wave: str = "first", rnd: int = 1) -> dict:
    return {"video_id": "v", "frame_index": img, "event_prompt": "a parade", "variant": "A", "annotator": ann,
            "position": pos, "hit": hit, "rating": rating, "round": rnd, "source": "mturk",
            "source_file": f"batch_{wave}.csv", "wave": wave}  # fmt: skip


def _three_waves() -> pl.DataFrame:
    """Images 0-2: two first-wave ratings far apart (image 2: one only), then round2 adds two close to their middle;
    round3 adds one more to image 0. A careless rater (`x`) and a SQUID-E repeat (round 2) are in every wave."""
    rows = []
    for img in range(3):
        rows += [_rating(img, "a", "h1", img, 10 + img)]
        if img < 2:
            rows += [_rating(img, "b", "h2", img, 90 - img)]
        rows += [_rating(img, "x", "h3", img, 50), _rating(img, "a", "h4", img, 99, "first", rnd=2)]
        rows += [_rating(img, "c", "r2a", img, 48 + img, "round2"), _rating(img, "d", "r2b", img, 52, "round2")]
        rows += [_rating(img, "x", "r2x", img, 0, "round2")]
    rows += [_rating(0, "e", "r3", 0, 50, "round3")]
    return pl.DataFrame(rows, schema=dict(schemas.JUDGMENTS.columns))


def test_each_next_round_wave_says_what_it_added_and_how_the_intervals_narrowed():
    from squidflow.judgments.next_round import waves_markdown
    from squidflow.judgments.waves import narrowing, narrowing_summary, summary_line
    from squidflow.publish.tables import soft_labels_table
    from squidflow.statistics.intervals import IntervalConfig

    j = _three_waves()
    cfg = IntervalConfig.from_config(INTERVALS)
    per_item = narrowing(j, cfg, excluded=["x"])
    r2 = per_item.filter(pl.col("wave") == "round2").sort("frame_index")
    assert r2["n_before"].to_list() == [2, 2, 1] and r2["n_after"].to_list() == [4, 4, 3]  # x and the repeat left out
    r3 = per_item.filter(pl.col("wave") == "round3")
    assert r3["frame_index"].to_list() == [0] and r3["n_before"].to_list() == [4] and r3["n_after"].to_list() == [5]
    widths = dict(zip(r2["frame_index"], r2["interval_width_before"], strict=True))
    assert (
        widths[0] == pytest.approx(90 - 10, abs=1e-9) and widths[2] != widths[2]
    )  # two ratings: their range; one: none
    assert all(r2["interval_width_after"][:2] < r2["interval_width_before"][:2])
    # after the last wave, each width is the published soft label's (mean_hi - mean_lo), the same ratings and order
    scores = image_scores(j, ["x"])
    soft = soft_labels_table(scores, j, ["x"], cfg).with_columns((pl.col("mean_hi") - pl.col("mean_lo")).alias("w"))
    last = dict(zip(soft["frame_index"], soft["w"], strict=True))
    assert r3["interval_width_after"][0] == pytest.approx(last[0], abs=1e-9)
    assert r2.filter(pl.col("frame_index") > 0)["interval_width_after"].to_list() == pytest.approx([last[1], last[2]])

    summary = narrowing_summary(per_item, j)
    assert [s["wave"] for s in summary] == ["round2", "round3"]
    s2 = summary[0]
    assert (s2["ratings"], s2["items"], s2["compared"], s2["narrower"], s2["first_interval"]) == (9, 3, 2, 2, 1)
    assert s2["median_before"] == pytest.approx(float(np.median(r2["interval_width_before"][:2].to_numpy())))
    line = summary_line(s2)
    assert line.startswith("round2 added 9 ratings to 3 images") and "narrower for 2 of 2" in line
    assert "1 had too few ratings for an interval before" in line
    md = waves_markdown(per_item, summary, strategy="interval_width")
    assert line in md and "| round3 | v_0 | a parade | A | 4 | 5 |" in md and "| none |" in md


def test_one_wave_has_no_narrowing():
    from squidflow.judgments.waves import narrowing, narrowing_summary
    from squidflow.statistics.intervals import IntervalConfig

    j = _three_waves().filter(pl.col("wave") == "first")
    per_item = narrowing(j, IntervalConfig.from_config(INTERVALS))
    assert per_item.is_empty() and narrowing_summary(per_item, j) == []
