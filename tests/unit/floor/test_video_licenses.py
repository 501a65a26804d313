"""A licence statement is read as a whole (squidflow.vocabulary.licenses): Creative Commons only when all of it says so."""

from __future__ import annotations

import pytest
from yt_dlp.utils import match_filter_func

from squidflow.vocabulary.licenses import (
    YOUTUBE_CC_BY,
    allowed,
    cc_family,
    licence_refusal,
    wanted_families,
    ytdlp_match_filter,
)


@pytest.mark.parametrize(("stated", "family"), [
    (YOUTUBE_CC_BY, "cc-by"),
    ("Creative Commons Attribution license", "cc-by"),
    ("cc-by-4.0", "cc-by"),
    ("CC BY-SA 4.0", "cc-by-sa"),
    ("cc-by-nc-nd-4.0", "cc-by-nc-nd"),
    ("cc0-1.0", "cc0"),
    ("Creative Commons Attribution-NonCommercial-ShareAlike 4.0 International License", "cc-by-nc-sa"),
    ("https://creativecommons.org/licenses/by-nc/4.0/", "cc-by-nc"),
    ("https://creativecommons.org/publicdomain/zero/1.0/", "cc0"),
    ("Standard YouTube License", None),
    ("Standard YouTube License; NOT creative commons", None),
    ("cc-by-sa-nd", None),
    ("mit", None),
    ("", None),
    (None, None),
    ("unknown", None),
])  # fmt: skip
def test_a_statement_is_creative_commons_only_as_a_whole(stated, family):
    assert cc_family(stated) == family


def test_a_source_wish_keeps_its_families_and_refuses_the_rest():
    assert wanted_families(None) is None and wanted_families(["cc-by-4.0", "CC BY-SA"]) == {"cc-by", "cc-by-sa"}
    assert allowed("anything", None) and allowed(YOUTUBE_CC_BY, ["cc-by"]) and not allowed(YOUTUBE_CC_BY, ["cc-by-sa"])
    assert not allowed(None, ["cc-by"])
    assert licence_refusal(None, ["cc-by"]) == "no licence stated; the source asks for cc-by (sources[].licenses)"
    assert licence_refusal(YOUTUBE_CC_BY, ["cc-by"]) is None
    with pytest.raises(ValueError, match="'gpl' is not a Creative Commons licence id"):
        wanted_families(["gpl"])


def test_the_youtube_match_filter_is_ytdlps_own_and_agrees():
    """The expression goes to yt-dlp as --match-filter: yt-dlp's own parser takes CC BY, refuses the standard
    licence and a statement that only mentions Creative Commons, and lets a flat search entry (no licence yet) pass
    to the download, where the full info decides."""
    keep = match_filter_func(ytdlp_match_filter(["cc-by", "cc-by-sa"]))
    assert keep({"id": "a", "license": YOUTUBE_CC_BY}) is None
    assert keep({"id": "a", "license": "Standard YouTube License"}) is not None
    assert keep({"id": "a", "license": "Standard YouTube License; NOT creative commons"}) is not None
    assert keep({"id": "a"}) is not None and keep({"id": "a"}, incomplete=True) is None
    none = match_filter_func(ytdlp_match_filter(["cc-by-sa"]))
    assert none({"id": "a", "license": YOUTUBE_CC_BY}) is not None
    assert ytdlp_match_filter(None) is None
