"""Preprocessing settings: how co-occurring text becomes candidate keywords, one named setting per choice.

"Apples to Oranges" shows that preprocessing alone reorders published image annotators (and tf against tf·idf), so
every choice is a key of a named setting (config `text.keywords.settings`), and the keyword table has a row per
setting: which text fields, which subtitle window, lowercasing, stop words per language, stemming (Snowball) or
lemmatisation (simplemma, whose dictionaries ship with the package: nothing is downloaded), the shortest token.

Tokens are runs of letters and digits (any script) with inner apostrophes; a possessive `'s` is dropped; tokens of
digits only are dropped unless `numbers`. Gold keywords are normalised by the same setting (`Normaliser.phrase`),
without stop-word removal, so that a stemmed system is compared with stemmed gold.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from squidflow.config.validation import from_section

log = logging.getLogger(__name__)

FIELDS = ("title", "description", "tags", "subtitles")
NORMALISE = ("none", "stem", "lemma")
TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
SNOWBALL = {
    "ar": "arabic",
    "ca": "catalan",
    "cs": "czech",
    "da": "danish",
    "de": "german",
    "el": "greek",
    "en": "english",
    "es": "spanish",
    "et": "estonian",
    "eu": "basque",
    "fi": "finnish",
    "fr": "french",
    "ga": "irish",
    "hi": "hindi",
    "hu": "hungarian",
    "hy": "armenian",
    "id": "indonesian",
    "it": "italian",
    "lt": "lithuanian",
    "ne": "nepali",
    "nl": "dutch",
    "no": "norwegian",
    "nb": "norwegian",
    "pl": "polish",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sr": "serbian",
    "sv": "swedish",
    "ta": "tamil",
    "tr": "turkish",
    "yi": "yiddish",
}


@dataclass(frozen=True)
class Preprocessing:
    """One `text.keywords.settings` entry (defaults and documentation: workflow/schemas/config.schema.yaml)."""

    name: str = "default"
    fields: tuple[str, ...] = FIELDS
    window_s: float | None = None  # None: the co-occurring window (text.subtitles.window_s)
    lowercase: bool = True
    stopwords: bool = True
    extra_stopwords: tuple[str, ...] = ()
    normalise: str = "stem"
    min_length: int = 2
    numbers: bool = False

    def __post_init__(self) -> None:
        bad = [f for f in self.fields if f not in FIELDS]
        if bad or not self.fields:
            raise ValueError(
                f"text.keywords.settings[{self.name}].fields = {list(self.fields)}: each must be one of {FIELDS}"
            )
        if self.normalise not in NORMALISE:
            raise ValueError(f"text.keywords.settings[{self.name}].normalise = {self.normalise!r}: one of {NORMALISE}")

    @classmethod
    def from_config(cls, section: dict[str, Any]) -> Preprocessing:
        return from_section(cls, section, strict=True)


def settings_from_config(entries: list[dict[str, Any]]) -> list[Preprocessing]:
    """The configured settings, checked: at least one, names unique."""
    settings = [Preprocessing.from_config(e) for e in entries]
    names = [s.name for s in settings]
    if not settings or len(set(names)) != len(names):
        raise ValueError(f"text.keywords.settings: need at least one setting with unique names, got {names}")
    return settings


@functools.lru_cache(maxsize=64)
def stopword_set(language: str) -> frozenset[str]:
    """The `stop-words` package's list for a language (lowercase); empty, with a log line, when it has none."""
    from stop_words import LANGUAGE_MAPPING, get_stop_words

    if language not in LANGUAGE_MAPPING:
        log.warning("no stop-word list for language %r: its stop words are kept", language)
        return frozenset()
    return frozenset(w.lower().replace("’", "'") for w in get_stop_words(language))


@functools.lru_cache(maxsize=64)
def _stemmer(language: str):
    import snowballstemmer

    name = SNOWBALL.get(language)
    if name is None:
        log.warning("no Snowball stemmer for language %r: its tokens are not stemmed", language)
        return None
    return snowballstemmer.stemmer(name)


@functools.lru_cache(maxsize=1)
def _lemma_languages() -> frozenset[str]:
    from simplemma.strategies.dictionaries.dictionary_factory import SUPPORTED_LANGUAGES

    return frozenset(SUPPORTED_LANGUAGES)


@dataclass
class Normaliser:
    """Turns text into the tokens of a setting, per language (the language of the text, e.g. a video's metadata
    language or its subtitles' language; `default_language` when it is unknown)."""

    setting: Preprocessing
    default_language: str = "en"
    _warned: set = field(default_factory=set, repr=False)
    _memo: dict = field(default_factory=dict, repr=False)  # (token, language) -> term: stemmers are pure Python

    def _language(self, language: str | None) -> str:
        """`en-US`, `en_GB`, `en-orig` -> `en`: stop words, stemmers and lemmatisers are keyed by the base code."""
        code = re.split(r"[-_]", (language or "").strip(), maxsplit=1)[0].lower()
        return code or self.default_language

    def _normalise(self, token: str, language: str) -> str:
        key = (token, language)
        if key not in self._memo:
            self._memo[key] = self._normalise_uncached(token, language)
        return self._memo[key]

    def _normalise_uncached(self, token: str, language: str) -> str:
        if self.setting.normalise == "stem":
            stemmer = _stemmer(language)
            return stemmer.stemWord(token) if stemmer is not None else token
        if self.setting.normalise == "lemma":
            if language not in _lemma_languages():
                if language not in self._warned:
                    self._warned.add(language)
                    log.warning("no simplemma dictionary for language %r: its tokens are not lemmatised", language)
                return token
            import simplemma

            return simplemma.lemmatize(token, lang=language)
        return token

    def raw_tokens(self, text: str | None) -> list[str]:
        """Tokens before stop words and normalisation (lowercased when the setting says so)."""
        if not text:
            return []
        out = []
        for tok in TOKEN.findall(text.replace("’", "'")):
            if tok.lower().endswith("'s"):
                tok = tok[:-2]
            if self.setting.lowercase:
                tok = tok.lower()
            out.append(tok)
        return out

    def surface_pairs(self, text: str | None, language: str | None = None) -> list[tuple[str, str]]:
        """(term, surface word) per kept token, in text order: the term is what is counted (normalised), the surface
        word what a person reads (a stem such as `parad` is shown as `parade`)."""
        lang = self._language(language)
        stop = self._stopwords(lang)
        out = []
        for tok in self.raw_tokens(text):
            if (
                tok.lower() in stop
                or len(tok) < self.setting.min_length
                or (tok.isdigit() and not self.setting.numbers)
            ):
                continue
            term = self._normalise(tok, lang)
            if term:
                out.append((term, tok))
        return out

    def tokens(self, text: str | None, language: str | None = None) -> list[str]:
        """The candidate terms of a text: tokenised, filtered (stop words, length, numbers) and normalised."""
        return [term for term, _ in self.surface_pairs(text, language)]

    def _stopwords(self, language: str) -> frozenset[str]:
        if not self.setting.stopwords:
            return frozenset()
        return stopword_set(language) | {w.lower() for w in self.setting.extra_stopwords}

    def phrase(self, keyword: str, language: str | None = None) -> str:
        """A gold keyword under this setting: each token normalised, no stop words removed, joined by a space."""
        lang = self._language(language)
        return " ".join(self._normalise(t, lang) for t in self.raw_tokens(keyword))
