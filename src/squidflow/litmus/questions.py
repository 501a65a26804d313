"""Question types of GuessWhat?! first turns: category, absolute spatial, or other (litmus test §3.1–3.2).

Soft labels can be built only where the dataset itself says which objects a question is about: a *category* question
names an MS-COCO category or super-category ("is it a person?", "is it an animal?"), an *absolute spatial* question
names a region of the image ("is it on the left?", "top right corner?"). Everything else — colours, relations,
mixtures such as "the person on the left" — is "other": counted, but left without a soft label.

The classifier is deliberately an allow-list: a question is a category question only if, once its one category
phrase is removed, nothing but filler words remain ("is it a kind of ..."), and likewise for spatial questions. A
question with any word the lists do not know is "other", so a soft label is never built from a misread question.
Every word list lives in this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# ---------------------------------------------------------------------------------------------- MS-COCO categories
# The 80 MS-COCO categories by super-category (the `category` field of GuessWhat?! objects).
COCO_SUPERCATEGORIES: dict[str, tuple[str, ...]] = {
    "person": ("person",),
    "vehicle": ("bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat"),
    "outdoor": ("traffic light", "fire hydrant", "stop sign", "parking meter", "bench"),
    "animal": ("bird", "cat", "dog", "horse", "sheep", "cow", "elephant", "bear", "zebra", "giraffe"),
    "accessory": ("backpack", "umbrella", "handbag", "tie", "suitcase"),
    "sports": (
        "frisbee",
        "skis",
        "snowboard",
        "sports ball",
        "kite",
        "baseball bat",
        "baseball glove",
        "skateboard",
        "surfboard",
        "tennis racket",
    ),
    "kitchen": ("bottle", "wine glass", "cup", "fork", "knife", "spoon", "bowl"),
    "food": ("banana", "apple", "sandwich", "orange", "broccoli", "carrot", "hot dog", "pizza", "donut", "cake"),
    "furniture": ("chair", "couch", "potted plant", "bed", "dining table", "toilet"),
    "electronic": ("tv", "laptop", "mouse", "remote", "keyboard", "cell phone"),
    "appliance": ("microwave", "oven", "toaster", "sink", "refrigerator"),
    "indoor": ("book", "clock", "vase", "scissors", "teddy bear", "hair drier", "toothbrush"),
}
COCO_CATEGORIES: tuple[str, ...] = tuple(c for cats in COCO_SUPERCATEGORIES.values() for c in cats)

# Words people use for a category, beyond its COCO name (singular; plurals are added below).
CATEGORY_SYNONYMS: dict[str, tuple[str, ...]] = {
    "person": (
        "human",
        "human being",
        "man",
        "woman",
        "boy",
        "girl",
        "guy",
        "lady",
        "child",
        "kid",
        "baby",
        "player",
        "someone",
        "somebody",
        "people",
        "men",
        "women",
        "children",
        "persons",
        "adult",
        "gentleman",
    ),
    "bicycle": ("bike", "cycle"),
    "car": ("automobile", "taxi"),
    "motorcycle": ("motorbike", "motor bike", "motor cycle", "scooter"),
    "airplane": ("plane", "aeroplane", "jet", "aircraft"),
    "truck": ("lorry", "pickup truck"),
    "boat": ("ship",),
    "traffic light": ("stoplight", "stop light", "traffic signal"),
    "fire hydrant": ("hydrant",),
    "parking meter": ("meter",),
    "cat": ("kitten", "kitty"),
    "dog": ("puppy",),
    "sheep": ("lamb",),
    "cow": ("cattle", "bull", "calf"),
    "handbag": ("purse", "bag", "hand bag"),
    "suitcase": ("luggage",),
    "skis": ("ski",),
    "sports ball": ("ball",),
    "baseball bat": ("bat",),
    "baseball glove": ("glove", "mitt"),
    "skateboard": ("skate board",),
    "surfboard": ("surf board",),
    "tennis racket": ("racket", "racquet"),
    "wine glass": ("glass",),
    "cup": ("mug",),
    "hot dog": ("hotdog",),
    "donut": ("doughnut",),
    "couch": ("sofa",),
    "potted plant": ("plant", "flower pot", "houseplant"),
    "dining table": ("table",),
    "tv": ("television", "tv screen", "monitor"),
    "laptop": ("computer", "notebook computer"),
    "remote": ("remote control", "controller"),
    "cell phone": ("phone", "cellphone", "mobile phone", "smartphone"),
    "oven": ("stove",),
    "refrigerator": ("fridge",),
    "teddy bear": ("teddy", "stuffed animal"),
    "hair drier": ("hair dryer", "hairdryer", "blow dryer"),
}

# Words for a group of categories: the COCO super-categories people use, and a few common groupings.
GROUP_WORDS: dict[str, tuple[str, ...]] = {
    "animal": COCO_SUPERCATEGORIES["animal"],
    "vehicle": COCO_SUPERCATEGORIES["vehicle"],
    "food": COCO_SUPERCATEGORIES["food"],
    "furniture": COCO_SUPERCATEGORIES["furniture"],
    "electronic": COCO_SUPERCATEGORIES["electronic"],
    "electronic device": COCO_SUPERCATEGORIES["electronic"],
    "electronics": COCO_SUPERCATEGORIES["electronic"],
    "appliance": COCO_SUPERCATEGORIES["appliance"],
    "accessory": COCO_SUPERCATEGORIES["accessory"],
    "accessories": COCO_SUPERCATEGORIES["accessory"],
    "sports equipment": COCO_SUPERCATEGORIES["sports"],
    "fruit": ("banana", "apple", "orange"),
    "vegetable": ("broccoli", "carrot"),
    "utensil": ("fork", "knife", "spoon"),
    "cutlery": ("fork", "knife", "spoon"),
    "silverware": ("fork", "knife", "spoon"),
}

# The word a group phrase is reported as (question_form), where it is not the phrase itself.
GROUP_CANONICAL: dict[str, str] = {
    "electronic device": "electronic",
    "electronics": "electronic",
    "accessories": "accessory",
    "cutlery": "utensil",
    "silverware": "utensil",
}

# Plurals that adding -s/-es does not give.
IRREGULAR_PLURALS: dict[str, str] = {
    "person": "people",
    "man": "men",
    "woman": "women",
    "child": "children",
    "knife": "knives",
    "mouse": "mice",
    "sheep": "sheep",
    "skis": "skis",
    "scissors": "scissors",
    "cattle": "cattle",
    "luggage": "luggage",
    "furniture": "furniture",
    "food": "food",
    "fruit": "fruits",
    "silverware": "silverware",
    "cutlery": "cutlery",
    "electronics": "electronics",
    "accessories": "accessories",
    "sports equipment": "sports equipment",
    "people": "people",
    "men": "men",
    "women": "women",
    "children": "children",
    "persons": "persons",
    "human being": "human beings",
}

# Words that may surround a category phrase without changing which objects it refers to.
CATEGORY_FILLERS = frozenset(
    "is it a an the this that these those they there one ones some any kind type sort form piece pieces of thing "
    "things object objects item items something does do did could can be are we you see i am its it's whole".split()
)

# ---------------------------------------------------------------------------------------------- absolute spatial
HORIZONTAL = {"left": "left", "right": "right"}
VERTICAL = {"top": "top", "upper": "top", "bottom": "bottom", "lower": "bottom"}
MIDDLE = frozenset({"middle", "center", "centre", "central", "centered", "centred"})
# A "left" followed by one of these is the paper's "left half" / "left picture" question (R2 treats it apart).
HALF_MARKERS = frozenset({"half", "picture", "image", "photo", "pic"})
SPATIAL_FILLERS = frozenset(
    "is it a an the this that one on in at to toward towards of from part side sides half area corner section "
    "region picture pic image photo photograph screen frame located placed positioned thing object item something "
    "does do be are".split()
)
SPATIAL_FORMS = (
    "left",
    "right",
    "left_half",
    "right_half",
    "top",
    "bottom",
    "middle",
    "top_left",
    "top_right",
    "bottom_left",
    "bottom_right",
)

QUESTION_TYPES = ("category", "spatial", "other")


@dataclass(frozen=True)
class QuestionType:
    """What a first-turn question asks: its type, its form (a category word or a spatial form), and for category
    questions the COCO categories whose objects it refers to."""

    question_type: str  # category | spatial | other
    form: str | None = None  # category: the canonical word ("person", "animal"); spatial: one of SPATIAL_FORMS
    categories: tuple[str, ...] = ()


def _plural(word: str) -> str:
    if word in IRREGULAR_PLURALS:
        return IRREGULAR_PLURALS[word]
    head, _, last = word.rpartition(" ")
    prefix = f"{head} " if head else ""
    if last in IRREGULAR_PLURALS:
        return prefix + IRREGULAR_PLURALS[last]
    if re.search(r"(s|x|z|ch|sh)$", last):
        return f"{prefix}{last}es"
    if re.search(r"[^aeiou]y$", last):
        return f"{prefix}{last[:-1]}ies"
    return f"{prefix}{last}s"


def _category_phrases() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Every phrase (singular and plural) -> (canonical word, the COCO categories it refers to)."""
    phrases: dict[str, tuple[str, tuple[str, ...]]] = {}

    def add(phrase: str, canonical: str, cats: tuple[str, ...]) -> None:
        for p in (phrase, _plural(phrase)):
            phrases.setdefault(p, (canonical, cats))

    for cat in COCO_CATEGORIES:
        add(cat, cat, (cat,))
    for cat, words in CATEGORY_SYNONYMS.items():
        for w in words:
            add(w, cat, (cat,))
    for word, cats in GROUP_WORDS.items():
        add(word, GROUP_CANONICAL.get(word, word), cats)
    return phrases


CATEGORY_PHRASES = _category_phrases()
# Longest phrases first, so "teddy bear" is found before "bear" and "hot dog" before "dog".
_PHRASE_RE = re.compile(
    r"\b(" + "|".join(re.escape(p) for p in sorted(CATEGORY_PHRASES, key=len, reverse=True)) + r")\b"
)


def tokens(question: str) -> list[str]:
    """Lower-case word tokens; apostrophes inside words are kept ("it's")."""
    return re.findall(r"[a-z0-9]+(?:'[a-z]+)?", question.lower())


def _spatial_form(words: list[str]) -> str | None:
    horizontal = [HORIZONTAL[w] for w in words if w in HORIZONTAL]
    vertical = [VERTICAL[w] for w in words if w in VERTICAL]
    middle = [w for w in words if w in MIDDLE]
    if middle:
        return "middle" if not horizontal and not vertical and len(middle) == 1 else None
    if len(horizontal) > 1 or len(vertical) > 1:
        return None
    if horizontal and vertical:
        return f"{vertical[0]}_{horizontal[0]}"
    if vertical:
        return vertical[0]
    if horizontal:
        i = next(i for i, w in enumerate(words) if w in HORIZONTAL)
        half = "half" in words or (i + 1 < len(words) and words[i + 1] in HALF_MARKERS)
        return f"{horizontal[0]}_half" if half else horizontal[0]
    return None


def classify(question: str) -> QuestionType:
    """The type of a first-turn question (see the module docstring for the rules)."""
    text = " ".join(tokens(question))
    if not text:
        return QuestionType("other")
    found = list(_PHRASE_RE.finditer(text))
    spatial_words = [w for w in text.split() if w in HORIZONTAL or w in VERTICAL or w in MIDDLE]
    if len(found) == 1 and not spatial_words:
        rest = (text[: found[0].start()] + " " + text[found[0].end() :]).split()
        if all(w in CATEGORY_FILLERS for w in rest):
            canonical, cats = CATEGORY_PHRASES[found[0].group(1)]
            return QuestionType("category", canonical, cats)
        return QuestionType("other")
    if not found and spatial_words:
        words = text.split()
        rest = [w for w in words if not (w in HORIZONTAL or w in VERTICAL or w in MIDDLE)]
        form = _spatial_form(words)
        if form is not None and all(w in SPATIAL_FILLERS for w in rest):
            return QuestionType("spatial", form)
    return QuestionType("other")
