"""Annotation tasks: the HIT design of variants A and B, SBERT pairing, safe CSV/HTML, and the task page in Chromium."""

from __future__ import annotations

import csv

import numpy as np
import polars as pl
from helpers.browser import batch_row, chromium_page, open_as_mturk_worker, playwright_or_skip, posted_fields
from PIL import Image

from squidflow.contracts.io import neutralise, unneutralise, write_csv
from squidflow.judgments.annotation import event_pairs, make_hits, render_task_page, sbert_embed, task_template
from squidflow.judgments.ingest import read_mturk_batch


def frames_fixture(videos: dict[str, int], frames_per_video: int = 6) -> pl.DataFrame:
    rows = []
    for event, n_videos in videos.items():
        for v in range(n_videos):
            vid = f"{event}-{v}"
            for k in range(frames_per_video):
                rows.append(
                    {
                        "image_id": f"{vid}_{k * 10}",
                        "video_id": vid,
                        "event": event,
                        "frame_index": k * 10,
                        "image_path": f"results/dataset/images/{vid}/{k * 10}.jpg",
                    }
                )
    return pl.DataFrame(rows)


def _images(hit: dict) -> list[str]:
    return [hit[f"image_{i}_id"] for i in range(1, 7) if hit[f"image_{i}_id"]]


def test_variant_a_shows_six_images_of_the_prompted_event_from_six_videos():
    frames = frames_fixture({"parade": 8, "protest": 6})
    hits = make_hits(frames, "A", base_url="https://bucket.example/img")
    video_of = dict(frames.select("image_id", "video_id").iter_rows())
    for hit in hits.iter_rows(named=True):
        imgs = _images(hit)
        assert len(imgs) == 6 and {video_of[i].split("-")[0] for i in imgs} == {hit["event"]}
        assert len({video_of[i] for i in imgs}) == 6
        assert hit["image_1_url"].startswith("https://bucket.example/img/") and hit["image_1_url"].endswith(".jpg")
    # every image is rated exactly once per variant
    shown = [i for hit in hits.iter_rows(named=True) for i in _images(hit)]
    assert sorted(shown) == sorted(frames["image_id"])
    assert hits.filter(pl.col("event") == "parade")["event_prompt"].unique().to_list() == ["parade"]


def test_variant_b_shows_three_images_of_the_event_and_three_of_its_pair():
    frames = frames_fixture({"birthday": 4, "wedding": 4, "parade": 4, "protest": 4})
    pairs = event_pairs(sorted(frames["event"].unique()), [["birthday", "wedding"], ["parade", "protest"]])
    assert pairs == {"birthday": "wedding", "wedding": "birthday", "parade": "protest", "protest": "parade"}
    hits = make_hits(frames, "B", pairs=pairs)
    event_of = dict(frames.select("image_id", "event").iter_rows())
    for hit in hits.iter_rows(named=True):
        events = [event_of[i] for i in _images(hit)]
        assert events.count(hit["event"]) == 3 and events.count(pairs[hit["event"]]) == 3
    assert hits.filter(pl.col("event") == "birthday")["event_prompt"][0] == "birthday party"  # the release's wording
    shown = [i for hit in hits.iter_rows(named=True) for i in _images(hit)]
    assert sorted(shown) == sorted(frames["image_id"])


def test_variant_b_never_shows_a_partners_image_twice_under_one_prompt_when_events_differ_in_size():
    """An event with fewer images (a video taken down, issue 48) has fewer images to lend: its partner's last HITs are
    short instead of showing the same lent images again under the same prompt (one worker would rate them twice,
    and ingestion stops on the duplicate judgment)."""
    frames = frames_fixture({"birthday": 2, "wedding": 6})
    hits = make_hits(frames, "B", pairs={"birthday": "wedding", "wedding": "birthday"})
    for prompt, grp in hits.group_by("event"):
        shown = [i for hit in grp.iter_rows(named=True) for i in _images(hit)]
        assert len(shown) == len(set(shown)), (prompt, shown)
    shown = [i for hit in hits.iter_rows(named=True) for i in _images(hit)]
    assert len(shown) == len(set(shown))  # no image twice in variant B (the larger partner's extra images: none)
    event_of = dict(frames.select("image_id", "event").iter_rows())
    assert {i for i in frames["image_id"] if event_of[i] == "birthday"} <= set(shown)


def test_events_without_a_configured_pair_are_paired_by_sbert_similarity():
    events = ["soccer", "tennis", "wedding", "birthday_party"]
    descriptions = {
        "soccer": {"description": "a football match with players kicking a ball on a grass pitch"},
        "tennis": {"description": "a tennis match with players hitting a ball over a net on a court"},
        "wedding": {"description": "a wedding ceremony with a bride, a groom, guests and a cake"},
        "birthday_party": {"description": "a birthday party with a cake, candles, balloons and guests"},
    }
    pairs = event_pairs(events, [], descriptions, embed=sbert_embed)
    assert pairs["soccer"] == "tennis" and pairs["tennis"] == "soccer"
    assert pairs["wedding"] == "birthday_party" and pairs["birthday_party"] == "wedding"


def test_csv_cells_that_a_spreadsheet_would_run_are_neutralised_and_read_back(tmp_path):
    assert [neutralise(x) for x in ["=1+1", "+cmd", "-OMFa5uJuDk_3", "@SUM(A1)", "\tx", "ok"]] == [
        "'=1+1",
        "'+cmd",
        "'-OMFa5uJuDk_3",
        "'@SUM(A1)",
        "'\tx",
        "ok",
    ]
    assert unneutralise(neutralise("-OMFa5uJuDk_3")) == "-OMFa5uJuDk_3" and unneutralise("'quoted") == "'quoted"
    write_csv(pl.DataFrame({"event_prompt": ['=HYPERLINK("http://evil")'], "n": [1]}), tmp_path / "h.csv")
    with open(tmp_path / "h.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[1][0] == '\'=HYPERLINK("http://evil")'


def test_task_page_escapes_text_from_data():
    page = render_task_page(
        task_template(), {"event_prompt": '<script>alert(1)</script> & "x"', "image_1_url": 'a.jpg" onerror="alert(2)'}
    )
    assert (
        "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;" in page
    )
    assert 'onerror="alert(2)' not in page
    assert "${" not in page  # every placeholder filled


# --- the page in a real browser ---------------------------------------------------------------------------------------
def test_task_page_in_chromium_submits_the_fields_that_ingestion_reads(tmp_path):
    playwright_or_skip()
    frames = frames_fixture({"parade": 6, "protest": 6}, frames_per_video=1)
    hits = make_hits(frames, "A", base_url="images")
    hit = {k: v for k, v in hits.row(0, named=True).items()}
    hit["event_prompt"] = "parade <b>&</b>"
    for i, img in enumerate(_images(hit)):
        vid, fi = img.rsplit("_", 1)
        (tmp_path / "images" / vid).mkdir(parents=True, exist_ok=True)
        Image.fromarray(np.full((60, 80, 3), 40 * i, np.uint8)).save(tmp_path / "images" / vid / f"{fi}.jpg")
    page_path = tmp_path / "task.html"
    page_path.write_text(render_task_page(task_template(), hit), encoding="utf-8")

    with chromium_page() as page:
        posted = open_as_mturk_worker(page, page_path, assignment="ASG1", worker="W42", hit="H1")
        assert page.locator("#event-prompt").text_content() == "parade <b>&</b>"  # shown as text, not markup
        images = page.locator(".item img")
        assert images.count() == 6
        assert all(
            page.evaluate("(el) => el.complete && el.naturalWidth > 0", images.nth(i).element_handle())
            for i in range(6)
        )
        sliders = page.locator("input[type=range]")
        assert sliders.count() == 6
        images.nth(2).click()
        assert page.locator("#lightbox").evaluate("(el) => el.classList.contains('open')")
        page.locator("#lightbox").click()
        ratings = [0, 17, 50, 73, 99, 100]
        for i, r in enumerate(ratings[:5]):
            sliders.nth(i).fill(str(r))
        page.locator("#submit").click()
        assert "1 not rated" in page.locator("#missing").text_content() and not posted  # every slider must be moved
        sliders.nth(5).fill(str(ratings[5]))
        with page.expect_request("**/mturk/externalSubmit*"):
            page.locator("#submit").click()

    fields = posted_fields(posted[0])
    row = batch_row(hit, fields, hit="H1", worker="W42")
    assert fields["assignmentId"] == "ASG1"
    write_csv(pl.DataFrame([row]), tmp_path / "batch.csv")
    judgments, problems, _ = read_mturk_batch(tmp_path / "batch.csv", known_images=set(frames["image_id"]))
    assert not problems
    got = dict(zip(judgments["video_id"] + "_" + judgments["frame_index"].cast(str), judgments["rating"], strict=True))
    assert [got[img] for img in _images(hit)] == ratings
    assert judgments["event_prompt"].unique().to_list() == ["parade <b>&</b>"] and judgments[
        "variant"
    ].unique().to_list() == ["A"]
