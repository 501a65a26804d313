"""Subtitles: WebVTT and SubRip as they come from YouTube, streaming services and old tools, read into time-stamped
cues; the file found beside a video by yt-dlp's naming; the cues a frame's window overlaps; the demo's synthetic
subtitles read back by the same reader."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from squidflow.text.subtitles import (
    SubtitleError,
    in_window,
    parse_subtitles,
    read_subtitles,
    subtitle_file,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "subtitles"


def cues(df: pl.DataFrame) -> list[tuple[float, float, str]]:
    return [(round(a, 3), round(b, 3), t) for a, b, t in df.select("start_s", "end_s", "text").iter_rows()]


def test_youtube_automatic_captions_lose_word_timing_tags_and_rolling_repeats():
    got = cues(read_subtitles(FIXTURES / "youtube_auto.en.vtt"))
    # each spoken line once: the 10 ms repeat cues and the scrolled-up previous line are gone
    assert got == [
        (0.32, 2.99, "the parade is coming down"),
        (3.0, 5.51, "main street with a marching band"),
        (5.52, 8.0, "[Music]"),
    ]


def test_streaming_service_vtt_notes_identifiers_settings_italics_and_non_ascii():
    got = cues(read_subtitles(FIXTURES / "netflix_style.es.vtt"))
    assert got == [
        (7.96, 9.48, "[Alba] En 1928, el desfile"),
        (9.64, 13.08, "las mujeres éramos\nalgo así como adornos"),  # a two-line cue keeps its lines
        (12.5, 16.44, "- ¿Vienes a la manifestación?\n- ¡Sí, claro! Mañana."),  # overlaps the previous cue
    ]


def test_vtt_style_region_voice_class_ruby_entities_and_short_timestamps():
    got = cues(read_subtitles(FIXTURES / "styled.vtt"))
    assert got == [
        (1.0, 4.0, "Happy birthday to you & your balloons!"),
        (3.5, 6.0, "The cake <with candles> is here\nmake a wish"),  # &lt; &gt; are text, not tags
        (6.0, 8.25, "誕生日おめでとう"),  # cue without a blank line before it; ruby annotation dropped
        (3600.0, 3601.5, "one hour in"),  # the NOTE block with an arrow in it is not a cue
    ]


def test_srt_with_bom_crlf_font_and_ass_tags(tmp_path):
    text = (FIXTURES / "windows.srt").read_text(encoding="utf-8")
    path = tmp_path / "video.en.srt"
    path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
    assert cues(read_subtitles(path)) == [
        (1.0, 3.5, "The bride walks in"),
        (3.0, 5.25, "Everyone stands up,\nthe music starts"),
        (6.1, 7.9, "Vows & rings"),
    ]


@pytest.mark.parametrize("encoding", ["cp1252", "utf-16", "utf-8"])
def test_srt_in_legacy_encodings_with_irregular_blank_lines(tmp_path, encoding):
    path = tmp_path / "clip.fr.srt"
    path.write_bytes((FIXTURES / "latin1.srt").read_text(encoding="utf-8").encode(encoding))
    assert cues(read_subtitles(path)) == [
        (0.5, 2.0, "Café au lait à la fête"),
        (2.0, 4.0, "Naïve señor, ¿qué tal?"),  # the next cue's index directly below, no blank line
        (4.0, 5.0, "Last line without a newline"),
    ]


def test_bad_files_name_the_file_and_line(tmp_path):
    bad = tmp_path / "v.en.vtt"
    bad.write_text("WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nfine\n\n00:00:03.000 --> 00:00:0x.000\nbroken\n")
    with pytest.raises(SubtitleError, match=r"v\.en\.vtt:6: timing line"):
        read_subtitles(bad)
    backwards = tmp_path / "w.en.srt"
    backwards.write_text("1\n00:00:05,000 --> 00:00:04,000\nback in time\n")
    with pytest.raises(SubtitleError, match=r"w\.en\.srt:2: cue ends .* before it starts"):
        read_subtitles(backwards)
    not_vtt = tmp_path / "x.en.vtt"
    not_vtt.write_text("1\n00:00:01,000 --> 00:00:02,000\nan srt named vtt\n")
    with pytest.raises(SubtitleError, match=r"x\.en\.vtt:1: not a WebVTT file"):
        read_subtitles(not_vtt)


def test_window_picks_exactly_the_cues_that_overlap_it():
    df = pl.DataFrame(
        {
            "cue": [0, 1, 2, 3, 4, 5],
            "start_s": [0.0, 2.0, 3.0, 4.0, 4.5, 6.0],
            "end_s": [2.0, 3.0, 4.5, 7.0, 5.0, 8.0],
            "text": ["a", "b", "c", "d", "e", "f"],
        }
    )
    # window [3, 5] (t = 4, w = 1): b ends at 3.0 (half-open cue: not overlapping); f starts at 6
    assert in_window(df, 4.0, 1.0)["text"].to_list() == ["c", "d", "e"]
    # a window ending exactly where a cue starts touches it: [1, 2] and b = [2, 3)
    assert in_window(df, 1.5, 0.5)["text"].to_list() == ["a", "b"]
    # w = 0 is the cue on screen at t; overlapping cues both count
    assert in_window(df, 4.7, 0.0)["text"].to_list() == ["d", "e"]
    assert in_window(df, 2.0, 0.0)["text"].to_list() == ["b"]
    assert in_window(df, 9.0, 0.5).height == 0


def test_the_subtitle_file_is_found_beside_the_video_by_yt_dlp_names(tmp_path):
    video = tmp_path / "abc-123_x.mp4"
    video.write_bytes(b"")
    for name in [
        "abc-123_x.en-GB.srt",
        "abc-123_x.en.srt",
        "abc-123_x.en.vtt",
        "abc-123_x.de.vtt",
        "abc-123_x.live_chat.json",
        "abc-123_xy.en.vtt",
        "other.en.vtt",
    ]:
        (tmp_path / name).write_text("WEBVTT\n")
    assert subtitle_file(video, ["en"]) == ("en", tmp_path / "abc-123_x.en.vtt")  # exact code, vtt before srt
    assert subtitle_file(video, ["fr", "de"]) == ("de", tmp_path / "abc-123_x.de.vtt")
    assert subtitle_file(video, ["fr"]) is None
    (tmp_path / "abc-123_x.en.vtt").unlink()
    (tmp_path / "abc-123_x.en.srt").unlink()
    assert subtitle_file(video, ["en"]) == ("en-GB", tmp_path / "abc-123_x.en-GB.srt")  # a regional variant
    assert subtitle_file(video, ["*"])[0] in {"de", "en-GB"}


def test_demo_subtitles_follow_the_truth_and_read_back(tmp_path):
    from squidflow.demo.subtitles import demo_subtitles, stretches
    from squidflow.demo.text import EN
    from squidflow.demo.videos import DemoConfig, plan_video, truth_table, video_ids

    cfg = DemoConfig(videos_per_event=2, seconds=10)
    vid = video_ids(cfg)[2]  # a wedding video
    truth = truth_table(plan_video(cfg, vid))
    text = demo_subtitles(truth, seed=0)
    assert text.startswith("WEBVTT") and "NOTE SYNTHETIC subtitles" in text and "<v Camera>" in text
    assert text == demo_subtitles(truth, seed=0)  # deterministic
    got = parse_subtitles(text, fmt="vtt", source=vid)
    runs = stretches(truth)
    # every stretch but black ones has cues, and nothing is said during a black stretch
    for cond, _, start, end in runs:
        inside = got.filter((pl.col("start_s") < end - 1e-6) & (pl.col("end_s") > start + 1e-6))
        assert (inside.height == 0) == (cond == "black"), (cond, start, end)
    mixed = [(cond, other, start, end) for cond, other, start, end in runs if cond in ("cut", "crossfade")]
    assert mixed  # this video cuts or fades to another event somewhere
    for cond, other, start, end in mixed:
        said = " ".join(got.filter((pl.col("start_s") >= start - 1e-6) & (pl.col("end_s") <= end + 1e-6))["text"])
        assert ("cut to" in said or "somewhere else" in said) if cond == "cut" else "fad" in said
        assert any(clue in said for clue in EN[other]["clues"])  # and what the other event's footage shows
    assert all("<" not in t for t in got["text"])  # markup removed by the reader
