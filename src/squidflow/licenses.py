"""Licence ids a machine can read: the Hugging Face Hub's licence identifiers (what a dataset card's `license:` header
takes, huggingface.co/docs/hub/repositories-licenses), each with its SPDX id where SPDX has one, so that the card's
header, its text and Croissant's `license` (an SPDX URL) all come from the one value `publish.license`.

`other` is the Hub's id for a licence it does not list: `publish.license_name` (a short id) and
`publish.license_link` (where its text is) then say which one.
"""

from __future__ import annotations

import difflib
import re

# Hub id -> SPDX id (None: SPDX has no id for it; Croissant then names the Hub's licence list or license_link)
HUB_LICENSES: dict[str, str | None] = {
    "apache-2.0": "Apache-2.0", "mit": "MIT", "openrail": None, "bigscience-openrail-m": None,
    "creativeml-openrail-m": None, "bigscience-bloom-rail-1.0": None, "bigcode-openrail-m": None,
    "afl-3.0": "AFL-3.0", "artistic-2.0": "Artistic-2.0", "bsl-1.0": "BSL-1.0", "bsd": None,
    "bsd-2-clause": "BSD-2-Clause", "bsd-3-clause": "BSD-3-Clause", "bsd-3-clause-clear": "BSD-3-Clause-Clear",
    "c-uda": "C-UDA-1.0", "cc": None, "cc0-1.0": "CC0-1.0", "cc-by-2.0": "CC-BY-2.0", "cc-by-2.5": "CC-BY-2.5",
    "cc-by-3.0": "CC-BY-3.0", "cc-by-4.0": "CC-BY-4.0", "cc-by-sa-3.0": "CC-BY-SA-3.0",
    "cc-by-sa-4.0": "CC-BY-SA-4.0", "cc-by-nc-2.0": "CC-BY-NC-2.0", "cc-by-nc-3.0": "CC-BY-NC-3.0",
    "cc-by-nc-4.0": "CC-BY-NC-4.0", "cc-by-nd-4.0": "CC-BY-ND-4.0", "cc-by-nc-nd-3.0": "CC-BY-NC-ND-3.0",
    "cc-by-nc-nd-4.0": "CC-BY-NC-ND-4.0", "cc-by-nc-sa-2.0": "CC-BY-NC-SA-2.0",
    "cc-by-nc-sa-3.0": "CC-BY-NC-SA-3.0", "cc-by-nc-sa-4.0": "CC-BY-NC-SA-4.0",
    "cdla-sharing-1.0": "CDLA-Sharing-1.0", "cdla-permissive-1.0": "CDLA-Permissive-1.0",
    "cdla-permissive-2.0": "CDLA-Permissive-2.0", "wtfpl": "WTFPL", "ecl-2.0": "ECL-2.0", "epl-1.0": "EPL-1.0",
    "epl-2.0": "EPL-2.0", "etalab-2.0": "etalab-2.0", "eupl-1.1": "EUPL-1.1", "eupl-1.2": "EUPL-1.2",
    "agpl-3.0": "AGPL-3.0-only", "gfdl": "GFDL-1.3-only", "gpl": None, "gpl-2.0": "GPL-2.0-only",
    "gpl-3.0": "GPL-3.0-only", "lgpl": None, "lgpl-2.1": "LGPL-2.1-only", "lgpl-3.0": "LGPL-3.0-only",
    "isc": "ISC", "lppl-1.3c": "LPPL-1.3c", "ms-pl": "MS-PL", "mpl-2.0": "MPL-2.0", "odc-by": "ODC-By-1.0",
    "odbl": "ODbL-1.0", "openrail++": None, "osl-3.0": "OSL-3.0", "postgresql": "PostgreSQL", "ofl-1.1": "OFL-1.1",
    "ncsa": "NCSA", "unlicense": "Unlicense", "zlib": "Zlib", "pddl": "PDDL-1.0", "lgpl-lr": None,
    "deepfloyd-if-license": None, "llama2": None, "llama3": None, "llama3.1": None, "llama3.2": None,
    "llama3.3": None, "gemma": None, "apple-ascl": None, "unknown": None, "other": None,
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
        return [f"publish.license = {value!r} is not a Hugging Face Hub licence id.{hint} Use an id from "
                f"{HUB_LICENSES_URL} (e.g. cc-by-4.0, mit, apache-2.0), or `other` with publish.license_name and "
                "publish.license_link."]
    if value == "other":
        missing = [k for k in ("license_name", "license_link") if not str(publish.get(k) or "").strip()]
        if missing:
            return [f"publish.license is 'other' but {' and '.join('publish.' + k for k in missing)} "
                    f"{'is' if len(missing) == 1 else 'are'} empty: name the licence (a short id, e.g. my-licence-1.0) "
                    "and give the URL of its text."]
    return []


def spdx_url(license_id: str, link: str = "") -> str:
    """Croissant's `license`: the SPDX page of the licence; `other` (or an id SPDX does not list): its link, else the
    Hub's licence list."""
    spdx = HUB_LICENSES.get(license_id)
    if spdx:
        return f"https://spdx.org/licenses/{spdx}.html"
    return link or HUB_LICENSES_URL


def spdx_id(license_id: str) -> str | None:
    return HUB_LICENSES.get(license_id)
