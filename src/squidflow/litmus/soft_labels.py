"""Rule-based soft labels over the candidate objects of a first-turn QA pair (litmus test §3.2 and Appendix A).

Category questions: the probability is spread uniformly over the reference set — the objects whose MS-COCO category
the question names for a "yes", the others for a "no" — and the complement set gets zero.

Absolute spatial questions: three rule systems simulate three ways people ground "is it on the left?". Each puts an
object in the reference set (1) or not (0) — inverted for a "no" answer —, the three are summed per object (0–3) and
the sums are turned into a distribution. The paper calls that step a softmax, but its worked example (Figure 3,
right: sums 0, 3, 0, 3, 1 give 0, .4286, 0, .4286, .1429) divides each sum by the total; `normalisation: sum` (the
default) follows the example, `softmax` the text.

- R1 (strict): more than 80% of the box in the half; for the middle, at least 50% of the box inside the central 50%
  of the image both horizontally and vertically; for a quadrant, the whole box inside it.
- R2 (finer): "left half" = at least two thirds of the box in the left half; plain "left" also needs some part of the
  box in the leftmost 40%; top/bottom = at least 75% in the half; middle = the whole box inside the middle 50%
  horizontally *or* vertically; quadrants as R1.
- R3 (centroid): the centre of the box in the half (strictly: a centroid on the midline is neither left nor right),
  in the central 50% both ways for the middle, in the quadrant.

Boxes are MS-COCO boxes (left, top, width, height) in pixels with y growing downwards, as GuessWhat?! stores them.
Shares of a box are shares of its extent along the axis the rule looks at (for a rectangle, the same as the share of
its area); a box of zero extent counts as inside where its edge is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from squidflow.litmus.questions import QuestionType, classify

SPATIAL_RULES = ("r1", "r2", "r3")
NORMALISATIONS = ("sum", "softmax")

# The thresholds of Appendix A, named.
R1_HALF_SHARE = 0.8  # "more than 80% of the bounding box is on the left 50% of the image" (strict)
R1_MIDDLE_SHARE = 0.5  # "at least 50% of the bounding box is inside the central 50%", both directions
R2_SIDE_SHARE = 2 / 3  # "two-thirds of the bounding box must be on the left 50% of the image"
R2_OUTER_BAND = 0.4  # "some part of the bounding box must be on the leftmost 40% of the image"
R2_VERTICAL_SHARE = 0.75  # "at least 75% of the bounding box is on the top half"
MIDDLE_BAND = (0.25, 0.75)  # the central 50% of the image along an axis
EPS = 1e-9  # shares and coordinates equal to a threshold up to rounding count as equal


@dataclass(frozen=True)
class Boxes:
    """Candidate boxes (arrays of equal length) and the size of the image each lies in."""

    left: np.ndarray
    top: np.ndarray
    width: np.ndarray
    height: np.ndarray
    image_width: np.ndarray
    image_height: np.ndarray

    @classmethod
    def of(cls, bboxes, image_width, image_height) -> Boxes:
        """From a list of [left, top, width, height] and one image size (or one per box)."""
        b = np.asarray(bboxes, dtype=float).reshape(-1, 4)
        n = len(b)
        return cls(
            b[:, 0],
            b[:, 1],
            b[:, 2],
            b[:, 3],
            np.broadcast_to(np.asarray(image_width, float), n),
            np.broadcast_to(np.asarray(image_height, float), n),
        )

    @property
    def right(self) -> np.ndarray:
        return self.left + self.width

    @property
    def bottom(self) -> np.ndarray:
        return self.top + self.height


def share_inside(lo: np.ndarray, hi: np.ndarray, a, b) -> np.ndarray:
    """Share of each interval [lo, hi] that lies in [a, b]; a point interval is 1 inside, 0 outside."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    a, b = np.broadcast_to(np.asarray(a, float), lo.shape), np.broadcast_to(np.asarray(b, float), lo.shape)
    length = hi - lo
    overlap = np.clip(np.minimum(hi, b) - np.maximum(lo, a), 0.0, None)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(length > 0, overlap / np.where(length > 0, length, 1.0), ((lo >= a) & (lo <= b)).astype(float))
    return share


def _halves(boxes: Boxes) -> dict[str, np.ndarray]:
    W, H = boxes.image_width, boxes.image_height
    inf = np.full_like(W, np.inf)
    return {
        "left": share_inside(boxes.left, boxes.right, -inf, W / 2),
        "right": share_inside(boxes.left, boxes.right, W / 2, inf),
        "top": share_inside(boxes.top, boxes.bottom, -inf, H / 2),
        "bottom": share_inside(boxes.top, boxes.bottom, H / 2, inf),
    }


def _whole_box_in_quadrants(boxes: Boxes) -> dict[str, np.ndarray]:
    W, H = boxes.image_width, boxes.image_height
    in_left = boxes.right <= W / 2 + EPS * W
    in_right = boxes.left >= W / 2 - EPS * W
    in_top = boxes.bottom <= H / 2 + EPS * H
    in_bottom = boxes.top >= H / 2 - EPS * H
    return {
        "top_left": in_top & in_left,
        "top_right": in_top & in_right,
        "bottom_left": in_bottom & in_left,
        "bottom_right": in_bottom & in_right,
    }


def _select(forms: np.ndarray, by_form: dict[str, np.ndarray]) -> np.ndarray:
    """Per box, the membership its question's form asks for (False for a form the rules do not know)."""
    forms = np.asarray(forms, dtype=object)
    out = np.zeros(len(forms), dtype=bool)
    for form, member in by_form.items():
        hit = forms == form
        out[hit] = np.asarray(member, dtype=bool)[hit]
    return out


def rule_r1(boxes: Boxes, forms) -> np.ndarray:
    """R1: >80% of the box in the half; ≥50% inside the central 50% both ways; the whole box in the quadrant."""
    half = _halves(boxes)
    side = {k: v > R1_HALF_SHARE + EPS for k, v in half.items()}
    W, H = boxes.image_width, boxes.image_height
    lo, hi = MIDDLE_BAND
    middle = (share_inside(boxes.left, boxes.right, lo * W, hi * W) >= R1_MIDDLE_SHARE - EPS) & (
        share_inside(boxes.top, boxes.bottom, lo * H, hi * H) >= R1_MIDDLE_SHARE - EPS
    )
    return _select(
        forms,
        {
            "left": side["left"],
            "left_half": side["left"],
            "right": side["right"],
            "right_half": side["right"],
            "top": side["top"],
            "bottom": side["bottom"],
            "middle": middle,
            **_whole_box_in_quadrants(boxes),
        },
    )


def rule_r2(boxes: Boxes, forms) -> np.ndarray:
    """R2: ≥2/3 in the half (+ some part in the outer 40% for plain left/right); ≥75% for top/bottom; the whole box
    in the middle 50% horizontally or vertically; quadrants as R1."""
    half = _halves(boxes)
    W, H = boxes.image_width, boxes.image_height
    left_half = half["left"] >= R2_SIDE_SHARE - EPS
    right_half = half["right"] >= R2_SIDE_SHARE - EPS
    in_left_band = boxes.left < R2_OUTER_BAND * W - EPS * W  # "some part" of the box: a positive length
    in_right_band = boxes.right > (1 - R2_OUTER_BAND) * W + EPS * W
    lo, hi = MIDDLE_BAND
    middle = ((boxes.left >= lo * W - EPS * W) & (boxes.right <= hi * W + EPS * W)) | (
        (boxes.top >= lo * H - EPS * H) & (boxes.bottom <= hi * H + EPS * H)
    )
    return _select(
        forms,
        {
            "left": left_half & in_left_band,
            "left_half": left_half,
            "right": right_half & in_right_band,
            "right_half": right_half,
            "top": half["top"] >= R2_VERTICAL_SHARE - EPS,
            "bottom": half["bottom"] >= R2_VERTICAL_SHARE - EPS,
            "middle": middle,
            **_whole_box_in_quadrants(boxes),
        },
    )


def rule_r3(boxes: Boxes, forms) -> np.ndarray:
    """R3: the centroid of the box in the half (a centroid on the midline is in neither), in the central 50% both
    ways, in the quadrant."""
    W, H = boxes.image_width, boxes.image_height
    cx, cy = boxes.left + boxes.width / 2, boxes.top + boxes.height / 2
    left, right = cx < W / 2 - EPS * W, cx > W / 2 + EPS * W
    top, bottom = cy < H / 2 - EPS * H, cy > H / 2 + EPS * H
    lo, hi = MIDDLE_BAND
    middle = (cx >= lo * W - EPS * W) & (cx <= hi * W + EPS * W) & (cy >= lo * H - EPS * H) & (cy <= hi * H + EPS * H)
    return _select(
        forms,
        {
            "left": left,
            "left_half": left,
            "right": right,
            "right_half": right,
            "top": top,
            "bottom": bottom,
            "middle": middle,
            "top_left": top & left,
            "top_right": top & right,
            "bottom_left": bottom & left,
            "bottom_right": bottom & right,
        },
    )


RULES = {"r1": rule_r1, "r2": rule_r2, "r3": rule_r3}


def reference_sets(boxes: Boxes, forms, answers) -> dict[str, np.ndarray]:
    """Each rule's reference-set membership (0/1) after the answer: a "no" keeps the objects the rule rejects."""
    no = np.asarray(answers, dtype=object) == "no"
    return {name: np.where(no, ~rule(boxes, forms), rule(boxes, forms)).astype(np.int8) for name, rule in RULES.items()}


def normalise(counts, method: str = "sum") -> np.ndarray:
    """Turn one QA pair's rule counts (0–3 per object) into a distribution: count / total (the paper's worked
    example), or a softmax (the paper's text). With `sum`, a QA pair no rule can ground (all zero) has no soft label:
    an array of NaN."""
    counts = np.asarray(counts, dtype=float)
    if method == "sum":
        total = counts.sum()
        return counts / total if total > 0 else np.full_like(counts, np.nan)
    if method == "softmax":
        e = np.exp(counts - counts.max())
        return e / e.sum()
    raise ValueError(f"normalisation {method!r} is not one of {NORMALISATIONS}; set litmus.normalisation")


def _question_types(questions: pl.Series) -> pl.DataFrame:
    """question -> type, form and referred categories, each distinct question classified once."""
    distinct = questions.unique(maintain_order=True).drop_nulls().to_list()
    typed: list[QuestionType] = [classify(q) for q in distinct]
    return pl.DataFrame(
        {
            "question": distinct,
            "question_type": [t.question_type for t in typed],
            "question_form": [t.form for t in typed],
            "question_categories": [list(t.categories) for t in typed],
        },
        schema={
            "question": pl.Utf8,
            "question_type": pl.Utf8,
            "question_form": pl.Utf8,
            "question_categories": pl.List(pl.Utf8),
        },
    )


def _candidate_rows(games: pl.DataFrame) -> pl.DataFrame:
    """One row per (game whose first answer is yes or no, candidate object), with the question's type, form and
    categories and the object's box, in the games' order (`_order`)."""
    first = games.filter(pl.col("answer").is_in(["yes", "no"]))
    first = first.join(_question_types(first["question"]), on="question", how="left", maintain_order="left")
    return (
        first.select(
            "game_id",
            "split",
            "image_width",
            "image_height",
            "target_object_id",
            "question_type",
            "question_form",
            "question_categories",
            "answer",
            "objects",
        )
        .explode("objects")
        .unnest("objects")
        .unnest("bbox")
        .with_row_index("_order")
    )


def _memberships(rows: pl.DataFrame) -> pl.DataFrame:
    """Each candidate's membership of each rule's reference set (r1..r3, spatial questions; 0 elsewhere) and of the
    category question's set (`_category_member`), after the answer."""
    spatial = (rows["question_type"] == "spatial").to_numpy()
    boxes = Boxes(
        *(rows[c].to_numpy().astype(float) for c in ("left", "top", "width", "height", "image_width", "image_height"))
    )
    rs = reference_sets(boxes, rows["question_form"].to_numpy(), rows["answer"].to_numpy())
    in_category = np.array(
        [
            cat in cats
            for cat, cats in zip(rows["category"].to_list(), rows["question_categories"].to_list(), strict=True)
        ],
        dtype=bool,
    )
    category_member = np.where(rows["answer"].to_numpy() == "no", ~in_category, in_category)
    return rows.with_columns(
        *(pl.Series(name, np.where(spatial, member, 0)).cast(pl.Int8).alias(name) for name, member in rs.items()),
        pl.Series("_category_member", category_member.astype(np.int8)),
    )


def label_games(games: pl.DataFrame, normalisation: str = "sum") -> pl.DataFrame:
    """Soft labels for every game whose first answer is yes or no: one row per (game, candidate object).

    `games` is the LITMUS_GAMES artifact. Rows of "other" questions carry no memberships and no soft label; a
    category or spatial QA pair whose reference set is empty under every rule (a "yes" to a category no candidate
    has) has `soft_label` null and is left out of the metrics.
    """
    if normalisation not in NORMALISATIONS:
        raise ValueError(f"litmus.normalisation = {normalisation!r} is not one of {NORMALISATIONS}")
    rows = _memberships(_candidate_rows(games))
    count = pl.col("r1") + pl.col("r2") + pl.col("r3")
    spatial_label: pl.Expr
    if normalisation == "sum":
        spatial_label = pl.when(count.sum().over("game_id") > 0).then(count / count.sum().over("game_id"))
    else:
        spatial_label = count.cast(pl.Float64).exp() / count.cast(pl.Float64).exp().sum().over("game_id")
    member = pl.col("_category_member").cast(pl.Float64)
    category_label = pl.when(member.sum().over("game_id") > 0).then(member / member.sum().over("game_id"))
    qtype = pl.col("question_type")
    out = rows.with_columns(
        pl.when(qtype == "spatial")
        .then(spatial_label)
        .when(qtype == "category")
        .then(category_label)
        .otherwise(None)
        .cast(pl.Float64)
        .alias("soft_label"),
        pl.when(qtype == "spatial")
        .then(count > 0)
        .when(qtype == "category")
        .then(pl.col("_category_member") == 1)
        .otherwise(None)
        .alias("in_reference_set"),
        (pl.col("object_id") == pl.col("target_object_id")).alias("is_target"),
        *(pl.when(qtype == "spatial").then(pl.col(r)).otherwise(None).alias(r) for r in SPATIAL_RULES),
    )
    return out.sort("_order").select(
        "game_id",
        "split",
        "object_id",
        "category",
        "is_target",
        "question_type",
        "question_form",
        "answer",
        *SPATIAL_RULES,
        "in_reference_set",
        "soft_label",
    )


def _rule_sets() -> dict[str, pl.Expr]:
    """Each rule and union of rules (Appendix A) as "the target is in its reference set"."""
    hit = {r: pl.col(r) == 1 for r in SPATIAL_RULES}
    return {
        "R1": hit["r1"],
        "R2": hit["r2"],
        "R3": hit["r3"],
        "R1 ∪ R2": hit["r1"] | hit["r2"],
        "R1 ∪ R3": hit["r1"] | hit["r3"],
        "R2 ∪ R3": hit["r2"] | hit["r3"],
        "R1 ∪ R2 ∪ R3": hit["r1"] | hit["r2"] | hit["r3"],
    }


def rules_hits(targets: pl.DataFrame) -> dict[str, np.ndarray]:
    """For the target rows of spatial QA pairs: per rule set (as rules_accuracy names them), 1.0 where it puts the
    target in its reference set, 0.0 where not, NaN where a rule has no label (left out, as rules_accuracy's mean does)."""
    return {
        name: targets.select(e.cast(pl.Float64)).to_series().fill_null(float("nan")).to_numpy()
        for name, e in _rule_sets().items()
    }


def rules_accuracy(soft_labels: pl.DataFrame) -> pl.DataFrame:
    """Per split: on spatial QA pairs, the share whose target is in each rule's reference set, in the union of two
    rules, and in any rule's (Appendix A: 90.5%, 92.6%, 89.7% for R1–R3 on the training set; unions 94.9% R1∪R2,
    93.9% R1∪R3, 92.2% R2∪R3)."""
    target = soft_labels.filter((pl.col("question_type") == "spatial") & pl.col("is_target"))
    exprs = _rule_sets()
    return (
        target.group_by("split", maintain_order=True)
        .agg(pl.len().alias("n_spatial"), *(e.mean().alias(name) for name, e in exprs.items()))
        .sort("split")
        .unpivot(index=["split", "n_spatial"], variable_name="rules", value_name="target_accuracy")
    )
