"""The GuessWhat?! litmus test's pieces on small hand-made inputs: question types, the rules R1-R3 on their
boundaries, the worked example, the games reader's errors, the human sample check, probability files, the metrics
against hand computations, and the guessers."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from helpers.floats import assert_floats_close

from squidflow.contracts import io
from squidflow.demo import litmus as demo
from squidflow.litmus import human, metrics, probabilities, soft_labels, tables
from squidflow.litmus.config import GuesserConfig
from squidflow.litmus.games import GameFileError, GameSource, read_games, source_of, split_of
from squidflow.litmus.guessers import spatial_features, train_guesser
from squidflow.litmus.questions import SPATIAL_FORMS, classify
from squidflow.litmus.soft_labels import Boxes, normalise, reference_sets, rule_r1, rule_r2, rule_r3

W = H = 100.0


# ---------------------------------------------------------------------------------------------- question types
LABELLED_QUESTIONS = [
    ("Is it a person?", "category", "person"),
    ("is it a man?", "category", "person"),
    ("people?", "category", "person"),
    ("is it an animal?", "category", "animal"),
    ("is it one of the dogs?", "category", "dog"),
    ("is it a teddy bear?", "category", "teddy bear"),
    ("is it a bear?", "category", "bear"),
    ("is it food?", "category", "food"),
    ("is it a piece of furniture?", "category", "furniture"),
    ("is it a hot dog?", "category", "hot dog"),
    ("is it a sofa?", "category", "couch"),
    ("is it on the left?", "spatial", "left"),
    ("is it on the left side of the picture?", "spatial", "left"),
    ("Is it in the left half of the picture?", "spatial", "left_half"),
    ("left picture?", "spatial", "left_half"),
    ("is it in the right half?", "spatial", "right_half"),
    ("is it at the bottom?", "spatial", "bottom"),
    ("is it in the top half?", "spatial", "top"),
    ("is it in the upper part of the image?", "spatial", "top"),
    ("is it in the middle?", "spatial", "middle"),
    ("is it in the center of the picture?", "spatial", "middle"),
    ("is it in the top right corner?", "spatial", "top_right"),
    ("lower left?", "spatial", "bottom_left"),
    ("is it the person on the left?", "other", None),
    ("is it red?", "other", None),
    ("is it a cat or a dog?", "other", None),
    ("is it something you can eat?", "other", None),
    ("is it the leftmost?", "other", None),
    ("is it the middle left one?", "other", None),
    ("is it in the middle of the table?", "other", None),
    ("", "other", None),
]


@pytest.mark.parametrize(
    ("question", "qtype", "form"), LABELLED_QUESTIONS, ids=[q[0] or "empty" for q in LABELLED_QUESTIONS]
)
def test_question_types_of_a_labelled_sample(question: str, qtype: str, form: str | None) -> None:
    t = classify(question)
    assert (t.question_type, t.form) == (qtype, form)


def test_a_super_category_refers_to_its_coco_categories() -> None:
    assert set(classify("is it a vehicle?").categories) == {
        "bicycle",
        "car",
        "motorcycle",
        "airplane",
        "bus",
        "train",
        "truck",
        "boat",
    }
    assert classify("is it a kid?").categories == ("person",)


# ---------------------------------------------------------------------------------------------- soft labels
def test_worked_example_of_figure_3_right() -> None:
    """Sums 0, 3, 0, 3, 1 give 0, .4286, 0, .4286, .1429 — from real boxes on a "left? yes" question too."""
    assert np.round(normalise([0, 3, 0, 3, 1]), 4).tolist() == [0, 0.4286, 0, 0.4286, 0.1429]
    boxes = [[60, 10, 30, 20], [5, 10, 25, 20], [70, 10, 25, 20], [10, 10, 30, 20], [41, 10, 16, 20]]
    one_question = np.full(len(boxes), "left", dtype=object), np.full(len(boxes), "yes", dtype=object)
    rs = reference_sets(Boxes.of(boxes, W, H), *one_question)
    assert (rs["r1"] + rs["r2"] + rs["r3"]).tolist() == [0, 3, 0, 3, 1]
    assert np.round(normalise(rs["r1"] + rs["r2"] + rs["r3"]), 4).tolist() == [0, 0.4286, 0, 0.4286, 0.1429]


def test_softmax_normalisation_is_the_papers_wording() -> None:
    soft = normalise([0, 3, 0, 3, 1], "softmax")
    e = np.exp([0, 3, 0, 3, 1])
    assert_floats_close(soft, e / e.sum(), terms=len(e))
    assert np.isnan(normalise([0, 0, 0])).all()  # nothing to ground: no soft label
    with pytest.raises(ValueError, match="normalisation"):
        normalise([1, 2], "max")


def member(rule, box, form, w=W, h=H) -> bool:
    return bool(rule(Boxes.of([box], w, h), np.array([form], dtype=object))[0])


def test_r1_left_right_need_more_than_80_percent() -> None:
    exactly_80 = [30, 0, 25, 10]  # 20 of its 25 px wide in the left half
    assert not member(rule_r1, exactly_80, "left")
    assert member(rule_r1, [31, 0, 20, 10], "left")  # 19/20 = 95%
    assert not member(rule_r1, [45, 0, 25, 10], "right")  # 20/25 = exactly 80% on the right
    assert member(rule_r1, [46, 0, 25, 10], "right")  # 21/25 = 84%
    assert member(rule_r1, [31, 0, 20, 10], "left_half")  # R1 treats "left half" like "left"


def test_r1_top_bottom_and_the_answer_no() -> None:
    exactly_80 = [0, 30, 10, 25]
    assert not member(rule_r1, exactly_80, "top")
    assert member(rule_r1, [0, 31, 10, 20], "top")
    assert member(rule_r1, [0, 55, 10, 20], "bottom")
    rs = soft_labels.reference_sets(
        Boxes.of([exactly_80, [0, 31, 10, 20]], W, H), np.array(["top", "top"], object), np.array(["no", "no"], object)
    )
    assert rs["r1"].tolist() == [1, 0]  # "is it at the top? no" keeps what R1 does not call top


def test_r1_middle_needs_half_the_box_inside_the_central_band_both_ways() -> None:
    # 20 of 40 px inside [25, 75] horizontally and vertically: exactly 50% both ways is in the middle
    assert member(rule_r1, [5, 5, 40, 40], "middle")
    assert not member(rule_r1, [4, 5, 40, 40], "middle")  # 19/40 horizontally
    assert not member(rule_r1, [5, 4, 40, 40], "middle")  # 19/40 vertically


def test_quadrants_need_the_whole_box_in_r1_and_r2() -> None:
    touching = [10, 10, 40, 40]  # right and bottom edges exactly on the midlines
    for rule in (rule_r1, rule_r2):
        assert member(rule, touching, "top_left")
        assert not member(rule, [10, 10, 41, 40], "top_left")
        assert member(rule, [50, 50, 10, 10], "bottom_right")
        assert not member(rule, touching, "top_right")


def test_r2_left_half_needs_two_thirds_and_plain_left_also_the_outer_40_percent() -> None:
    two_thirds = [30, 0, 30, 10]  # 20 of 30 px in the left half, left edge at 30 (inside the leftmost 40%)
    assert member(rule_r2, two_thirds, "left_half")
    assert member(rule_r2, two_thirds, "left")
    assert not member(rule_r2, [30.5, 0, 30, 10], "left_half")  # 19.5/30 < 2/3
    near_middle = [40, 0, 15, 10]  # 10/15 = 2/3 in the left half, but no part in the leftmost 40%
    assert member(rule_r2, near_middle, "left_half")
    assert not member(rule_r2, near_middle, "left")
    assert member(rule_r2, [39.9, 0, 15, 10], "left")
    right = [40, 0, 30, 10]  # 20/30 on the right, right edge at 70 > 60
    assert member(rule_r2, right, "right") and member(rule_r2, right, "right_half")
    assert not member(rule_r2, [45, 0, 15, 10], "right")  # right edge at 60: no part in the rightmost 40%
    assert member(rule_r2, [45, 0, 15, 10], "right_half")


def test_r2_top_bottom_need_75_percent() -> None:
    assert member(rule_r2, [0, 35, 10, 20], "top")  # 15/20 = exactly 75%
    assert not member(rule_r2, [0, 36, 10, 20], "top")
    assert member(rule_r2, [0, 45, 10, 20], "bottom")
    assert not member(rule_r1, [0, 35, 10, 20], "top")  # R1 is stricter


def test_r2_middle_needs_the_whole_box_in_the_middle_band_one_way() -> None:
    assert member(rule_r2, [25, 0, 50, 100], "middle")  # exactly the band horizontally, all the height
    assert member(rule_r2, [0, 30, 100, 40], "middle")  # vertically
    assert not member(rule_r2, [24, 0, 50, 100], "middle")
    assert member(rule_r1, [25, 0, 50, 100], "middle")  # R1: exactly 50% inside vertically is enough
    assert member(rule_r2, [25, 0, 50, 104], "middle") and not member(rule_r1, [25, 0, 50, 104], "middle")


def test_r3_uses_the_centroid_and_a_centroid_on_the_midline_is_neither_side() -> None:
    on_midline = [40, 0, 20, 10]  # centroid x = 50
    assert not member(rule_r3, on_midline, "left") and not member(rule_r3, on_midline, "right")
    assert member(rule_r3, [39, 0, 20, 10], "left") and member(rule_r3, [41, 0, 20, 10], "right")
    rs = soft_labels.reference_sets(Boxes.of([on_midline], W, H), np.array(["left"], object), np.array(["no"], object))
    assert rs["r3"].tolist() == [1]  # "not on the left": the centred object stays a candidate
    on_horizontal_midline = [0, 40, 10, 20]
    assert not member(rule_r3, on_horizontal_midline, "top") and not member(rule_r3, on_horizontal_midline, "bottom")
    assert member(rule_r3, [20, 20, 10, 10], "middle")  # centroid (25, 25): on the band's edge
    assert not member(rule_r3, [19, 20, 10, 10], "middle")
    assert member(rule_r3, [10, 60, 20, 20], "bottom_left")
    assert not member(rule_r3, [40, 60, 20, 20], "bottom_left")  # centroid on the vertical midline


def test_a_form_the_rules_do_not_know_is_in_no_reference_set() -> None:
    assert not member(rule_r1, [0, 0, 10, 10], None)


# ---------------------------------------------------------------------------------------------- games files
def game(gid: int, question: str | None, answer: str = "Yes", objects=None, target: int | None = None) -> dict:
    objects = objects or [
        {"id": 1, "category": "person", "category_id": 1, "bbox": [5, 10, 25, 20]},
        {"id": 2, "category": "dog", "category_id": 18, "bbox": [60, 10, 30, 20]},
        {"id": 3, "category": "person", "category_id": 1, "bbox": [41, 10, 16, 20]},
    ]
    qas = [] if question is None else [{"question": question, "answer": answer, "id": gid * 10}]
    return {
        "id": gid,
        "image": {"id": gid, "width": 100, "height": 100},
        "objects": objects,
        "object_id": target or objects[0]["id"],
        "status": "success",
        "qas": qas,
    }


def write_lines(path: Path, lines: list, *, gz: bool = True) -> Path:
    text = "".join((ln if isinstance(ln, str) else json.dumps(ln)) + "\n" for ln in lines)
    if gz:
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    return path


def test_reader_keeps_every_game_with_its_first_turn(tmp_path: Path) -> None:
    train = write_lines(
        tmp_path / "guesswhat.train.jsonl.gz", [game(1, "is it a person?"), game(2, "red?", "N/A"), game(3, None)]
    )
    test = write_lines(tmp_path / "guesswhat.test.jsonl", [game(4, "is it on the left?", "No")], gz=False)
    games = read_games([GameSource(str(train), "train"), GameSource(str(test), "test")])
    assert games["game_id"].to_list() == [1, 2, 3, 4]
    assert games["answer"].to_list() == ["yes", "n/a", None, "no"]
    assert games["n_turns"].to_list() == [1, 1, 0, 1]
    assert games["split"].to_list() == ["train", "train", "train", "test"]
    assert games["objects"][0][1] == {
        "object_id": 2,
        "category": "dog",
        "category_id": 18,
        "bbox": {"left": 60.0, "top": 10.0, "width": 30.0, "height": 20.0},
    }


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("{not json", "not valid JSON"),
        ({**game(1, "q?"), "objects": [{"id": 1, "category": "person", "bbox": [1, 2, 3]}]}, "objects[0].bbox"),
        ({**game(1, "q?"), "object_id": 99}, "object_id"),
        ({**game(1, "q?"), "image": {"width": 100}}, "image.height"),
        ({**game(1, "q?"), "qas": [{"question": "q?", "answer": "maybe", "id": 1}]}, "qas[0].answer"),
        ({k: v for k, v in game(1, "q?").items() if k != "status"}, "status"),
        ({**game(1, "q?"), "id": "one"}, "'id'"),
    ],
    ids=["json", "bbox", "target", "height", "answer", "status", "id"],
)
def test_a_bad_line_names_the_file_the_line_and_the_field(tmp_path: Path, line, field: str) -> None:
    path = write_lines(tmp_path / "guesswhat.valid.jsonl.gz", [game(7, "is it a dog?"), line])
    with pytest.raises(GameFileError) as err:
        read_games([GameSource(str(path), "valid", name="my/guesswhat.valid.jsonl.gz")])
    assert "my/guesswhat.valid.jsonl.gz, line 2" in str(err.value) and field in str(err.value)


def test_a_game_id_in_two_files_is_an_error(tmp_path: Path) -> None:
    a = write_lines(tmp_path / "guesswhat.train.jsonl.gz", [game(1, "q?")])
    b = write_lines(tmp_path / "guesswhat.test.jsonl.gz", [game(1, "q?")])
    with pytest.raises(GameFileError, match="repeats game id 1"):
        read_games([GameSource(str(a), "train"), GameSource(str(b), "test")])


def test_the_split_comes_from_the_entry_or_the_official_file_name() -> None:
    assert split_of("https://florian-strub.com/guesswhat.valid.jsonl.gz") == "valid"
    assert source_of({"path": "/data/games.jsonl", "split": "test"}) == ("/data/games.jsonl", "test")
    with pytest.raises(GameFileError, match="split"):
        split_of("/data/games.jsonl")


def labelled(tmp_path: Path, games_list: list[dict], normalisation: str = "sum") -> tuple[pl.DataFrame, pl.DataFrame]:
    path = write_lines(tmp_path / "guesswhat.test.jsonl.gz", games_list)
    games = read_games([GameSource(str(path), "test")])
    return games, soft_labels.label_games(games, normalisation)


def test_label_games_per_question_type(tmp_path: Path) -> None:
    games, labels = labelled(
        tmp_path,
        [
            game(1, "is it a person?", "No"),
            game(2, "is it on the left?", "Yes"),
            game(3, "is it red?"),
            game(4, "is it a dog?", "N/A"),
            game(5, "is it a car?", "Yes"),
        ],
    )
    assert labels["game_id"].unique().sort().to_list() == [1, 2, 3, 5]  # N/A left out
    g1 = labels.filter(pl.col("game_id") == 1)
    assert g1["soft_label"].to_list() == [0.0, 1.0, 0.0] and g1["r1"].is_null().all()
    assert g1["in_reference_set"].to_list() == [False, True, False]
    g2 = labels.filter(pl.col("game_id") == 2)
    assert g2["r1"].to_list() == [1, 0, 0] and g2["r3"].to_list() == [1, 0, 1]
    assert np.allclose(g2["soft_label"].to_numpy(), [0.75, 0, 0.25])
    assert g2["in_reference_set"].to_list() == [True, False, True]  # in at least one rule's set
    assert labels.filter(pl.col("game_id") == 3)["soft_label"].is_null().all()
    assert labels.filter(pl.col("game_id") == 5)["soft_label"].is_null().all()  # no car among the candidates
    assert labels.filter(pl.col("game_id") == 1)["is_target"].to_list() == [True, False, False]
    _, soft = labelled(tmp_path, [game(2, "is it on the left?", "Yes")], "softmax")
    e = np.exp([3.0, 0.0, 1.0])
    assert_floats_close(soft["soft_label"].to_numpy(), e / e.sum(), terms=len(e))


def test_rules_accuracy_on_the_target(tmp_path: Path) -> None:
    games, labels = labelled(
        tmp_path,
        [
            game(1, "is it on the left?", "Yes", target=1),  # target 1 in every rule's set
            game(2, "is it on the left?", "Yes", target=3),  # target 3: only R3 (centroid 49)
        ],
    )
    acc = {r["rules"]: r["target_accuracy"] for r in soft_labels.rules_accuracy(labels).iter_rows(named=True)}
    assert acc["R1"] == 0.5 and acc["R2"] == 0.5 and acc["R3"] == 1.0 and acc["R1 ∪ R2"] == 0.5
    counts = tables.question_counts(games, labels)
    assert counts.row(0, named=True)["spatial_yes"] == 2


def test_question_counts_carry_a_bootstrap_interval_over_games() -> None:
    from squidflow.statistics.intervals import IntervalConfig

    table = pl.DataFrame(
        {"split": ["test", "train"], "games": [200, 10], "category_yes": [50, 10], "spatial_no": [0, 3]}
    )
    out = tables.count_intervals(table, IntervalConfig(0.95, 2000, 0, "percentile"))
    test, train = out.row(0, named=True), out.row(1, named=True)
    # a share of 1/4 of 200 games: binomial sd sqrt(200 * .25 * .75) = 6.1, so about 50 ± 12
    assert 36 <= test["category_yes_lo"] <= 40 and 60 <= test["category_yes_hi"] <= 64
    assert (test["spatial_no_lo"], test["spatial_no_hi"]) == (0, 0)  # none in any resample
    assert (train["category_yes_lo"], train["category_yes_hi"]) == (10, 10)  # every game: every resample
    assert train["spatial_no_lo"] < 3 < train["spatial_no_hi"]
    assert "games_lo" not in out.columns
    md = tables.markdown(out, title="counts")
    assert "| 50 [" in md and "| 200 |" in md


# ---------------------------------------------------------------------------------------------- metrics
def rows(entries: list[tuple]) -> pl.DataFrame:
    """(game, object, type, answer, is_target, in_rs, soft, probability) -> soft-label rows joined with probabilities."""
    cols = [
        "game_id",
        "object_id",
        "question_type",
        "answer",
        "is_target",
        "in_reference_set",
        "soft_label",
        "probability",
    ]
    return pl.DataFrame([dict(zip(cols, e, strict=True)) for e in entries])


HAND = rows(
    [
        # game 1: category yes, RS = {1, 2}; target 1 ties with object 2 at the top
        (1, 1, "category", "yes", True, True, 0.5, 0.4),
        (1, 2, "category", "yes", False, True, 0.5, 0.4),
        (1, 3, "category", "yes", False, False, 0.0, 0.2),
        # game 2: category no, RS = {5}; the target wins; object 4 sits exactly on τ = 0.01
        (2, 4, "category", "no", False, False, 0.0, 0.01),
        (2, 5, "category", "no", True, True, 1.0, 0.98),
        (2, 6, "category", "no", False, False, 0.0, 0.01),
        # game 3: spatial yes, every object in some rule's set (empty complement set); target loses
        (3, 7, "spatial", "yes", True, True, 0.25, 0.3),
        (3, 8, "spatial", "yes", False, True, 0.75, 0.7),
    ]
)


def test_metrics_equal_a_hand_computation() -> None:
    soft = HAND.drop("probability").with_columns(pl.lit("test").alias("split"))
    m = metrics.litmus_metrics(soft, HAND.select("game_id", "object_id", "probability"), [0.01, 0.3])

    def value(qtype, answer, metric, tau=None):
        sel = m.filter((pl.col("question_type") == qtype) & (pl.col("answer") == answer) & (pl.col("metric") == metric))
        sel = sel.filter(pl.col("tau").is_null() if tau is None else pl.col("tau") == tau)
        assert sel.height == 1
        return sel.row(0, named=True)

    assert value("category", "yes", "accuracy")["value"] == 0.5  # a two-way tie at the top counts 1/2
    assert value("category", "no", "accuracy")["value"] == 1.0
    assert value("category", "all", "accuracy")["value"] == 0.75
    assert value("spatial", "yes", "accuracy")["value"] == 0.0
    x = [0.4, 0.4, 0.2, 0.01, 0.98, 0.01]
    y = [0.5, 0.5, 0.0, 0.0, 1.0, 0.0]
    assert value("category", "all", "pearson_r")["value"] == pytest.approx(np.corrcoef(x, y)[0, 1])
    assert value("spatial", "yes", "pearson_r")["value"] == pytest.approx(1.0)
    # τ = 0.01: game 1 RS (0.4, 0.4) > τ; game 2 RS (0.98) > τ; game 2 CS (0.01, 0.01) is not < τ: a tie grounds neither
    assert value("category", "all", "wg_rs", 0.01)["value"] == 1.0
    assert value("category", "no", "wg_cs", 0.01)["value"] == 0.0
    assert value("category", "yes", "wg_cs", 0.01)["value"] == 0.0  # 0.2 is not below 0.01
    assert value("category", "yes", "wg_cs", 0.3)["value"] == 1.0
    assert value("category", "yes", "wg_rs", 0.3)["value"] == 1.0
    assert value("category", "no", "wg_cs", 0.3)["value"] == 1.0
    assert value("category", "all", "wg_rs", 0.3)["n"] == 2
    # the spatial QA pair has no complement set: not counted
    assert value("spatial", "yes", "wg_cs", 0.3)["n"] == 0 and value("spatial", "yes", "wg_cs", 0.3)["value"] is None
    cs = value("category", "all", "cs_prob_mean")
    assert cs["value"] == pytest.approx((0.2 + 0.01) / 2) and cs["n"] == 2
    assert value("category", "all", "cs_prob_std")["value"] == pytest.approx(np.std([0.2, 0.01]))


def test_pearson_is_nan_when_undefined() -> None:
    assert np.isnan(metrics.pearson([1, 1, 1], [0, 1, 2]))
    assert np.isnan(metrics.pearson([1], [1]))
    assert metrics.pearson([1, 2, 3], [2, 4, 6.5]) == pytest.approx(np.corrcoef([1, 2, 3], [2, 4, 6.5])[0, 1])


def test_tables_average_seeds_and_keep_their_spread() -> None:
    soft = HAND.drop("probability").with_columns(pl.lit("test").alias("split"))
    probs = HAND.select("game_id", "object_id", "probability")
    flipped = probs.with_columns(  # seed 1 puts game 2's mass on a complement-set object: the target loses
        pl.when(pl.col("object_id") == 4)
        .then(0.98)
        .when(pl.col("object_id") == 5)
        .then(0.01)
        .otherwise(pl.col("probability"))
        .alias("probability")
    )
    runs = [
        probs.with_columns(pl.lit("M").alias("model"), pl.lit(0).alias("seed")),
        flipped.with_columns(pl.lit("M").alias("model"), pl.lit(1).alias("seed")),
    ]
    m = metrics.metrics_of_models(soft, runs, [0.01])
    corr, grounding = tables.litmus_tables(m, ["M"])
    row = corr.filter((pl.col("question_type") == "category") & (pl.col("answer") == "no")).row(0, named=True)
    assert (
        row["n_seeds"] == 2 and row["accuracy"] == 0.5 and row["accuracy_sd"] == pytest.approx(np.std([1, 0], ddof=1))
    )
    md = tables.markdown(corr, title="T")
    assert "50.0 ± 70.7" in md
    assert set(grounding["tau"].to_list()) == {0.01}


# ---------------------------------------------------------------------------------------------- human sample check
def test_human_sample_check_by_hand(tmp_path: Path) -> None:
    games, labels = labelled(tmp_path, [game(1, "is it a person?", "Yes"), game(2, "is it on the left?", "Yes")])
    csv = tmp_path / "human.csv"
    csv.write_text("qa_id,annotator,selected_object_ids\n10,a,1 3\n10,b,1;3\n10,c,3 1\n20,a,1\n20,b,1 3\n20,c,1 3\n")
    annotations = human.read_annotations(csv, games)
    check = {r["question_type"]: r for r in human.sample_check(annotations, games, labels).iter_rows(named=True)}
    assert check["category"]["full_agreement"] == 1.0 and check["category"]["pearson_r"] == pytest.approx(1.0)
    assert check["spatial"]["full_agreement"] == 0.0
    # human votes 3, 0, 2 -> .6, 0, .4 against the rules' .75, 0, .25
    assert check["spatial"]["pearson_r"] == pytest.approx(np.corrcoef([0.6, 0, 0.4], [0.75, 0, 0.25])[0, 1])


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("99,a,1\n", "line 2: column 'qa_id' = 99 is not the first turn"),
        ("10,a,1 7\n", "line 2: column 'selected_object_ids' has object 7, which is not a candidate of game 1"),
        ("10,a,1\n10,a,3\n", "line 3: annotator 'a' annotated QA 10 already on line 2"),
        ("ten,a,1\n", "line 2: column 'qa_id' = 'ten' is not an integer"),
    ],
    ids=["unknown-qa", "not-a-candidate", "duplicate", "not-an-int"],
)
def test_bad_annotations_name_the_line(tmp_path: Path, body: str, message: str) -> None:
    games, _ = labelled(tmp_path, [game(1, "is it a person?")])
    csv = tmp_path / "human.csv"
    csv.write_text("qa_id,annotator,selected_object_ids\n" + body)
    with pytest.raises(human.AnnotationError, match=message):
        human.read_annotations(csv, games)


# ---------------------------------------------------------------------------------------------- probability files
def test_probability_files_in_three_formats(tmp_path: Path) -> None:
    games, _ = labelled(tmp_path, [game(1, "is it a person?"), game(2, "is it red?")])
    df = pl.DataFrame({"game_id": [1, 1, 1], "object_id": [1, 2, 3], "probability": [0.5, 0.25, 0.25]})
    df.write_csv(tmp_path / "p.csv")
    df.write_parquet(tmp_path / "p.parquet")
    df.write_ndjson(tmp_path / "p.jsonl")
    for name in ("p.csv", "p.parquet", "p.jsonl"):
        out = probabilities.read_probabilities(tmp_path / name, games, model="LXMERT")
        assert out["probability"].to_list() == [0.5, 0.25, 0.25] and (out["model"] == "LXMERT").all()


@pytest.mark.parametrize(
    ("csv", "message"),
    [
        ("game_id,object_id,probability\n1,1,0.5\n1,2,0.25\n1,3,0.2\n", "row 1: game 1's probabilities sum to 0.9500"),
        ("game_id,object_id,probability\n1,1,0.5\n1,2,0.5\n", "row 1: game 1 has probabilities for 2 of its 3"),
        ("game_id,object_id,probability\n1,1,1.0\n1,2,0\n1,3,0\n3,1,1\n", "row 4: game 3 is not in litmus.games"),
        ("game_id,object_id,probability\n1,1,1.5\n", "row 1: probability 1.5 is outside"),
        ("game_id,object_id,probability\n1,1,x\n", "row 1: column 'probability' = 'x' is not a number"),
        ("game_id,object_id,probability\n1,9,1\n", "row 1: object 9 is not a candidate of game 1"),
        ("game_id,object,probability\n1,1,1\n", "missing column"),
    ],
    ids=["sum", "incomplete", "unknown-game", "range", "number", "candidate", "column"],
)
def test_bad_probability_files_name_the_row(tmp_path: Path, csv: str, message: str) -> None:
    games, _ = labelled(tmp_path, [game(1, "is it a person?")])
    path = tmp_path / "p.csv"
    path.write_text(csv)
    with pytest.raises(probabilities.ProbabilityFileError, match=message):
        probabilities.read_probabilities(path, games, model="M", name="my.csv")


# ---------------------------------------------------------------------------------------------- guessers and demo
def test_spatial_features_are_the_guesswhat_baseline_ones() -> None:
    # COCO box [left 10, top 20, width 30, height 40] in a 100 x 200 image; y measured upwards
    f = spatial_features([10], [20], [30], [40], 100, 200)[0]
    x_left, x_right = 0.1 * 2 - 1, 0.4 * 2 - 1
    y_upper, y_lower = 180 / 200 * 2 - 1, 140 / 200 * 2 - 1
    assert np.allclose(
        f, [x_left, y_lower, x_right, y_upper, (x_left + x_right) / 2, (y_lower + y_upper) / 2, 0.6, 0.4]
    )


def test_demo_games_are_read_by_the_reader_and_say_they_are_synthetic(tmp_path: Path) -> None:
    train, test = tmp_path / "guesswhat.train.jsonl.gz", tmp_path / "guesswhat.test.jsonl.gz"
    train_games, test_games = demo.demo_games(train_games=30, test_games=10, target_area_bias=1.0, seed=0)
    io.write_json_lines(train, train_games)
    io.write_json_lines(test, test_games)
    with gzip.open(train, "rt") as fh:
        first = json.loads(fh.readline())
    assert first["synthetic"] is True and first["image"]["file_name"].startswith("SYNTHETIC_")
    games = read_games([GameSource(str(train), "train"), GameSource(str(test), "test")])
    assert games.group_by("split").len().sort("split")["len"].to_list() == [10, 30]
    again = tmp_path / "again.jsonl.gz"
    io.write_json_lines(again, demo.synthetic_games(30, split="train", seed=0, target_area_bias=1.0))
    assert gzip.open(again).read() == gzip.open(train).read()  # the same seed gives the same games


def test_guessers_train_and_give_a_distribution_per_game(tmp_path: Path) -> None:
    train, test = tmp_path / "guesswhat.train.jsonl.gz", tmp_path / "guesswhat.test.jsonl.gz"
    train_games, test_games = demo.demo_games(train_games=60, test_games=20, target_area_bias=1.0, seed=0)
    io.write_json_lines(train, train_games)
    io.write_json_lines(test, test_games)
    games = read_games([GameSource(str(train), "train"), GameSource(str(test), "test")])
    labels = soft_labels.label_games(games)
    cfg = GuesserConfig(epochs=2, batch_size=16, word_dim=8, hidden_dim=16, category_dim=4)
    for method in ("STL-CE", "MTL-KL"):
        probs, lines = train_guesser(games, labels, method=method, seed=0, cfg=cfg)
        again, _ = train_guesser(games, labels, method=method, seed=0, cfg=cfg)
        assert probs.equals(again)  # a seed fixes initialisation and batch order
        evaluated = games.filter((pl.col("split") == "test") & pl.col("answer").is_in(["yes", "no"]))
        assert set(probs["game_id"]) == set(evaluated["game_id"])
        sums = probs.group_by("game_id").agg(pl.col("probability").sum())["probability"]
        assert_floats_close(
            sums.to_numpy(),
            np.ones(len(sums)),
            dtype=np.float32,
            terms=int(probs["game_id"].value_counts()["count"].max()),
            scale=1.0,
        )
        assert len(lines) == 1 + cfg.epochs
    with pytest.raises(ValueError, match="not one of"):
        train_guesser(games, labels, method="CE", seed=0, cfg=cfg)


@pytest.mark.parametrize("form", SPATIAL_FORMS)
def test_every_rule_and_form_splits_the_candidates_and_a_no_inverts_it(form: str) -> None:
    rng = np.random.default_rng(0)
    corners = rng.uniform(0, 70, (200, 2))
    boxes = Boxes.of(np.hstack([corners, rng.uniform(1, 30, (200, 2))]), W, H)
    forms = np.full(200, form, dtype=object)
    yes = soft_labels.reference_sets(boxes, forms, np.full(200, "yes", dtype=object))
    no = soft_labels.reference_sets(boxes, forms, np.full(200, "no", dtype=object))
    for rule in soft_labels.SPATIAL_RULES:
        assert 0 < yes[rule].sum() < 200, f"{rule} {form}: puts all or none of 200 random boxes in the set"
        assert ((yes[rule] + no[rule]) == 1).all()


# ---------------------------------------------------------------------------------------------- intervals (issue 24)
def random_litmus(seed: int = 0, n: int = 40) -> tuple[pl.DataFrame, pl.DataFrame]:
    """n labelled first turns (category/spatial, yes/no) with soft labels and one model's probabilities."""
    rng = np.random.default_rng(seed)
    entries = []
    for g in range(n):
        k, target = int(rng.integers(3, 7)), None
        soft, prob = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        target = int(rng.integers(k))
        for o in range(k):
            entries.append(
                (
                    g,
                    o,
                    "category" if g % 2 else "spatial",
                    "yes" if g % 3 else "no",
                    o == target,
                    bool(soft[o] > 0.15),
                    float(soft[o]),
                    float(prob[o]),
                )
            )
    r = rows(entries)
    return r.drop("probability").with_columns(pl.lit("test").alias("split")), r.select(
        "game_id", "object_id", "probability"
    )


def test_weighted_metrics_equal_the_metrics_of_the_resample_written_out() -> None:
    """Every litmus metric's weighted form (the bootstrap's) equals litmus_metrics on the resample written out, QA
    pairs drawn twice copied under new game ids."""
    soft, probs = random_litmus()
    taus = [0.1, 0.3]
    rows_ = metrics._scored_rows(soft, probs)
    sums = metrics.qa_sums(rows_, metrics.per_qa(rows_, taus), taus)
    columns = [c for c in sums.columns if c not in ("game_id", "question_type", "answer")]
    rng = np.random.default_rng(1)
    draw = [int(q) for q in rng.integers(0, sums.height, sums.height)]
    weights = np.bincount(draw, minlength=sums.height)[None].astype(float)
    copies = pl.concat(
        [
            soft.filter(pl.col("game_id") == sums["game_id"][q]).with_columns(pl.lit(1000 * k + q).alias("game_id"))
            for k, q in enumerate(draw)
        ]
    )
    copy_probs = pl.concat(
        [
            probs.filter(pl.col("game_id") == sums["game_id"][q]).with_columns(pl.lit(1000 * k + q).alias("game_id"))
            for k, q in enumerate(draw)
        ]
    )
    expected = metrics.litmus_metrics(copies, copy_probs, taus)
    for qtype, answer, keep in metrics._groups():
        member = sums.select(keep.alias("k"))["k"].to_numpy()
        got = metrics.weighted_metrics(sums.select(columns).to_numpy()[member], columns, weights[:, member], taus)
        for (metric, tau), values in got.items():
            sel = expected.filter(
                (pl.col("question_type") == qtype)
                & (pl.col("answer") == answer)
                & (pl.col("metric") == metric)
                & (pl.col("tau").is_null() if tau is None else pl.col("tau") == tau)
            )
            want = sel["value"][0] if sel.height else None
            if want is None:
                assert np.isnan(values[0]), (qtype, answer, metric, tau)
            else:
                assert values[0] == pytest.approx(want, abs=1e-9), (qtype, answer, metric, tau)


def test_litmus_tables_have_intervals_over_qa_pairs_that_bracket_the_seed_mean() -> None:
    from squidflow.statistics.intervals import IntervalConfig

    soft, probs = random_litmus(2, 60)
    rng = np.random.default_rng(3)
    runs = [
        probs.with_columns(
            pl.lit("M").alias("model"),
            pl.lit(s).alias("seed"),
            (pl.col("probability") + rng.uniform(0, 0.05, probs.height)).alias("probability"),
        )
        for s in range(3)
    ]
    taus = [0.1]
    m = metrics.metrics_of_models(soft, runs, taus)
    cfg = IntervalConfig(resamples=300, seed=0)
    iv = metrics.metric_intervals(soft, runs, taus, cfg)
    corr, grounding = tables.litmus_tables(m, ["M"], iv)
    plain_corr, _ = tables.litmus_tables(m, ["M"])
    assert corr.select(plain_corr.columns).equals(plain_corr)  # the means and spreads do not move
    assert corr.columns[corr.columns.index("accuracy_sd") + 1 :][:2] == ["accuracy_lo", "accuracy_hi"]
    for table, cols in (
        (corr, ["accuracy", "pearson_r", "cs_prob_mean", "cs_prob_std"]),
        (grounding, ["wg_rs", "wg_cs"]),
    ):
        for c in cols:
            ok = table.filter(pl.col(c).is_not_null() & pl.col(c).is_not_nan())
            assert ((ok[f"{c}_lo"] <= ok[c] + 1e-12) & (ok[c] <= ok[f"{c}_hi"] + 1e-12)).all(), c
    row = corr.filter((pl.col("question_type") == "category") & (pl.col("answer") == "all")).row(0, named=True)
    assert row["accuracy_hi"] - row["accuracy_lo"] > 0.05
    md = tables.markdown(corr, title="T")
    assert (
        f"{100 * row['accuracy']:.1f} ± {100 * row['accuracy_sd']:.1f} "
        f"[{100 * row['accuracy_lo']:.1f}, {100 * row['accuracy_hi']:.1f}]"
    ) in md
    assert "accuracy_lo" not in md


def test_rules_and_human_check_intervals(tmp_path: Path) -> None:
    from squidflow.statistics.intervals import IntervalConfig

    cfg = IntervalConfig(resamples=200, seed=0)
    games, labels = labelled(
        tmp_path,
        [game(g, "is it on the left?", "Yes", target=1 + g % 3) for g in range(1, 13)]
        + [game(20 + g, "is it a person?", "Yes") for g in range(6)],
    )
    wide = tables.rules_table(labels, cfg)
    plain = tables.rules_table(labels)
    assert wide.select(plain.columns).equals(plain)
    rec = wide.row(0, named=True)
    for r in ("R1", "R2", "R3", "R1 ∪ R2 ∪ R3"):
        assert rec[f"{r}_lo"] <= rec[r] <= rec[f"{r}_hi"], r
    assert rec["R1_hi"] > rec["R1_lo"]  # the target is in R1's set for some QA pairs and not others
    csv = tmp_path / "human.csv"
    lines = ["qa_id,annotator,selected_object_ids"]
    for g in range(1, 13):
        lines += [f"{g * 10},a,1", f"{g * 10},b,{'1 3' if g % 2 else '1'}"]
    for g in range(6):
        lines += [f"{(20 + g) * 10},a,1", f"{(20 + g) * 10},b,1"]
    csv.write_text("\n".join(lines) + "\n")
    annotations = human.read_annotations(csv, games)
    check = human.sample_check(annotations, games, labels, intervals=cfg)
    spatial = check.filter(pl.col("question_type") == "spatial").row(0, named=True)
    assert spatial["full_agreement"] == 0.5 and spatial["full_agreement_lo"] < 0.5 < spatial["full_agreement_hi"]
    assert spatial["pearson_r_lo"] <= spatial["pearson_r"] <= spatial["pearson_r_hi"]
    category = check.filter(pl.col("question_type") == "category").row(0, named=True)
    assert category["full_agreement_lo"] == category["full_agreement_hi"] == 1.0  # everyone agrees in every resample
