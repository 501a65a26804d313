"""Sherlock's task metrics (Sherlock §4.1–4.3) on hand-computed cases and their defining properties."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from squidflow.comparison.metrics_sherlock import (
    assignment_accuracy,
    comparison_accuracy,
    localization_gt,
    localization_proposals,
    pairwise_accuracy,
    retrieval_chunk,
    retrieval_metrics,
)
from squidflow.comparison.metrics_sherlock.comparison import random_scores, tiebreak_noise
from squidflow.comparison.metrics_sherlock.localization import iou, region_iou
from squidflow.comparison.metrics_sherlock.report import evaluate
from squidflow.comparison.plausibility import DualEmbeddings
from squidflow.contracts import io, schemas


# --- retrieval ---------------------------------------------------------------------------------------------------
def test_retrieval_hand_computed_with_ties() -> None:
    s = np.array(
        [
            [0.9, 0.1, 0.2],  # true item best: rank 1
            [0.5, 0.3, 0.5],  # true 0.3 below two 0.5s: rank 3
            [0.4, 0.4, 0.4],  # three-way tie: average rank 2
        ]
    )
    m = retrieval_chunk(s)
    assert m["im2txt"] == pytest.approx((1 + 3 + 2) / 3)
    # columns: col0 true 0.9 rank 1; col1 true 0.3 vs 0.1, 0.4 -> rank 2; col2 true 0.4 vs 0.2, 0.5 -> rank 2
    assert m["txt2im"] == pytest.approx((1 + 2 + 2) / 3)
    assert m["p_at_1"] == pytest.approx(100 / 3)


def test_retrieval_constant_scores_get_the_middle_rank_not_rank_one() -> None:
    m = retrieval_chunk(np.zeros((5, 5)))
    assert m["im2txt"] == 3.0 and m["txt2im"] == 3.0 and m["p_at_1"] == 0.0


def test_retrieval_averages_over_chunks() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 8))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    chunks = np.repeat([0, 1], 20)
    perfect = retrieval_metrics(x, x, chunks)  # each region's own inference is its exact match
    assert perfect == {
        "im2txt": 1.0,
        "txt2im": 1.0,
        "p_at_1": 100.0,
        "n_chunks": 2,
        "per_chunk": [{"chunk": c, "n": 20, "im2txt": 1.0, "txt2im": 1.0, "p_at_1": 100.0} for c in (0, 1)],
    }
    shuffled = retrieval_metrics(x, x[rng.permutation(40)], chunks)
    assert shuffled["im2txt"] > 3


def test_retrieval_reports_each_chunk_and_their_mean() -> None:
    # chunk 3 (2 rows) is perfect; chunk 5 (3 rows) is constant: every rank is the middle one, 2
    region = np.array([[1.0, 0], [0, 1], [1, 1], [1, 1], [1, 1]])
    inference = np.array([[1.0, 0], [0, 1], [1, 1], [1, 1], [1, 1]])
    m = retrieval_metrics(region, inference, np.array([3, 3, 5, 5, 5]))
    assert m["per_chunk"] == [
        {"chunk": 3, "n": 2, "im2txt": 1.0, "txt2im": 1.0, "p_at_1": 100.0},
        {"chunk": 5, "n": 3, "im2txt": 2.0, "txt2im": 2.0, "p_at_1": 0.0},
    ]
    assert (m["im2txt"], m["txt2im"], m["p_at_1"], m["n_chunks"]) == (1.5, 1.5, 50.0, 2)


# --- localization ------------------------------------------------------------------------------------------------
def test_assignment_prefers_total_score_over_greedy() -> None:
    # greedy row-wise argmax would give region 0 -> inference 0 (0.9) and force region 1 -> inference 1 (0.1);
    # the linear assignment maximises the total: 0 -> 1 (0.8) + 1 -> 0 (0.85) = 1.65 > 1.0
    s = np.array([[0.9, 0.8], [0.85, 0.1]])
    assert assignment_accuracy(s) == 0.0
    assert assignment_accuracy(np.array([[0.9, 0.1], [0.2, 0.8]])) == 1.0


def test_localization_perfect_scores_give_100_and_macro_average() -> None:
    rng = np.random.default_rng(1)
    images = [np.eye(n) + rng.random((n, n)) * 0.5 for n in (2, 3, 5, 7)]
    assert localization_gt(images) == 100.0
    # one image fully right, one (3 regions) with two swapped: (1 + 1/3) / 2
    swapped = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1.0]])
    assert localization_gt([np.eye(2), swapped]) == pytest.approx(100 * (1 + 1 / 3) / 2)


def test_localization_with_proposals_uses_iou_above_half() -> None:
    assert iou((0, 0, 10, 10), (5, 0, 10, 10)) == pytest.approx(50 / 150)
    img1 = [(np.array([0.2, 0.9]), np.array([0.1, 0.7])), (np.array([0.9, 0.2]), np.array([0.5, 0.9]))]
    img2 = [(np.array([0.3, 0.1]), np.array([0.51, 0.0]))]
    # image 1: first right (IoU .7), second wrong (IoU exactly .5 is not > .5) -> 0.5; image 2: right -> 1
    assert localization_proposals([img1, img2]) == pytest.approx(75.0)
    # the oracle takes the proposal of highest IoU: image 1 both right (.7, .9), image 2 right (.51)
    assert localization_proposals([img1, img2], oracle=True) == 100.0


def test_constant_scores_localize_nothing_as_on_the_leaderboard() -> None:
    # lapjv (float32) breaks a constant matrix's ties by assigning no region its own inference
    for n in (2, 3, 5, 12):
        assert assignment_accuracy(np.zeros((n, n))) == 0.0
    assert assignment_accuracy(np.ones((1, 1))) == 1.0
    # scores equal in float32 are ties, as for the leaderboard: 1 + 1e-9 is 1.0 in float32
    assert assignment_accuracy(np.array([[1.0, 1.0], [1.0, 1.0 + 1e-9]])) == 0.0
    assert assignment_accuracy(np.array([[1.0, 1.0], [1.0, 1.0 + 1e-6]])) == 1.0


def test_region_iou_is_the_best_over_the_instance_boxes() -> None:
    assert region_iou((0, 0, 10, 10), [(100, 100, 5, 5), (5, 0, 10, 10)]) == pytest.approx(50 / 150)
    assert region_iou((0, 0, 10, 10), []) == 0.0


# --- comparison --------------------------------------------------------------------------------------------------
def test_pairwise_accuracy_hand_computed() -> None:
    label = np.array([1, 2, 3, 3])
    # pairs with different labels: (0,1) (0,2) (0,3) (1,2) (1,3) = 5; the model orders (1,3) wrongly
    pred = np.array([0.1, 0.5, 0.9, 0.4])
    assert pairwise_accuracy(pred, label) == pytest.approx((4 / 5 - 0.5) * 2)
    assert pairwise_accuracy(np.arange(4.0), np.ones(4)) == 0.0  # no informative pair


def test_ties_are_broken_by_fixed_noise_the_same_for_every_call() -> None:
    label = np.array([1, 3, 2, 1, 3])
    a = pairwise_accuracy(np.zeros(5), label)
    assert a == pairwise_accuracy(np.zeros(5), label)
    assert -1.0 <= a <= 1.0


def test_comparison_random_is_near_zero_perfect_is_100_and_human_agreement() -> None:
    rng = np.random.default_rng(0)
    sets_random, sets_perfect = [], []
    for _ in range(400):
        a1 = rng.integers(1, 4, size=10).astype(float)
        a2 = np.clip(a1 + rng.integers(-1, 2, size=10), 1, 3)
        sets_random.append((rng.random(10), a1, a2))
        sets_perfect.append((a1 + rng.random(10) * 1e-3, a1, a1))
    rnd = comparison_accuracy(sets_random)
    assert abs(rnd["model"]) < 5
    assert 0 < rnd["human"] < 100
    assert comparison_accuracy(sets_perfect)["model"] == pytest.approx(100.0)
    assert comparison_accuracy(sets_perfect)["human"] == pytest.approx(100.0)


def test_comparison_baselines_as_the_leaderboard_draws_them() -> None:
    # the random scorer's scores are seed 1's values after the 10 tie-break draws, the same for every set of a size
    assert np.array_equal(random_scores(3), np.random.RandomState(1).random_sample(13)[10:])
    assert np.array_equal(tiebreak_noise(4), np.random.RandomState(1).random_sample(10)[:4] / 1e9)
    a1, a2 = np.array([1, 2, 3, 3]), np.array([1, 3, 2, 3])
    res = comparison_accuracy([(np.array([0.1, 0.2, 0.3, 0.4]), a1, a2)])
    rnd = random_scores(4)
    assert res["random"] == pytest.approx(100 * (pairwise_accuracy(rnd, a1) + pairwise_accuracy(rnd, a2)) / 2)
    # oracle = the annotators' mean rating (1, 2.5, 2.5, 3); the noise (seed 1: .417, .720, .0001, .302 × 1e-9)
    # puts candidate 1 above candidate 2. Against a1: 4 of 5 differing pairs right ((1,2) wrong) -> 0.6; against a2:
    # 5 of 5 -> 1.0; mean 0.8
    assert res["oracle"] == pytest.approx(80.0)
    assert set(res) == {"model", "human", "random", "oracle", "n_sets"}


def test_comparison_averages_both_annotators() -> None:
    scores = np.array([0.1, 0.2, 0.3])
    a1 = np.array([1, 2, 3])  # model agrees on all 3 pairs -> 1.0
    a2 = np.array([3, 2, 1])  # model disagrees on all 3 pairs -> -1.0
    res = comparison_accuracy([(scores, a1, a2)])
    assert res["model"] == pytest.approx(0.0)
    assert res["human"] == pytest.approx(-100.0)  # the annotators order every pair oppositely


# --- evaluate(): the whole report on a corpus ----------------------------------------------------------------------
def _corpus(boxes_per_image: dict[str, list[tuple[float, float, float, float]]]) -> pl.DataFrame:
    rows = []
    for image_id, boxes in boxes_per_image.items():
        for b in boxes:
            rows.append(
                {
                    "instance_id": f"{image_id}-{len(rows)}",
                    "image_id": image_id,
                    "image": image_id,
                    "width": 100,
                    "height": 100,
                    "bboxes": [dict(zip(("left", "top", "width", "height"), b, strict=True))],
                    "clue": "c",
                    "inference": "i",
                    "split": "val",
                    "confidence": 1.0,
                    "chunk": 0,
                }
            )
    return io.conform(pl.DataFrame(rows), schemas.COMPARISON_CORPUS)


def test_evaluate_scores_images_whose_instances_share_a_box() -> None:
    # image a: two instances drawn on the same box, the scorer tells them apart by inference only -> still scored
    corpus = _corpus({"a": [(0, 0, 10, 10), (0, 0, 10, 10), (50, 50, 10, 10)], "b": [(0, 0, 5, 5), (20, 20, 5, 5)]})
    region = np.eye(5, dtype=np.float32)
    emb = DualEmbeddings(corpus["instance_id"].to_list(), region, region.copy())
    loc = evaluate(corpus, emb)["localization"]
    assert (loc["n_images"], loc["n_images_shared_box"], loc["gt_boxes"]) == (2, 1, 100.0)
    assert loc["auto_boxes"] is None and loc["n_images_auto"] == 0


def test_evaluate_auto_boxes_and_oracle_from_proposal_vectors() -> None:
    corpus = _corpus({"a": [(0, 0, 10, 10), (50, 50, 10, 10)], "b": [(0, 0, 20, 20)]})
    inference = np.array([[1, 0], [0, 1], [1, 0]], dtype=np.float32)
    emb = DualEmbeddings(corpus["instance_id"].to_list(), inference.copy(), inference)
    box = pl.Struct({k: pl.Float64 for k in ("left", "top", "width", "height")})
    proposals = pl.DataFrame(
        {
            "image_id": ["a", "a", "b", "b"],
            # a: proposal 0 on instance 0's box scores high for inference 0 but also (wrongly) for inference 1
            "box": [
                {"left": 0, "top": 0, "width": 10, "height": 10},
                {"left": 50, "top": 50, "width": 10, "height": 10},
                {"left": 60, "top": 60, "width": 20, "height": 20},
                {"left": 0, "top": 0, "width": 20, "height": 20},
            ],
            "region": [[1.0, 0.9], [0.0, 0.5], [1.0, 0.0], [0.5, 0.0]],
        },
        schema={"image_id": pl.Utf8, "box": box, "region": pl.Array(pl.Float32, 2)},
    )
    loc = evaluate(corpus, emb, proposals=proposals)["localization"]
    # image a: inference 0 -> proposal 0 (IoU 1) right, inference 1 -> proposal 0 (0.9 > 0.5; IoU 0) wrong -> 0.5;
    # image b: inference -> proposal 2 (1.0 > 0.5; IoU 0) wrong -> 0. Oracle: every inference has an IoU-1 proposal.
    assert (loc["auto_boxes"], loc["oracle_boxes"], loc["n_images_auto"]) == (25.0, 100.0, 2)
    with pytest.raises(ValueError, match=r"1 image\(s\) are not in the corpus, e.g. \['zz'\]"):
        evaluate(
            corpus, emb, proposals=proposals.with_columns(pl.lit("zz").alias("image_id")).head(1).vstack(proposals)
        )


def test_diagonal_ranks_equal_rankdata_with_ties() -> None:
    from scipy.stats import rankdata

    from squidflow.comparison.metrics_sherlock.retrieval import diagonal_ranks

    rng = np.random.default_rng(3)
    for s in (rng.normal(size=(30, 30)), rng.integers(0, 3, (30, 30)).astype(float), np.zeros((7, 7))):
        for axis in (0, 1):
            assert np.array_equal(diagonal_ranks(s, axis), np.diagonal(rankdata(-s, axis=axis)))
    with pytest.raises(ValueError, match="1 NaN score"):
        retrieval_chunk(np.array([[1.0, np.nan], [0.0, 1.0]]))


# --- the ratings file a person supplies ---------------------------------------------------------------------------
def test_comparison_ratings_are_read_as_likert_integers(tmp_path) -> None:
    from squidflow.comparison.metrics_sherlock.report import read_comparison_ratings

    path = tmp_path / "ratings.csv"
    path.write_text("query_id,candidate_id,annot1,annot2\nq1, c1,3,1\nq1,c2,2, 2\n")
    df = read_comparison_ratings(path)
    assert df.to_dicts() == [
        {"query_id": "q1", "candidate_id": "c1", "annot1": 3, "annot2": 1},
        {"query_id": "q1", "candidate_id": "c2", "annot1": 2, "annot2": 2},
    ]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (
            "query,candidate,rating\nq1,c1,2\n",
            "line 1: missing column(s) query_id, candidate_id, annot1, annot2; the header is query, candidate, rating",
        ),
        ("query_id,candidate_id,annot1,annot2\nq1,c1,3,1\nq1,c2,4,2\n", "line 3: annot1 = '4' is not a Likert rating"),
        ("query_id,candidate_id,annot1,annot2\nq1,c1,3,\n", "line 2: annot2 = '' is not a Likert rating"),
    ],
)
def test_a_bad_ratings_file_is_named_with_its_line_and_the_fix(tmp_path, text: str, needle: str) -> None:
    from squidflow.comparison.metrics_sherlock.report import read_comparison_ratings
    from squidflow.errors import InputError

    path = tmp_path / "ratings.csv"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        read_comparison_ratings(path)
    assert str(err.value).startswith(f"{path} {needle}"), str(err.value)
    assert "comparison.ratings" in str(err.value)
