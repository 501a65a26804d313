"""The keyword task (variant K): HITs, the task page in a real browser, reading answers back with named errors, and
the SIMULATED keyword panel of the demo."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from helpers.browser import batch_row, chromium_page, open_as_mturk_worker, playwright_or_skip, posted_fields
from PIL import Image

from squidflow.contracts.io import write_csv
from squidflow.demo.keyword_panel import KeywordPanelConfig, simulate_keywords
from squidflow.judgments.annotation import render_task_page
from squidflow.judgments.ingest import JudgmentError
from squidflow.judgments.keywords import keyword_template, make_keyword_hits, normalise_keyword, read_keyword_batch


def frames_fixture(n_videos: int = 5, per_video: int = 3) -> pl.DataFrame:
    rows = [
        {"image_id": f"vid-{v}_{k * 7}", "video_id": f"vid-{v}", "frame_index": k * 7, "event": "parade"}
        for v in range(n_videos)
        for k in range(per_video)
    ]
    return pl.DataFrame(rows)


def _images(hit: dict) -> list[str]:
    return [v for k, v in hit.items() if k.startswith("image_") and k.endswith("_id") and v]


def test_every_frame_is_in_one_hit_and_hits_mix_videos():
    frames = frames_fixture()
    hits = make_keyword_hits(frames, images_per_hit=6, base_url="https://b.example/img")
    shown = [img for hit in hits.iter_rows(named=True) for img in _images(hit)]
    assert sorted(shown) == sorted(frames["image_id"]) and hits.height == 3
    first = hits.row(0, named=True)
    assert first["variant"] == "K" and first["image_1_url"].startswith("https://b.example/img/vid-")
    assert len({i.rsplit("_", 1)[0] for i in _images(first)}) == 5  # five videos among its six images
    assert "event_prompt" not in hits.columns  # people describe what they see, unprimed


def test_normalised_keywords_are_safe_and_comparable():
    assert normalise_keyword("  Marching   BAND ") == "marching band"
    assert normalise_keyword('=HYPERLINK("x")') == 'hyperlink("x")'
    assert normalise_keyword("'=1+2") == "1+2"
    assert normalise_keyword("<script>alert(1)</script>cake") == "alert(1) cake"
    assert normalise_keyword("&lt;b&gt;bride&lt;/b&gt;") == "bride"
    assert normalise_keyword("Ｃａｆé!") == "café"
    assert normalise_keyword("<b></b>") == ""


def approved(hit: dict, worker: str, answers: dict[str, str], status: str = "Approved") -> dict:
    return batch_row(hit, answers, hit=f"H{hit['hit_index']}", worker=worker, status=status)


def test_batch_results_are_read_back_with_named_errors(tmp_path):
    frames = frames_fixture(2, 1)  # one HIT of two images (slots 3..6 empty)
    hit = make_keyword_hits(frames, images_per_hit=6).row(0, named=True)
    imgs = _images(hit)
    boxes = {f"keyword_{i}_{j}": "" for i in range(1, 7) for j in range(1, 4)}
    good = boxes | {"keyword_1_1": "Cake", "keyword_1_2": "=SUM(A1)", "keyword_2_1": "balloons"}
    rows = [
        approved(hit, "W1", good),
        approved(hit, "W2", boxes | {"keyword_1_1": "cake"}),  # image 2 without any keyword
        approved(hit, "W3", boxes | {"keyword_1_1": "x" * 41, "keyword_2_1": "ok"}),  # too long
        approved(hit, "W4", boxes | {"keyword_1_1": "<i></i>", "keyword_2_1": "ok"}),  # markup only
        approved(hit, "W5", boxes | {"keyword_1_1": "a", "keyword_2_1": "b"}, status="Rejected"),
        approved(hit, "W1", good),  # the same worker again
    ]
    path = tmp_path / "batch_K.csv"
    write_csv(pl.DataFrame(rows), path)
    with pytest.raises(JudgmentError) as err:
        read_keyword_batch(path, known_images=set(frames["image_id"]))
    msg = str(err.value)
    assert f"batch_K.csv:3: Answer.keyword_2_1..3 are all empty: no keyword for image {imgs[1]}" in msg
    assert "batch_K.csv:4: Answer.keyword_1_1 is 41 characters long (at most 40" in msg
    assert "batch_K.csv:5: Answer.keyword_1_1 = '<i></i>' has no letters or digits" in msg
    assert f"batch_K.csv:7: duplicate: worker W1 already gave keywords for {imgs[0]} (line 2)" in msg
    df, problems, rejected = read_keyword_batch(path, on_error="skip", known_images=set(frames["image_id"]))
    assert [p.row for p in problems] == [3, 4, 5, 7] and rejected == 1
    assert sorted(df["keyword"].to_list()) == ["=SUM(A1)", "Cake", "balloons"]  # W1's three only
    got = dict(zip(df["keyword"], df["normalised"], strict=True))
    assert got == {"Cake": "cake", "=SUM(A1)": "sum(a1)", "balloons": "balloons"}
    # the keyword written through the neutralising writer came back as typed (the apostrophe removed)
    assert (tmp_path / "batch_K.csv").read_text().count("'=SUM(A1)") == 2
    # a rating batch is not a keyword batch
    rating = tmp_path / "batch_A.csv"
    write_csv(
        pl.DataFrame(
            [
                {
                    "HITId": "H",
                    "WorkerId": "W",
                    "AssignmentStatus": "Approved",
                    "Input.image_1_id": imgs[0],
                    "Answer.rating_1": "50",
                }
            ]
        ),
        rating,
    )
    with pytest.raises(JudgmentError, match="no Answer.keyword_<i>_<j> columns"):
        read_keyword_batch(rating)


def test_simulated_panel_names_what_each_frame_shows(tmp_path):
    from squidflow.demo.videos import DemoConfig, plan_video, truth_table, video_ids

    cfg = DemoConfig(videos_per_event=2, seconds=6)
    truth = pl.concat([truth_table(plan_video(cfg, v)) for v in video_ids(cfg)])
    sample = truth.filter(pl.col("frame_index") % 10 == 0)
    frames = sample.select(
        (pl.col("video_id") + "_" + pl.col("frame_index").cast(str)).alias("image_id"),
        "video_id",
        "frame_index",
        "event",
    )
    hits_path = tmp_path / "hits_K.csv"
    write_csv(make_keyword_hits(frames, images_per_hit=6), hits_path)
    hits = pl.read_csv(hits_path, infer_schema=False)
    panel = KeywordPanelConfig(annotators=6, assignments_per_hit=4, keywords_per_image=5, seed=0)
    batch = simulate_keywords(hits, truth, panel)
    assert batch.height == hits.height * 4 and batch["WorkerId"].str.starts_with("SIMULATED-K-").all()
    path = tmp_path / "batch.csv"
    write_csv(batch, path)
    df, problems, _ = read_keyword_batch(path, known_images=set(frames["image_id"]), source="simulated")
    assert not problems and df.select("video_id", "frame_index").n_unique() == frames.height
    per_image = df.group_by("video_id", "frame_index", "annotator").len()["len"]
    assert per_image.min() >= 1 and per_image.max() <= 5
    cond = dict(sample.select((pl.col("video_id") + "_" + pl.col("frame_index").cast(str)), "condition").iter_rows())
    words = df.with_columns((pl.col("video_id") + "_" + pl.col("frame_index").cast(str)).alias("img"))
    clean_birthday = words.filter(
        pl.col("img").is_in([i for i, c in cond.items() if c == "clean" and i.startswith("birthday")])
    )
    assert {"birthday", "cake", "candles", "party", "balloons"} & set(clean_birthday["normalised"])
    black = words.filter(pl.col("img").is_in([i for i, c in cond.items() if c == "black"]))
    assert set(black["normalised"]) <= {"black", "dark", "nothing", "blank", "screen"}


def test_keyword_page_in_chromium_submits_what_ingestion_reads(tmp_path):
    playwright_or_skip()
    frames = frames_fixture(4, 1)  # one HIT with 4 images: slots 5 and 6 are hidden
    hit = make_keyword_hits(frames, images_per_hit=6, base_url="images").row(0, named=True)
    for i, img in enumerate(_images(hit)):
        vid, fi = img.rsplit("_", 1)
        (tmp_path / "images" / vid).mkdir(parents=True, exist_ok=True)
        Image.fromarray(np.full((60, 80, 3), 50 * i, np.uint8)).save(tmp_path / "images" / vid / f"{fi}.jpg")
    template = keyword_template(images_per_hit=6, keywords_per_image=3, max_length=20)
    page_path = tmp_path / "task.html"
    page_path.write_text(render_task_page(template, hit), encoding="utf-8")

    typed = {1: ["cake", "Candles <b>"], 2: ["=1+2"], 3: ["marching band", "drums", "crowd"], 4: ["bride"]}
    with chromium_page() as page:
        posted = open_as_mturk_worker(page, page_path, assignment="ASG7", worker="W9", hit="H0")
        panels = page.locator(".item")
        assert panels.count() == 6
        assert [panels.nth(i).is_visible() for i in range(6)] == [True] * 4 + [False] * 2
        images = page.locator(".item img")
        assert all(
            page.evaluate("(el) => el.complete && el.naturalWidth > 0", images.nth(i).element_handle())
            for i in range(4)
        )
        assert page.locator("#keyword_1_1").get_attribute("maxlength") == "20"
        for i in (1, 2, 3):
            for j, word in enumerate(typed[i], start=1):
                page.locator(f"#keyword_{i}_{j}").fill(word)
        page.locator("#submit").click()
        assert "1 without a keyword" in page.locator("#missing").text_content() and not posted
        page.locator("#keyword_4_1").fill(typed[4][0])
        with page.expect_request("**/mturk/externalSubmit*"):
            page.locator("#submit").click()

    fields = posted_fields(posted[0])
    row = batch_row(hit, fields, hit="H0", worker="W9")
    assert fields["assignmentId"] == "ASG7" and "keyword_5_1" not in fields  # hidden slots are not submitted
    write_csv(pl.DataFrame([row]), tmp_path / "batch.csv")
    df, problems, _ = read_keyword_batch(tmp_path / "batch.csv", known_images=set(frames["image_id"]), max_length=20)
    assert not problems
    imgs = _images(hit)
    got = {}
    for vid, fi, kw in df.sort("position").select("video_id", "frame_index", "keyword").iter_rows():
        got.setdefault(f"{vid}_{fi}", []).append(kw)
    assert [got[img] for img in imgs] == [typed[1], typed[2], typed[3], typed[4]]
    assert df.filter(pl.col("keyword") == "Candles <b>")["normalised"].to_list() == ["candles"]
