"""SYNTHETIC GuessWhat?! games and SIMULATED human reference-set annotations for the offline demo.

The games are written in the dataset's own JSON Lines format (guesswhat.{split}.jsonl.gz; every line also carries
`"synthetic": true` and the image file names start with SYNTHETIC_), so the demo runs the very reader, rules and
guessers a paper-scale run does. Nothing here is GuessWhat?! data: images do not exist, objects are random MS-COCO
boxes of a dozen categories, questions come from templates.

How the synthetic oracle answers the first question decides what the demo can show, so it is spelled out:
- the target is drawn among the candidates with probability ∝ area^target_area_bias: the synthetic targets favour
  large objects, a bias a guesser trained on the target alone (STL-CE) picks up and one trained on soft labels
  (MTL-KL) does not — the mechanism behind the paper's finding that task training does not give human-like
  distributions (litmus test §5.2);
- a category question is answered truthfully from the target's category;
- a spatial question is answered by one of R1, R2, R3 drawn at random per game, as if different people answered it
  (the disagreement the rule ensemble models, §3.1);
- other questions get a random Yes/No, or N/A.

The simulated annotators of the human sample check (§3.1) select, for a category question, the category's reference
set; for a spatial question, the reference set of a rule each of them draws at random; for other questions, the
target and random other candidates; each toggles one random candidate with probability `noise`. Everything they
produce is labelled simulated.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from squidflow.litmus.questions import COCO_CATEGORIES, classify
from squidflow.litmus.soft_labels import RULES, Boxes

DEMO_CATEGORIES = (
    "person",
    "dog",
    "cat",
    "horse",
    "car",
    "bus",
    "bicycle",
    "pizza",
    "banana",
    "cake",
    "chair",
    "couch",
)
# The words the synthetic questioner uses for each category, and the groups it asks about.
CATEGORY_WORDS = {
    "person": ("person", "man", "woman", "human"),
    "dog": ("dog",),
    "cat": ("cat",),
    "horse": ("horse",),
    "car": ("car",),
    "bus": ("bus",),
    "bicycle": ("bicycle", "bike"),
    "pizza": ("pizza",),
    "banana": ("banana",),
    "cake": ("cake",),
    "chair": ("chair",),
    "couch": ("couch", "sofa"),
}
GROUP_WORDS = {
    "animal": ("dog", "cat", "horse"),
    "vehicle": ("car", "bus", "bicycle"),
    "food": ("pizza", "banana", "cake"),
    "furniture": ("chair", "couch"),
}
CATEGORY_TEMPLATES = ("is it a {w}?", "is it the {w}?", "{w}?", "is it a kind of {w}?", "is this a {w}?")
SPATIAL_TEMPLATES = {
    "left": ("is it on the left?", "is it on the left side of the picture?", "left?"),
    "right": ("is it on the right?", "is it on the right side of the image?", "right?"),
    "left_half": ("is it in the left half?", "is it in the left half of the picture?"),
    "right_half": ("is it in the right half?", "is it in the right half of the picture?"),
    "top": ("is it at the top?", "is it in the top half of the picture?", "is it in the upper part?"),
    "bottom": ("is it at the bottom?", "is it in the bottom half?", "is it in the lower part of the image?"),
    "middle": ("is it in the middle?", "is it in the center of the picture?", "middle?"),
    "top_left": ("is it in the top left corner?", "upper left?"),
    "top_right": ("is it in the top right corner?", "upper right?"),
    "bottom_left": ("is it in the bottom left corner?", "lower left?"),
    "bottom_right": ("is it in the bottom right corner?", "lower right?"),
}
OTHER_QUESTIONS = (
    "is it red?",
    "is it white?",
    "is it the one in front?",
    "is it something you can eat?",
    "is it near the window?",
    "is it the person on the left?",
    "is it made of wood?",
    "is it partially visible?",
)
IMAGE_SIZES = ((640, 480), (480, 640), (640, 427), (500, 375), (612, 612))
FIRST_TURN_MIX = {"category": 0.5, "spatial": 0.35, "other": 0.15}


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _category_question(rng: np.random.Generator, present: list[str], salience: np.ndarray) -> str:
    """Ask about a group, or about the category of a salient (large) candidate, or now and then any category."""
    if rng.random() < 0.3:
        word = str(rng.choice(list(GROUP_WORDS)))
    else:
        salient = present[int(rng.choice(len(present), p=salience))]
        cat = salient if rng.random() < 0.8 else str(rng.choice(DEMO_CATEGORIES))
        word = str(rng.choice(CATEGORY_WORDS[cat]))
    template = str(rng.choice(CATEGORY_TEMPLATES))
    return template.replace("a {w}", f"{_article(word)} {{w}}").format(w=word)


def _oracle(question: str, target: int, categories: list[str], boxes: Boxes, rng: np.random.Generator) -> str:
    """The synthetic oracle's answer about the target (index into the candidates); see the module docstring."""
    kind = classify(question)
    if kind.question_type == "category":
        return "Yes" if categories[target] in kind.categories else "No"
    if kind.question_type == "spatial":
        rule = RULES[str(rng.choice(list(RULES)))]
        member = rule(boxes, np.full(len(categories), kind.form, dtype=object))
        return "Yes" if member[target] else "No"
    return str(rng.choice(["Yes", "No", "N/A"], p=[0.45, 0.4, 0.15]))


def _question(rng: np.random.Generator, present: list[str], salience: np.ndarray, kind: str | None = None) -> str:
    kind = kind or str(rng.choice(list(FIRST_TURN_MIX), p=list(FIRST_TURN_MIX.values())))
    if kind == "category":
        return _category_question(rng, present, salience)
    if kind == "spatial":
        return str(rng.choice(SPATIAL_TEMPLATES[str(rng.choice(list(SPATIAL_TEMPLATES)))]))
    return str(rng.choice(OTHER_QUESTIONS))


def synthetic_games(n_games: int, *, split: str, seed: int, target_area_bias: float, first_id: int = 1) -> list[dict]:
    """`n_games` SYNTHETIC games as GuessWhat?! JSON objects (ids from `first_id`; object and QA ids derived)."""
    rng = np.random.default_rng([seed, sum(map(ord, split))])
    games = []
    for g in range(n_games):
        game_id = first_id + g
        W, H = IMAGE_SIZES[int(rng.integers(len(IMAGE_SIZES)))]
        k = int(rng.integers(3, 11))
        cats = [str(c) for c in rng.choice(DEMO_CATEGORIES, size=k)]
        w = rng.uniform(0.08, 0.45, k) * W
        h = rng.uniform(0.08, 0.45, k) * H
        x = rng.uniform(0, 1, k) * (W - w)
        y = rng.uniform(0, 1, k) * (H - h)
        bboxes = np.round(np.stack([x, y, w, h], axis=1), 2)
        boxes = Boxes.of(bboxes, W, H)
        area = bboxes[:, 2] * bboxes[:, 3]
        weight = area**target_area_bias
        target = int(rng.choice(k, p=weight / weight.sum()))
        object_ids = [game_id * 100 + i for i in range(k)]
        qas = []
        for t in range(int(rng.integers(1, 6))):
            kind = None if t == 0 else str(rng.choice(list(FIRST_TURN_MIX)))
            question = _question(rng, cats, area / area.sum(), kind=kind)
            qas.append(
                {"question": question, "answer": _oracle(question, target, cats, boxes, rng), "id": game_id * 10 + t}
            )
        games.append(
            {
                "id": game_id,
                "synthetic": True,
                "status": str(rng.choice(["success", "failure", "incomplete"], p=[0.85, 0.1, 0.05])),
                "picture_id": game_id,
                "image": {
                    "id": game_id,
                    "width": W,
                    "height": H,
                    "file_name": f"SYNTHETIC_{split}_{game_id:07d}.jpg",
                    "coco_url": "",
                    "flickr_url": "",
                },
                "object_id": object_ids[target],
                "objects": [
                    {
                        "id": oid,
                        "category": cat,
                        "category_id": COCO_CATEGORIES.index(cat) + 1,
                        "bbox": [float(v) for v in bb],
                        "area": float(bb[2] * bb[3]),
                        "iscrowd": False,
                        "segment": [],
                    }
                    for oid, cat, bb in zip(object_ids, cats, bboxes, strict=True)
                ],
                "qas": qas,
                "questioner_id": 0,
                "timestamp": "2017-01-01 00:00:00",
            }
        )
    return games


def demo_games(
    *, train_games: int, test_games: int, target_area_bias: float, seed: int
) -> tuple[list[dict], list[dict]]:
    """The demo's two SYNTHETIC games splits, train and test (game ids 1.. and 1,000,001..), as GuessWhat?! records."""
    return (
        synthetic_games(train_games, split="train", seed=seed, target_area_bias=target_area_bias),
        synthetic_games(test_games, split="test", seed=seed, target_area_bias=target_area_bias, first_id=1_000_001),
    )


def simulate_annotations(
    games: pl.DataFrame, *, n_qa: int, annotators: int, noise: float, seed: int, split: str = "train"
) -> pl.DataFrame:
    """SIMULATED human reference sets for `n_qa` first turns of `split`: qa_id, annotator, selected_object_ids
    (space-separated), in the CSV format of litmus.human_annotations."""
    rng = np.random.default_rng(seed)
    pool = games.filter(
        (pl.col("split") == split) & pl.col("answer").is_in(["yes", "no"]) & pl.col("qa_id").is_not_null()
    )
    pool = pool.sort("game_id").sample(n=min(n_qa, pool.height), seed=seed) if pool.height else pool
    rows = []
    for qa_id, question, answer, target_id, W, H, objects in pool.select(
        "qa_id", "question", "answer", "target_object_id", "image_width", "image_height", "objects"
    ).iter_rows():
        ids = [o["object_id"] for o in objects]
        cats = [o["category"] for o in objects]
        boxes = Boxes.of([[o["bbox"][c] for c in ("left", "top", "width", "height")] for o in objects], W, H)
        kind = classify(question)
        for a in range(annotators):
            if kind.question_type == "category":
                member = np.isin(np.asarray(cats, dtype=object), np.asarray(kind.categories, dtype=object))
                member = ~member if answer == "no" else member
            elif kind.question_type == "spatial":
                member = RULES[str(rng.choice(list(RULES)))](boxes, np.full(len(ids), kind.form, dtype=object))
                member = ~member if answer == "no" else member
            else:
                member = (rng.random(len(ids)) < 0.3) | (np.asarray(ids) == target_id)
            member = member.copy()
            if rng.random() < noise:
                j = int(rng.integers(len(ids)))
                member[j] = ~member[j]
            rows.append(
                {
                    "qa_id": qa_id,
                    "annotator": f"simulated_{a + 1:02d}",
                    "selected_object_ids": " ".join(str(i) for i, m in zip(ids, member, strict=True) if m),
                }
            )
    return pl.DataFrame(rows, schema={"qa_id": pl.Int64, "annotator": pl.Utf8, "selected_object_ids": pl.Utf8})
