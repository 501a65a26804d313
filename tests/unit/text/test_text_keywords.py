"""Co-occurring text per frame, the preprocessing settings, the tf / tf·idf / random keyword baselines, the keyword
table, and the text-only event baseline in the predictions format."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from squidflow.contracts import io, schemas
from squidflow.text.baseline import text_baseline, to_predictions
from squidflow.text.cooccurring import cooccurring_report, cooccurring_text, read_video_subtitles
from squidflow.text.keywords import idf_weights, keyword_baselines
from squidflow.text.preprocess import Normaliser, Preprocessing, settings_from_config
from squidflow.text.tables import keyword_table, to_latex, to_markdown

VTT_PARADE = """WEBVTT

00:00:00.000 --> 00:00:02.000
<v Cam>Look at the <b>marching band</b>!

00:00:02.000 --> 00:00:04.000
The band plays, the drums keep the beat.

00:00:09.000 --> 00:00:10.000
Subscribe to the channel
"""


def corpus(tmp_path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Three videos: a parade with subtitles, a wedding in Spanish without, a protest whose subtitle file is broken."""
    (tmp_path / "p1.en.vtt").write_text(VTT_PARADE, encoding="utf-8")
    (tmp_path / "r1.en.vtt").write_text("WEBVTT\n\n00:00:01.000 --> 00:00:0x.000\nbroken\n", encoding="utf-8")
    videos = pl.DataFrame(
        {
            "video_id": ["p1", "w1", "r1", "gone"],
            "status": ["ok", "ok", "ok", "unavailable"],
            "path": [str(tmp_path / f"{v}.mp4") for v in ["p1", "w1", "r1", "gone"]],
            "language": ["en", "es", "en", None],
            "title": ["Parade downtown: the band", "Nuestra boda 2019", "Protest march", None],
            "description": [
                "The parade with a marching band. Subscribe!",
                "La novia con un vestido blanco.",
                "Signs and chanting at the protest.",
                None,
            ],
            "tags": [["parade", "band"], ["boda"], [], None],
        }
    )
    frames = pl.DataFrame(
        {
            "image_id": ["p1_0", "p1_50", "p1_225", "w1_10", "r1_5"],
            "video_id": ["p1", "p1", "p1", "w1", "r1"],
            "frame_index": [0, 50, 225, 10, 5],
            "pts_s": [0.5, 2.0, 9.0, 0.4, 0.2],
            "event": ["parade", "parade", "parade", "wedding", "protest"],
        }
    )
    return videos, frames


def test_cooccurring_text_per_frame_counts_videos_without_subtitles(tmp_path):
    videos, frames = corpus(tmp_path)
    subs = read_video_subtitles(videos, ["en"])
    assert dict(subs.select("video_id", "status").iter_rows()) == {"p1": "found", "w1": "none", "r1": "unreadable"}
    assert "r1.en.vtt:3: timing line" in subs.filter(pl.col("video_id") == "r1")["error"][0]
    cooc = io.conform(cooccurring_text(frames, videos, subs, window_s=1.0), schemas.COOCCURRING)
    by_img = {r["image_id"]: r for r in cooc.iter_rows(named=True)}
    # p1 at 0.5 s, window [-0.5, 1.5]: only the first cue; at 2.0 s, [1, 3]: the first two (the first ends at 2.0 > 1)
    assert by_img["p1_0"]["subtitles"] == "Look at the marching band!"
    assert by_img["p1_50"]["subtitles"] == "Look at the marching band!\nThe band plays, the drums keep the beat."
    assert by_img["p1_225"]["subtitles"] == "Subscribe to the channel"
    assert by_img["w1_10"]["subtitles"] == "" and by_img["w1_10"]["subtitle_status"] == "none"
    assert by_img["w1_10"]["language"] == "es" and by_img["w1_10"]["title"] == "Nuestra boda 2019"
    assert by_img["r1_5"]["subtitles"] == "" and by_img["r1_5"]["subtitle_status"] == "unreadable"
    report = cooccurring_report(cooc, subs, window_s=1.0)
    assert "| found | 1 |" in report and "| none | 1 |" in report and "| unreadable | 1 |" in report
    assert "no subtitle text in their window: 2 of 5" in report


def test_preprocessing_choices_change_the_terms():
    text = "The Marching Bands marched; the band's drums — 2019!"
    stem = Normaliser(Preprocessing(name="s", normalise="stem"))
    assert stem.tokens(text, "en") == ["march", "band", "march", "band", "drum"]
    lemma = Normaliser(Preprocessing(name="l", normalise="lemma"))
    assert lemma.tokens(text, "en") == ["march", "band", "march", "band", "drum"]
    # where they differ: a stem need not be a word, a lemma is one
    assert stem.tokens("candles at parties", "en") == ["candl", "parti"]
    assert lemma.tokens("candles at parties", "en") == ["candle", "party"]
    raw = Normaliser(Preprocessing(name="r", normalise="none", lowercase=False, stopwords=False, numbers=True))
    assert raw.tokens(text, "en") == ["The", "Marching", "Bands", "marched", "the", "band", "drums", "2019"]
    # stop words follow the text's language (en-US is English; Spanish text loses Spanish stop words)
    assert Normaliser(Preprocessing(normalise="none")).tokens("la novia con un vestido", "es") == ["novia", "vestido"]
    assert Normaliser(Preprocessing(normalise="none")).tokens("the bride", "en-US") == ["bride"]
    # gold keywords are normalised the same way, stop words kept
    assert stem.phrase("Marching Bands") == "march band"
    with pytest.raises(ValueError, match="fields"):
        Preprocessing(name="x", fields=("title", "comments"))
    with pytest.raises(ValueError, match="unique names"):
        settings_from_config([{"name": "a"}, {"name": "a"}])


def test_tf_tfidf_and_random_keywords(tmp_path):
    videos, frames = corpus(tmp_path)
    subs = read_video_subtitles(videos, ["en"])
    cooc = io.conform(cooccurring_text(frames, videos, subs, window_s=1.0), schemas.COOCCURRING)
    setting = Preprocessing(name="all", normalise="none")
    kw = io.conform(keyword_baselines(cooc, videos, subs, [setting], top_k=3, seed=0), schemas.TEXT_KEYWORDS)
    tf = kw.filter((pl.col("image_id") == "p1_50") & (pl.col("system") == "tf")).sort("rank")
    # p1_50's text: title, description, tags, and its two cues; band occurs 5 times, parade 3, marching 2
    assert tf["keyword"].to_list() == ["band", "parade", "marching"]
    assert tf["score"].to_list() == [5.0, 3.0, 2.0]
    # idf over the 3 ok videos: "band" only in p1, "protest" only in r1; every word of p1 has df 1 -> same idf
    idf = idf_weights({"p1": {"band", "parade"}, "w1": {"boda"}, "r1": {"protest", "band"}})
    assert idf["band"] == pytest.approx(math.log(4 / 3) + 1) and idf["boda"] == pytest.approx(math.log(4 / 2) + 1)
    tfidf = kw.filter((pl.col("image_id") == "p1_50") & (pl.col("system") == "tfidf")).sort("rank")
    assert tfidf["keyword"][0] == "band"
    rnd = kw.filter((pl.col("image_id") == "p1_50") & (pl.col("system") == "random"))
    assert rnd.height == 3 and rnd["score"].null_count() == 3
    again = keyword_baselines(cooc, videos, subs, [setting], top_k=3, seed=0)
    assert again.equals(kw)  # seeded
    # a subtitles-only setting leaves frames without cues in their window unanswered
    subs_only = Preprocessing(name="subs", fields=("subtitles",), normalise="none", window_s=0.5)
    kw2 = keyword_baselines(cooc, videos, subs, [subs_only], top_k=3)
    assert set(kw2["image_id"]) == {"p1_0", "p1_50", "p1_225"}
    with pytest.raises(ValueError, match="wider than the window"):
        keyword_baselines(cooc, videos, subs, [Preprocessing(name="wide", window_s=5.0)])


def test_tfidf_prefers_the_word_only_this_video_says(tmp_path):
    # "video" is in every title, "cake" only in the first: tf ties them, tf·idf puts cake first
    videos = pl.DataFrame(
        {
            "video_id": ["a", "b", "c"],
            "status": ["ok"] * 3,
            "path": [str(tmp_path / f"{v}.mp4") for v in "abc"],
            "language": ["en"] * 3,
            "title": ["video video cake cake", "video", "video"],
            "description": [""] * 3,
            "tags": [[], [], []],
        }
    )
    frames = pl.DataFrame({"image_id": ["a_0"], "video_id": ["a"], "frame_index": [0], "pts_s": [0.0], "event": ["x"]})
    subs = read_video_subtitles(videos, ["en"])
    cooc = io.conform(cooccurring_text(frames, videos, subs, window_s=1.0), schemas.COOCCURRING)
    kw = keyword_baselines(cooc, videos, subs, [Preprocessing(name="s", normalise="none")], top_k=2)
    assert kw.filter(pl.col("system") == "tf")["keyword"].to_list() == ["video", "cake"]  # tie: first occurrence
    assert kw.filter(pl.col("system") == "tfidf")["keyword"].to_list() == ["cake", "video"]


def test_keyword_table_scores_each_setting_and_the_human_upper_bound():
    keywords = pl.DataFrame(
        {
            "image_id": ["v_1"] * 3 + ["v_2"],
            "video_id": ["v"] * 4,
            "frame_index": [1, 1, 1, 2],
            "setting": ["s"] * 4,
            "system": ["tf", "tf", "tfidf", "tf"],
            "rank": [1, 2, 1, 1],
            "keyword": ["cake", "candl", "candl", "parad"],
            "surface": ["cake", "candles", "candles", "parade"],
            "score": [2.0, 1.0, 1.0, 1.0],
        }
    )
    gold = pl.DataFrame(
        {
            "video_id": ["v"] * 5,
            "frame_index": [1, 1, 1, 2, 2],
            "annotator": ["w1", "w2", "w2", "w1", "w2"],
            "hit": ["h"] * 5,
            "position": [1, 1, 2, 1, 1],
            "keyword": ["Cakes", "cake", "Candles", "parade", "march"],
            "normalised": ["cakes", "cake", "candles", "parade", "march"],
            "round": [1] * 5,
            "source": ["simulated"] * 5,
        }
    )
    table = keyword_table(keywords, gold, [Preprocessing(name="s", normalise="stem")])
    assert table.columns == [
        "system",
        "setting",
        "n_items",
        "best_normal_p",
        "best_normal_r",
        "best_mode_p",
        "best_mode_r",
        "oot_normal_p",
        "oot_normal_r",
        "oot_mode_p",
        "oot_mode_r",
    ]
    row = {r["system"]: r for r in table.iter_rows(named=True)}
    # stemmed gold: v_1 {cake: 2, candl: 1} (mode cake), v_2 {parad: 1, march: 1} (no mode)
    assert row["tf"]["best_normal_p"] == pytest.approx(100 * (2 / 3 + 1 / 2) / 2)
    assert row["tf"]["oot_normal_r"] == pytest.approx(100 * (3 / 3 + 1 / 2) / 2)
    assert row["tf"]["best_mode_r"] == pytest.approx(100.0)
    assert row["tfidf"]["best_normal_p"] == pytest.approx(100 * 1 / 3)  # answered v_1 only
    assert row["tfidf"]["best_normal_r"] == pytest.approx(100 * (1 / 3) / 2)
    assert row["random"]["best_normal_p"] is None and row["random"]["best_normal_r"] == 0.0
    assert row["human"]["n_items"] == 2
    md, tex = to_markdown(table, "t <b>"), to_latex(table, "t_1 & 50%")
    assert "t &lt;b&gt;" in md and "| tf·idf | s | 2 |" in md
    assert r"t\_1 \& 50\%" in tex and r"\begin{tabular}" in tex


def test_text_baseline_predictions_rank_every_event(tmp_path):
    videos, frames = corpus(tmp_path)
    subs = read_video_subtitles(videos, ["en"])
    cooc = io.conform(cooccurring_text(frames, videos, subs, window_s=1.0), schemas.COOCCURRING)
    setting = Preprocessing(name="s", normalise="stem")
    events = ["birthday_party", "parade", "protest", "wedding"]
    preds = io.conform(text_baseline(cooc, videos, subs, "tfidf", events, setting), schemas.PREDICTIONS)
    assert preds.height == cooc.height * len(events)
    top = dict(
        preds.filter(pl.col("rank") == 1)
        .select(pl.col("video_id") + "_" + pl.col("frame_index").cast(str), "label")
        .iter_rows()
    )
    assert top["p1_0"] == "parade" and top["r1_5"] == "protest"
    # the Spanish wedding shares no term with any English event text: a seeded random guess, score 0
    w = preds.filter(pl.col("video_id") == "w1")
    assert w["score"].to_list() == [0.0] * 4

    # SBERT path with a stand-in encoder (bag of letters), same output contract
    def encode(texts):
        return np.array([[t.lower().count(c) for c in "abcdefghijklmnopqrstuvwxyz"] for t in texts], dtype=float)

    sb = text_baseline(cooc, videos, subs, "sbert", events, setting, encode=encode)
    assert sb.group_by("video_id", "frame_index").agg(pl.col("rank").sort()).get_column("rank").to_list()[0] == [
        1,
        2,
        3,
        4,
    ]


def test_ties_are_broken_by_a_seeded_shuffle_not_label_order():
    cooc = pl.DataFrame(
        {
            "video_id": [f"v{i}" for i in range(200)],
            "frame_index": [0] * 200,
            "image_id": [f"v{i}_0" for i in range(200)],
        }
    )
    preds = to_predictions(cooc, np.zeros((200, 4)), ["a", "b", "c", "d"], seed=0)
    firsts = preds.filter(pl.col("rank") == 1)["label"].value_counts()
    assert firsts.height == 4 and firsts["count"].min() > 25
    assert preds.equals(to_predictions(cooc, np.zeros((200, 4)), ["a", "b", "c", "d"], seed=0))


def test_keyword_table_intervals_over_images_bracket_every_score():
    from squidflow.statistics.intervals import IntervalConfig

    rng = np.random.default_rng(0)
    words = ["cake", "candle", "parade", "band", "dog", "bride", "dress", "march"]
    gold_rows, kw_rows = [], []
    for f in range(30):
        for a in range(3):
            for pos, w in enumerate(rng.choice(words, 2, replace=False)):
                gold_rows.append(
                    {
                        "video_id": "v",
                        "frame_index": f,
                        "annotator": f"w{a}",
                        "hit": "h",
                        "position": pos + 1,
                        "keyword": w,
                        "normalised": w,
                        "round": 1,
                        "source": "simulated",
                    }
                )
        for system in ("tf", "tfidf", "random"):
            for rank, w in enumerate(rng.choice(words, 3, replace=False)):
                kw_rows.append(
                    {
                        "image_id": f"v_{f}",
                        "video_id": "v",
                        "frame_index": f,
                        "setting": "s",
                        "system": system,
                        "rank": rank + 1,
                        "keyword": w,
                        "surface": w,
                        "score": 1.0,
                    }
                )
    setting = [Preprocessing(name="s", normalise="none")]
    cfg = IntervalConfig(resamples=300, seed=1)
    plain = keyword_table(pl.DataFrame(kw_rows), pl.DataFrame(gold_rows), setting)
    table = keyword_table(pl.DataFrame(kw_rows), pl.DataFrame(gold_rows), setting, intervals=cfg)
    assert table.select(plain.columns).equals(plain)  # the points do not move
    for c in plain.columns[3:]:
        assert table.columns.index(f"{c}_lo") == table.columns.index(c) + 1
        for rec in table.iter_rows(named=True):
            assert rec[f"{c}_lo"] <= rec[c] <= rec[f"{c}_hi"] and rec[f"{c}_hi"] - rec[f"{c}_lo"] > 0, (
                rec["system"],
                c,
            )
    tf = table.row(0, named=True)
    md, tex = to_markdown(table, "t"), to_latex(table, "t")
    cell = f"{tf['best_normal_p']:.2f} [{tf['best_normal_p_lo']:.2f}, {tf['best_normal_p_hi']:.2f}]"
    assert cell in md and cell in tex
