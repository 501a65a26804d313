"""A video's licence as its source states it, read as a Creative Commons licence only when the whole statement is one.

Sources say it in their own words: yt-dlp's `license` field for YouTube ("Creative Commons Attribution license
(reuse allowed)", read from the watch page's licence row; "Standard YouTube License" or nothing otherwise), the
`license` a `local` or `urls` source declares in the config (`cc-by-4.0`, "CC BY-SA 4.0", a creativecommons.org
URL). `cc_family` reads a statement as a whole, never by a word inside it, so "Standard YouTube License; NOT creative
commons" is no Creative Commons licence (issue 44, case 10); a statement it does not know is not one either (never
guessed). `UNKNOWN` is what a video whose source states nothing carries.

`licenses: [cc-by, cc-by-sa, ...]` on a source keeps only videos whose licence is of those families
(`wanted_families`, `allowed`); for a YouTube search the same wish is yt-dlp's `--match-filter` (`ytdlp_match_filter`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

UNKNOWN = "unknown"
DEMO_LICENSE = "cc-by-4.0"  # the demo's videos and frames are synthetic, made by squidflow itself
# Creative Commons licence families, by their short ids (the version is not part of the family)
FAMILIES = ("cc0", "cc-by", "cc-by-sa", "cc-by-nd", "cc-by-nc", "cc-by-nc-sa", "cc-by-nc-nd")
_VERSION = r"(?:[ -]?v?(?P<version>[1-4]\.0|[1-4]))?"
_INTL = r"(?:[ -](?:international|generic|unported))?"
_LICENCE_WORD = r"(?:[ -](?:licen[cs]e|public licen[cs]e))?"
# cc-by-nc-sa-4.0, "CC BY-SA 4.0", cc0-1.0
_SHORT = re.compile(r"cc[ -]?(?P<parts>by(?:[ -](?:nc|sa|nd)){0,2})" + _VERSION + _INTL + _LICENCE_WORD)
_ZERO = re.compile(r"(?:cc0|cc[ -]zero|creative commons zero|creative commons cc0)" + _VERSION + _INTL
                   + r"(?:[ -](?:universal|public domain dedication))*" + _LICENCE_WORD)
# "Creative Commons Attribution-NonCommercial-ShareAlike 4.0 International License", YouTube's
# "Creative Commons Attribution license (reuse allowed)"
_LONG = re.compile(r"creative commons (?P<parts>attribution(?:[ -](?:non-?commercial|share-?alike|no-?derivatives|"
                   r"no-?derivs)){0,2})" + _VERSION + _INTL + _LICENCE_WORD + r"(?: \(reuse allowed\))?")
_URL = re.compile(r"https?://(?:www\.)?creativecommons\.org/(?:licenses/(?P<parts>by(?:-(?:nc|sa|nd)){0,2})|"
                  r"publicdomain/(?P<zero>zero))/(?:[1-4]\.0/?(?:[a-z]{2}/?)?)?(?:legalcode(?:\.[a-z]{2})?)?")
_WORDS = {"attribution": "by", "noncommercial": "nc", "non-commercial": "nc", "sharealike": "sa", "share-alike": "sa",
          "noderivatives": "nd", "no-derivatives": "nd", "noderivs": "nd", "no-derivs": "nd"}


def _family(parts: list[str]) -> str | None:
    """by + at most one of nc, and at most one of sa/nd, in the canonical order (cc-by-nc-sa)."""
    if parts[:1] != ["by"] or len(set(parts)) != len(parts) or ("sa" in parts and "nd" in parts):
        return None
    rest = [p for p in ("nc", "sa", "nd") if p in parts]
    return "-".join(["cc", "by", *rest])


def cc_family(text: str | None) -> str | None:
    """The Creative Commons family (`cc-by`, `cc-by-sa`, ..., `cc0`) of a licence statement when the whole statement
    names one, else None (no statement, another licence, a sentence that only mentions Creative Commons)."""
    if not text:
        return None
    t = " ".join(str(text).strip().lower().split()).rstrip(".")
    if m := _URL.fullmatch(t):
        return "cc0" if m["zero"] else _family(m["parts"].split("-"))
    if _ZERO.fullmatch(t):
        return "cc0"
    if m := _SHORT.fullmatch(t):
        return _family(re.split(r"[ -]", m["parts"]))
    if m := _LONG.fullmatch(t):
        words = re.findall(r"attribution|non-?commercial|share-?alike|no-?derivatives|no-?derivs", m["parts"])
        return _family([_WORDS[w] for w in words])
    return None


def is_creative_commons(text: str | None) -> bool:
    return cc_family(text) is not None


def wanted_families(licenses: Iterable[str] | None) -> set[str] | None:
    """A source's `licenses` as families (None: any licence). A wish that names no Creative Commons licence is an
    error naming it (the config schema's enum refuses it first)."""
    if licenses is None:
        return None
    out = set()
    for wish in licenses:
        fam = cc_family(wish)
        if fam is None:
            raise ValueError(f"sources[].licenses: {wish!r} is not a Creative Commons licence id (one of {', '.join(FAMILIES)})")
        out.add(fam)
    return out


def allowed(text: str | None, licenses: Iterable[str] | None) -> bool:
    """Whether a video whose source states `text` may be taken by a source that asks for `licenses` (None: any)."""
    wanted = wanted_families(licenses)
    return wanted is None or cc_family(text) in wanted


# YouTube offers one Creative Commons licence, CC BY, which yt-dlp reads from the watch page's licence row as this
YOUTUBE_CC_BY = "Creative Commons Attribution license (reuse allowed)"


def ytdlp_match_filter(licenses: Iterable[str] | None) -> str | None:
    """yt-dlp's `--match-filter` expression for a source's `licenses` (None: no filter). YouTube states only CC BY,
    so a wish without cc-by asks for a licence YouTube never states: the filter then refuses every video."""
    wanted = wanted_families(licenses)
    if wanted is None:
        return None
    if "cc-by" not in wanted:
        return "license = 'no licence YouTube states'"
    return r"license ~= '(?i)^\s*creative commons attribution licen[cs]e( \(reuse allowed\))?\s*$'"


def licence_refusal(text: str | None, licenses: Iterable[str] | None) -> str | None:
    """Why a video is left out for its licence (the `error` of its row), or None when it may be taken."""
    if allowed(text, licenses):
        return None
    stated = f"licence {text!r}" if text else "no licence stated"
    return f"{stated}; the source asks for {', '.join(sorted(wanted_families(licenses) or ()))} (sources[].licenses)"
