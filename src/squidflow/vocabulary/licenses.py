"""Licence ids a machine can read: the Hugging Face Hub's licence identifiers (what a dataset card's `license:` header
takes, huggingface.co/docs/hub/repositories-licenses), each with its SPDX id where SPDX has one, so that the card's
header, its text and Croissant's `license` (an SPDX URL) all come from the one value `publish.license`.

`other` is the Hub's id for a licence it does not list: `publish.license_name` (a short id) and
`publish.license_link` (where its text is) then say which one.

A video's licence, as its source states it, is read the other way: as a Creative Commons licence only when the
whole statement is one.

A video's licence as its source states it, read as a Creative Commons licence only when the whole statement is one.

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

import difflib
import re
from collections.abc import Iterable

# Hub id -> SPDX id (None: SPDX has no id for it; Croissant then names the Hub's licence list or license_link)
HUB_LICENSES: dict[str, str | None] = {
    "apache-2.0": "Apache-2.0",
    "mit": "MIT",
    "openrail": None,
    "bigscience-openrail-m": None,
    "creativeml-openrail-m": None,
    "bigscience-bloom-rail-1.0": None,
    "bigcode-openrail-m": None,
    "afl-3.0": "AFL-3.0",
    "artistic-2.0": "Artistic-2.0",
    "bsl-1.0": "BSL-1.0",
    "bsd": None,
    "bsd-2-clause": "BSD-2-Clause",
    "bsd-3-clause": "BSD-3-Clause",
    "bsd-3-clause-clear": "BSD-3-Clause-Clear",
    "c-uda": "C-UDA-1.0",
    "cc": None,
    "cc0-1.0": "CC0-1.0",
    "cc-by-2.0": "CC-BY-2.0",
    "cc-by-2.5": "CC-BY-2.5",
    "cc-by-3.0": "CC-BY-3.0",
    "cc-by-4.0": "CC-BY-4.0",
    "cc-by-sa-3.0": "CC-BY-SA-3.0",
    "cc-by-sa-4.0": "CC-BY-SA-4.0",
    "cc-by-nc-2.0": "CC-BY-NC-2.0",
    "cc-by-nc-3.0": "CC-BY-NC-3.0",
    "cc-by-nc-4.0": "CC-BY-NC-4.0",
    "cc-by-nd-4.0": "CC-BY-ND-4.0",
    "cc-by-nc-nd-3.0": "CC-BY-NC-ND-3.0",
    "cc-by-nc-nd-4.0": "CC-BY-NC-ND-4.0",
    "cc-by-nc-sa-2.0": "CC-BY-NC-SA-2.0",
    "cc-by-nc-sa-3.0": "CC-BY-NC-SA-3.0",
    "cc-by-nc-sa-4.0": "CC-BY-NC-SA-4.0",
    "cdla-sharing-1.0": "CDLA-Sharing-1.0",
    "cdla-permissive-1.0": "CDLA-Permissive-1.0",
    "cdla-permissive-2.0": "CDLA-Permissive-2.0",
    "wtfpl": "WTFPL",
    "ecl-2.0": "ECL-2.0",
    "epl-1.0": "EPL-1.0",
    "epl-2.0": "EPL-2.0",
    "etalab-2.0": "etalab-2.0",
    "eupl-1.1": "EUPL-1.1",
    "eupl-1.2": "EUPL-1.2",
    "agpl-3.0": "AGPL-3.0-only",
    "gfdl": "GFDL-1.3-only",
    "gpl": None,
    "gpl-2.0": "GPL-2.0-only",
    "gpl-3.0": "GPL-3.0-only",
    "lgpl": None,
    "lgpl-2.1": "LGPL-2.1-only",
    "lgpl-3.0": "LGPL-3.0-only",
    "isc": "ISC",
    "lppl-1.3c": "LPPL-1.3c",
    "ms-pl": "MS-PL",
    "mpl-2.0": "MPL-2.0",
    "odc-by": "ODC-By-1.0",
    "odbl": "ODbL-1.0",
    "openrail++": None,
    "osl-3.0": "OSL-3.0",
    "postgresql": "PostgreSQL",
    "ofl-1.1": "OFL-1.1",
    "ncsa": "NCSA",
    "unlicense": "Unlicense",
    "zlib": "Zlib",
    "pddl": "PDDL-1.0",
    "lgpl-lr": None,
    "deepfloyd-if-license": None,
    "llama2": None,
    "llama3": None,
    "llama3.1": None,
    "llama3.2": None,
    "llama3.3": None,
    "gemma": None,
    "apple-ascl": None,
    "unknown": None,
    "other": None,
}
HUB_LICENSES_URL = "https://huggingface.co/docs/hub/repositories-licenses"


def _normalised(text: str) -> str:
    """'CC BY 4.0', 'CC-BY 4.0', 'cc_by_4.0' -> 'cc-by-4.0' (for the closest id only; never accepted as such)."""
    return re.sub(r"[\s_]+", "-", text.strip().lower()).replace("--", "-")


def closest(value: str) -> str | None:
    """The Hub id a string most likely means ('CC BY 4.0' -> 'cc-by-4.0'), None when none is close."""
    key = _normalised(value)
    if key in HUB_LICENSES:
        return key
    by_spdx = {str(s).lower(): hub for hub, s in HUB_LICENSES.items() if s}
    if key in by_spdx:
        return by_spdx[key]
    close = difflib.get_close_matches(key, list(HUB_LICENSES), n=1, cutoff=0.6)
    return close[0] if close else None


def problems(publish: dict) -> list[str]:
    """One line per problem with publish.license (an empty licence is the required-keys check's, not this one's)."""
    value = str(publish.get("license") or "")
    if not value.strip():
        return []
    if value not in HUB_LICENSES:
        near = closest(value)
        hint = f" Did you mean '{near}'?" if near else ""
        return [
            f"publish.license = {value!r} is not a Hugging Face Hub licence id.{hint} Use an id from "
            f"{HUB_LICENSES_URL} (e.g. cc-by-4.0, mit, apache-2.0), or `other` with publish.license_name and "
            "publish.license_link."
        ]
    if value == "other":
        missing = [k for k in ("license_name", "license_link") if not str(publish.get(k) or "").strip()]
        if missing:
            return [
                f"publish.license is 'other' but {' and '.join('publish.' + k for k in missing)} "
                f"{'is' if len(missing) == 1 else 'are'} empty: name the licence (a short id, e.g. my-licence-1.0) "
                "and give the URL of its text."
            ]
    return []


def spdx_url(license_id: str, link: str = "") -> str:
    """Croissant's `license`: the SPDX page of the licence; `other` (or an id SPDX does not list): its link, else the
    Hub's licence list."""
    spdx = HUB_LICENSES.get(license_id)
    if spdx:
        return f"https://spdx.org/licenses/{spdx}.html"
    return link or HUB_LICENSES_URL


# A video's licence as its source states it (issue 48; issue 44, case 10).
UNKNOWN = "unknown"
DEMO_LICENSE = "cc-by-4.0"  # the demo's videos and frames are synthetic, made by squidflow itself
# Creative Commons licence families, by their short ids (the version is not part of the family)
FAMILIES = ("cc0", "cc-by", "cc-by-sa", "cc-by-nd", "cc-by-nc", "cc-by-nc-sa", "cc-by-nc-nd")
_VERSION = r"(?:[ -]?v?(?P<version>[1-4]\.0|[1-4]))?"
_INTL = r"(?:[ -](?:international|generic|unported))?"
_LICENCE_WORD = r"(?:[ -](?:licen[cs]e|public licen[cs]e))?"
# cc-by-nc-sa-4.0, "CC BY-SA 4.0", cc0-1.0
_SHORT = re.compile(r"cc[ -]?(?P<parts>by(?:[ -](?:nc|sa|nd)){0,2})" + _VERSION + _INTL + _LICENCE_WORD)
_ZERO = re.compile(
    r"(?:cc0|cc[ -]zero|creative commons zero|creative commons cc0)"
    + _VERSION
    + _INTL
    + r"(?:[ -](?:universal|public domain dedication))*"
    + _LICENCE_WORD
)
# "Creative Commons Attribution-NonCommercial-ShareAlike 4.0 International License", YouTube's
# "Creative Commons Attribution license (reuse allowed)"
_LONG = re.compile(
    r"creative commons (?P<parts>attribution(?:[ -](?:non-?commercial|share-?alike|no-?derivatives|"
    r"no-?derivs)){0,2})" + _VERSION + _INTL + _LICENCE_WORD + r"(?: \(reuse allowed\))?"
)
_URL = re.compile(
    r"https?://(?:www\.)?creativecommons\.org/(?:licenses/(?P<parts>by(?:-(?:nc|sa|nd)){0,2})|"
    r"publicdomain/(?P<zero>zero))/(?:[1-4]\.0/?(?:[a-z]{2}/?)?)?(?:legalcode(?:\.[a-z]{2})?)?"
)
_WORDS = {
    "attribution": "by",
    "noncommercial": "nc",
    "non-commercial": "nc",
    "sharealike": "sa",
    "share-alike": "sa",
    "noderivatives": "nd",
    "no-derivatives": "nd",
    "noderivs": "nd",
    "no-derivs": "nd",
}


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
            raise ValueError(
                f"sources[].licenses: {wish!r} is not a Creative Commons licence id (one of {', '.join(FAMILIES)})"
            )
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
