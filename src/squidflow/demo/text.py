"""Synthetic metadata for the demo videos: titles, descriptions, tags in a few languages.

Real uploads describe an event through what can be seen ("balloons everywhere, the kids sang") mixed with remarks
that make a frame hard to judge ("sorry for the shaky bits, the lights went out"). The comparison stage builds
Sherlock-style (clue, inference) text from these descriptions, so they are assembled from phrase banks — per event
clues, actions and places slotted into sentence templates, plus shared ambiguous remarks — giving hundreds of
distinct sentences per event, all deterministic for a random generator.

Events without a bank of their own (any id is allowed in `demo.events`) get generic English sentences built from the
event's name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# --- English: per-event banks ------------------------------------------------------------------------------------
EN: dict[str, dict[str, list[str]]] = {
    "birthday_party": {
        "name": ["birthday party", "birthday celebration", "kid's birthday", "surprise party"],
        "clues": [
            "a cake with lit candles",
            "balloons tied to every chair",
            "a paper banner that says happy birthday",
            "party hats on all the kids",
            "a pile of wrapped presents",
            "confetti all over the table",
            "a piñata hanging from the tree",
            "cupcakes with sprinkles",
            "a number candle on the cake",
            "streamers across the ceiling",
            "paper plates with cake crumbs",
            "a bouncy castle in the garden",
            "gift bags lined up by the door",
            "a clown making balloon animals",
        ],
        "actions": [
            "everyone sings happy birthday",
            "the kids blow out the candles together",
            "the presents get unwrapped",
            "grandma cuts the cake",
            "the children play musical chairs",
            "somebody pops a balloon by accident",
            "the guests shout surprise",
            "the birthday girl opens her last gift",
        ],
        "tags": ["cake", "candles", "balloons", "presents", "kids party", "happy birthday", "party hats", "surprise"],
        "places": [
            "in our back garden",
            "at the community hall",
            "in a small living room",
            "at the park pavilion",
            "at a pizza place",
            "in the kitchen",
        ],
    },
    "wedding": {
        "name": ["wedding", "wedding ceremony", "wedding reception", "marriage celebration"],
        "clues": [
            "a bride in a long white dress",
            "the groom in a dark suit",
            "an arch covered in white flowers",
            "rows of chairs with ribbons",
            "a tall tiered cake",
            "the rings on a small cushion",
            "bridesmaids in matching dresses",
            "a string quartet by the aisle",
            "rice thrown over the couple",
            "a veil blowing in the wind",
            "table cards with the guests' names",
            "a bouquet of white roses",
            "fairy lights strung over the dance floor",
            "champagne glasses raised for a toast",
        ],
        "actions": [
            "the couple exchanges vows",
            "the bride walks down the aisle",
            "the best man gives a speech",
            "the newlyweds share their first dance",
            "the guests throw petals",
            "the bouquet is tossed",
            "the couple cuts the cake",
            "everyone raises a glass",
        ],
        "tags": ["bride", "groom", "wedding day", "first dance", "ceremony", "vows", "reception", "bouquet"],
        "places": [
            "in a village church",
            "on the beach at sunset",
            "in a vineyard",
            "at an old manor house",
            "in a city registry office",
            "in a big white tent",
        ],
    },
    "parade": {
        "name": ["parade", "street parade", "carnival parade", "holiday parade"],
        "clues": [
            "a marching band in red uniforms",
            "floats decorated with paper flowers",
            "drummers keeping the beat",
            "crowds lining both sides of the street",
            "flags waving from every balcony",
            "dancers in feathered costumes",
            "a giant inflatable character",
            "stilt walkers towering over the crowd",
            "a fire truck leading the way",
            "children sitting on their parents' shoulders",
            "confetti cannons firing",
            "horses with braided manes",
            "baton twirlers in sequins",
            "a brass section playing in step",
        ],
        "actions": [
            "the band marches past",
            "the floats roll down the avenue",
            "the crowd cheers every group",
            "the dancers stop to perform",
            "candy gets thrown to the kids",
            "the drummers speed up",
            "the procession turns the corner",
            "the mayor waves from an open car",
        ],
        "tags": ["marching band", "floats", "carnival", "festival", "street", "costumes", "drums", "crowd"],
        "places": [
            "down main street",
            "through the old town",
            "along the seafront",
            "past city hall",
            "on a closed-off boulevard",
            "around the market square",
        ],
    },
    "protest": {
        "name": ["protest", "demonstration", "rally", "march"],
        "clues": [
            "hand-painted signs held high",
            "a crowd chanting with raised fists",
            "police lines at the edge",
            "a speaker with a megaphone",
            "banners stretched across the street",
            "people sitting down in the road",
            "placards with crossed-out slogans",
            "a sea of umbrellas",
            "organisers in high-visibility vests",
            "a drum circle keeping the chant going",
            "flags of the movement",
            "a barricade of metal fences",
            "people filming with their phones held up",
            "leaflets scattered on the pavement",
        ],
        "actions": [
            "the crowd chants the same line again and again",
            "the march moves towards the square",
            "a speaker addresses the crowd",
            "police ask people to move back",
            "the crowd kneels in silence",
            "the signs go up all at once",
            "people link arms across the road",
            "the chanting gets louder",
        ],
        "tags": ["march", "rally", "demonstration", "signs", "chanting", "police", "activism", "crowd"],
        "places": [
            "outside parliament",
            "in front of city hall",
            "on the main bridge",
            "at the university gates",
            "in the central square",
            "outside the embassy",
        ],
    },
    "concert": {
        "name": ["concert", "live show", "gig", "music festival set"],
        "clues": [
            "stage lights sweeping over the crowd",
            "a drummer behind a huge kit",
            "hands in the air",
            "a singer at the microphone stand",
            "speakers stacked beside the stage",
            "phone screens glowing",
            "a guitarist mid-solo",
            "smoke drifting across the stage",
            "a packed standing area",
            "wristbands and glow sticks",
            "a big screen behind the band",
            "fans on each other's shoulders",
        ],
        "actions": [
            "the crowd sings along",
            "the band starts the encore",
            "the lights go down before the drop",
            "everybody jumps at the chorus",
            "the singer dives into the crowd",
            "the drummer counts in",
        ],
        "tags": ["live music", "band", "festival", "stage", "crowd", "encore", "gig", "lights"],
        "places": [
            "at an open-air festival",
            "in a small club",
            "in a stadium",
            "at the town square stage",
            "in a concert hall",
        ],
    },
    "graduation": {
        "name": ["graduation", "graduation ceremony", "commencement", "prom and graduation day"],
        "clues": [
            "caps and gowns in the school colours",
            "mortarboards thrown in the air",
            "a stage with a lectern",
            "diplomas tied with ribbon",
            "proud parents with cameras",
            "tassels hanging from the caps",
            "rows of folding chairs on the lawn",
            "a banner with the class year",
            "flower leis around necks",
            "the dean in formal robes",
            "a podium with the school crest",
            "families holding bouquets",
        ],
        "actions": [
            "the graduates walk across the stage",
            "the caps fly up",
            "the valedictorian gives a speech",
            "names are read out one by one",
            "families cheer from the stands",
            "the class sings the anthem",
        ],
        "tags": ["graduation day", "class of", "caps", "diploma", "ceremony", "school", "university", "proud"],
        "places": [
            "on the football field",
            "in the school gym",
            "in the university hall",
            "on the campus lawn",
            "in an auditorium",
        ],
    },
}

EN_TEMPLATES = [
    "You can see {clue} {place}.",
    "We spotted {clue} right at the start, so it is clearly a {name}.",
    "Filmed {place}: {action}.",
    "At one point {action}, and you can spot {clue}.",
    "Look closely and you will notice {clue} behind the crowd.",
    "This is the {name} {place}; {action} near the end.",
    "The best moment is when {action}.",
    "Around the middle {action} while the camera pans over {clue}.",
    "My favourite detail is {clue}.",
    "We arrived late to the {name}, just as {action}.",
    "The whole {name} was {place}; the first thing we saw was {clue}.",
    "If you skip ahead you can see {clue} again.",
]
EN_TITLES = [
    "{Name} {place}",
    "Our {name} ({year})",
    "{Name} highlights",
    "Raw footage: {name} {place}",
    "{Name} vlog part {part}",
    "{Name} — {action}",
    "Best of the {name} {year}",
]
# Remarks that explain why some frames are hard to judge (the ambiguous stretches every demo video has).
EN_AMBIGUOUS = [
    "Sorry for the shaky camera in places.",
    "Someone walks right in front of the lens halfway through.",
    "The lights went out for a few seconds, so part of it is almost black.",
    "The picture goes blurry when I zoom in.",
    "It gets pretty dark towards the end.",
    "I cut in a few seconds from another video by mistake.",
    "There is a fade to a different clip in the middle.",
    "My thumb covers part of the shot for a moment.",
    "The focus hunts a lot, apologies.",
    "Hard to tell what is going on at first.",
    "The phone switched cameras briefly.",
    "Part of it was filmed through a window, so it is a bit hazy.",
    "There are a couple of black frames where I paused.",
    "It is not always obvious what you are looking at, but stick with it.",
    "Some of the footage is from a different day.",
    "Low light, so it is grainy in places.",
]
GENERIC = {
    "clues": [
        "people gathered close together",
        "decorations everywhere",
        "a crowd in the background",
        "a lot of colour and movement",
        "someone holding up a sign",
        "music playing loudly",
        "people dressed up for the occasion",
        "a small stage",
        "flags and banners",
        "food on long tables",
    ],
    "actions": [
        "people start cheering",
        "everyone gathers in the middle",
        "the main moment finally happens",
        "the crowd moves closer",
        "someone gives a short speech",
        "people start dancing",
    ],
    "places": ["in our town", "outside", "in a big hall", "downtown", "near the river"],
}

# --- other languages: the default events -------------------------------------------------------------------------
OTHER: dict[str, dict[str, Any]] = {
    "es": {
        "events": {
            "birthday_party": {
                "name": "fiesta de cumpleaños",
                "a": "una fiesta de cumpleaños",
                "at": "en la fiesta de cumpleaños",
                "our": "Nuestra fiesta de cumpleaños",
                "clues": [
                    "una tarta con velas encendidas",
                    "globos en todas las sillas",
                    "gorros de fiesta",
                    "una piñata colgada del árbol",
                    "regalos envueltos en la mesa",
                    "confeti por todas partes",
                ],
            },
            "wedding": {
                "name": "boda",
                "a": "una boda",
                "at": "en la boda",
                "our": "Nuestra boda",
                "clues": [
                    "la novia con un vestido blanco",
                    "un arco de flores blancas",
                    "los anillos en un cojín",
                    "una tarta de varios pisos",
                    "los invitados lanzando arroz",
                    "el primer baile de los novios",
                ],
            },
            "parade": {
                "name": "desfile",
                "a": "un desfile",
                "at": "en el desfile",
                "our": "Nuestro desfile",
                "clues": [
                    "una banda de música marchando",
                    "carrozas decoradas con flores",
                    "tambores en la calle",
                    "bailarines con plumas",
                    "banderas en los balcones",
                    "gente en las aceras",
                ],
            },
            "protest": {
                "name": "manifestación",
                "a": "una manifestación",
                "at": "en la manifestación",
                "our": "Nuestra manifestación",
                "clues": [
                    "pancartas pintadas a mano",
                    "gente gritando consignas",
                    "un megáfono",
                    "la policía en fila",
                    "banderas del movimiento",
                    "una multitud en la plaza",
                ],
            },
        },
        "templates": [
            "Se ve {clue} al principio.",
            "Es {a} y hay {clue}.",
            "Grabado {at}: {clue}.",
            "Lo mejor es cuando aparece {clue}.",
            "Si miras bien verás {clue}.",
        ],
        "titles": ["{our} {year}", "{Name} ({year})", "Vídeo: {name}", "{Name}: parte {part}"],
        "ambiguous": [
            "Perdón por la cámara movida.",
            "Alguien pasa delante de la cámara.",
            "Se va la luz unos segundos.",
            "La imagen sale borrosa en algunos momentos.",
            "Hacia el final está muy oscuro.",
        ],
    },
    "fr": {
        "events": {
            "birthday_party": {
                "name": "fête d'anniversaire",
                "a": "une fête d'anniversaire",
                "at": "pendant la fête d'anniversaire",
                "our": "Notre fête d'anniversaire",
                "clues": [
                    "un gâteau avec des bougies",
                    "des ballons partout",
                    "des chapeaux pointus",
                    "une pile de cadeaux",
                    "des guirlandes au plafond",
                    "des confettis sur la table",
                ],
            },
            "wedding": {
                "name": "mariage",
                "a": "un mariage",
                "at": "pendant le mariage",
                "our": "Notre mariage",
                "clues": [
                    "la mariée en robe blanche",
                    "une arche de fleurs",
                    "les alliances",
                    "une pièce montée",
                    "les invités qui lancent du riz",
                    "la première danse des mariés",
                ],
            },
            "parade": {
                "name": "défilé",
                "a": "un défilé",
                "at": "pendant le défilé",
                "our": "Notre défilé",
                "clues": [
                    "une fanfare en uniforme",
                    "des chars fleuris",
                    "des tambours",
                    "des danseurs costumés",
                    "des drapeaux aux fenêtres",
                    "la foule sur les trottoirs",
                ],
            },
            "protest": {
                "name": "manifestation",
                "a": "une manifestation",
                "at": "pendant la manifestation",
                "our": "Notre manifestation",
                "clues": [
                    "des pancartes faites main",
                    "une foule qui scande des slogans",
                    "un mégaphone",
                    "un cordon de police",
                    "des banderoles",
                    "des gens assis sur la chaussée",
                ],
            },
        },
        "templates": [
            "On voit {clue} dès le début.",
            "C'est {a}, avec {clue}.",
            "Filmé {at} : {clue}.",
            "Le meilleur moment, c'est {clue}.",
            "Regardez bien, il y a {clue}.",
        ],
        "titles": ["{our} {year}", "{Name} ({year})", "Vidéo : {name}", "{Name} : partie {part}"],
        "ambiguous": [
            "Désolé pour la caméra qui tremble.",
            "Quelqu'un passe devant l'objectif.",
            "La lumière s'éteint quelques secondes.",
            "L'image devient floue par moments.",
            "Vers la fin, c'est très sombre.",
        ],
    },
    "de": {
        "events": {
            "birthday_party": {
                "name": "Geburtstagsfeier",
                "a": "eine Geburtstagsfeier",
                "at": "bei der Geburtstagsfeier",
                "our": "Unsere Geburtstagsfeier",
                "clues": [
                    "eine Torte mit brennenden Kerzen",
                    "Luftballons an allen Stühlen",
                    "Partyhüte",
                    "einen Stapel Geschenke",
                    "Girlanden an der Decke",
                    "Konfetti auf dem Tisch",
                ],
            },
            "wedding": {
                "name": "Hochzeit",
                "a": "eine Hochzeit",
                "at": "bei der Hochzeit",
                "our": "Unsere Hochzeit",
                "clues": [
                    "die Braut im weißen Kleid",
                    "einen Blumenbogen",
                    "die Ringe auf einem Kissen",
                    "eine mehrstöckige Torte",
                    "Gäste, die Reis werfen",
                    "den ersten Tanz des Paares",
                ],
            },
            "parade": {
                "name": "Umzug",
                "a": "ein Umzug",
                "at": "beim Umzug",
                "our": "Unser Umzug",
                "clues": [
                    "eine Blaskapelle in Uniform",
                    "geschmückte Festwagen",
                    "Trommler auf der Straße",
                    "Tänzer in Kostümen",
                    "Fahnen an den Balkonen",
                    "Zuschauer am Straßenrand",
                ],
            },
            "protest": {
                "name": "Demonstration",
                "a": "eine Demonstration",
                "at": "bei der Demonstration",
                "our": "Unsere Demonstration",
                "clues": [
                    "selbst gemalte Schilder",
                    "eine Menge, die Parolen ruft",
                    "ein Megafon",
                    "eine Polizeikette",
                    "Transparente über der Straße",
                    "Leute, die auf der Straße sitzen",
                ],
            },
        },
        "templates": [
            "Am Anfang sieht man {clue}.",
            "Das ist {a}, man sieht {clue}.",
            "Gefilmt {at}: {clue}.",
            "Der beste Moment: {clue}.",
            "Wer genau hinschaut, sieht {clue}.",
        ],
        "titles": ["{our} {year}", "{Name} ({year})", "Video: {name}", "{Name} Teil {part}"],
        "ambiguous": [
            "Sorry für die wackelige Kamera.",
            "Jemand läuft direkt vor die Kamera.",
            "Das Licht ging für ein paar Sekunden aus.",
            "Das Bild ist manchmal unscharf.",
            "Gegen Ende wird es sehr dunkel.",
        ],
    },
}
LANGUAGES = ("en", "es", "fr", "de")
LANGUAGE_P = (0.55, 0.15, 0.15, 0.15)
EXTRA_TAGS = [
    "vlog",
    "hd",
    "family",
    "friends",
    "live",
    "2019",
    "2021",
    "2023",
    "memories",
    "phone video",
    "raw",
    "weekend",
    "summer",
    "city",
    "highlights",
]


def _pick(rng: np.random.Generator, items: list[str]) -> str:
    return items[int(rng.integers(len(items)))]


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _english(event: str, rng: np.random.Generator) -> dict[str, Any]:
    bank = EN.get(event)
    readable = event.replace("_", " ")
    if bank is None:
        bank = {"name": [readable, f"{readable} event", f"local {readable}"], "tags": readable.split(), **GENERIC}

    clues = iter([bank["clues"][i] for i in rng.permutation(len(bank["clues"]))])  # no clue twice in one video

    def slots() -> dict[str, str]:
        name = _pick(rng, bank["name"])
        return {
            "clue": next(clues),
            "action": _pick(rng, bank["actions"]),
            "place": _pick(rng, bank["places"]),
            "name": name,
            "Name": _cap(name),
            "year": str(int(rng.integers(2012, 2025))),
            "part": str(int(rng.integers(1, 5))),
        }

    n_event = int(rng.integers(2, 5))
    templates = [EN_TEMPLATES[i] for i in rng.choice(len(EN_TEMPLATES), size=n_event, replace=False)]
    sentences = [_cap(t.format(**slots())) for t in templates]
    n_amb = int(rng.integers(1, 3))
    sentences += [EN_AMBIGUOUS[i] for i in rng.choice(len(EN_AMBIGUOUS), size=n_amb, replace=False)]
    sentences = [sentences[i] for i in rng.permutation(len(sentences))]
    title = _pick(rng, EN_TITLES).format(**slots())
    keywords = [str(k) for k in rng.choice(bank["tags"], size=min(3, len(bank["tags"])), replace=False)]
    return {"title": _cap(title), "description": " ".join(sentences), "language": "en", "tags": [readable, *keywords]}


def _other(event: str, language: str, rng: np.random.Generator) -> dict[str, Any]:
    bank = OTHER[language]
    ev = bank["events"][event]
    slots = {
        "name": ev["name"],
        "Name": _cap(ev["name"]),
        "a": ev["a"],
        "at": ev["at"],
        "our": ev["our"],
        "year": str(int(rng.integers(2012, 2025))),
        "part": str(int(rng.integers(1, 5))),
    }
    n_event = int(rng.integers(2, 4))
    templates = [bank["templates"][i] for i in rng.choice(len(bank["templates"]), size=n_event, replace=False)]
    clues = [ev["clues"][i] for i in rng.permutation(len(ev["clues"]))]  # no clue twice in one description
    sentences = [_cap(t.format(clue=clue, **slots)) for t, clue in zip(templates, clues, strict=False)]
    sentences += [
        bank["ambiguous"][i] for i in rng.choice(len(bank["ambiguous"]), size=int(rng.integers(1, 3)), replace=False)
    ]
    sentences = [sentences[i] for i in rng.permutation(len(sentences))]
    return {
        "title": _pick(rng, bank["titles"]).format(**slots),
        "description": " ".join(sentences),
        "language": language,
        "tags": [ev["name"].lower(), event.replace("_", " ")],
    }


def describe_video(event: str, rng: np.random.Generator) -> dict[str, Any]:
    """title, description (several sentences), language and tags for one video of `event`."""
    language = str(rng.choice(LANGUAGES, p=LANGUAGE_P))
    if language != "en" and event in OTHER[language]["events"]:
        out = _other(event, language, rng)
    else:
        out = _english(event, rng)
    extra = [EXTRA_TAGS[i] for i in rng.choice(len(EXTRA_TAGS), size=int(rng.integers(1, 4)), replace=False)]
    out["tags"] = list(dict.fromkeys([*out["tags"], *extra]))
    return out
