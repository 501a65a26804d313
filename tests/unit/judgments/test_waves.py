"""The next round is its own wave (issue 47): named by its file (A_round2.json, batch_results_round2.csv) or its
config entry, never SQUID-E's repeat `round: 2`; Table 7 stays the first wave's, the image scores use every wave."""

from __future__ import annotations

import polars as pl

from squidflow.contracts import schemas
from squidflow.judgments.agreement import agreement_table
from squidflow.judgments.scores import image_scores
from squidflow.judgments.tables import table7
from squidflow.judgments.waves import first_wave, per_wave, wave_of


def test_a_files_name_says_its_wave():
    assert wave_of("results/judgments/label_studio/A_round2.json") == "round2"
    assert wave_of("mturk/batch_results_round3.csv") == "round3"
    assert wave_of("results/judgments/label_studio/A.json") == "first"
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
