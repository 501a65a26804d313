"""The report's figures, read back from the PNG files they write (size, panels, what they say they show), the
numbers behind them, the self-contained task pages and the run summary. No pixel comparison."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from helpers.png_facts import figure_facts
from PIL import Image

from squidflow.comparison.figures import chosen_sets, sets_figure
from squidflow.contracts import io, schemas
from squidflow.frames.figures import contact_sheets, frame_spread, relative_positions
from squidflow.judgments.figures import (
    agreement_figure,
    annotator_figure,
    annotator_stats,
    fig3_judgments,
)
from squidflow.presentation import style
from squidflow.report.pages import self_contained
from squidflow.report.summary import job_records, rule_times, write_run_summary
from squidflow.videos.figures import acquisition_figure, failure_reasons, status_counts

EVENTS = ["birthday_party", "parade"]


def _complete(rows: list[dict], schema: schemas.Schema) -> pl.DataFrame:
    """Rows with every column of `schema` (missing ones null), as an artifact's writer would leave them."""
    return pl.DataFrame([{c: r.get(c) for c in schema.columns} for r in rows], schema=schema.columns)


def _readable_png(path: Path, *, min_width: int = 600, min_height: int = 300) -> dict:
    """The figure's facts after checking it is a whole PNG of print size (decodes, not blank)."""
    assert path.stat().st_size > 5_000, f"{path} is nearly empty"
    with Image.open(path) as image:
        assert image.format == "PNG"
        pixels = np.asarray(image.convert("L"))
    assert pixels.std() > 5, f"{path} is blank"
    facts = figure_facts(path)
    assert facts["width"] >= min_width and facts["height"] >= min_height, facts
    return facts


# --- acquisition ------------------------------------------------------------------------------------------------
def test_acquisition_figure_counts_every_status_and_reason(tmp_path):
    rows = [{"video_id": f"b{i}", "event": "birthday_party", "status": "ok", "source": "youtube"} for i in range(5)]
    rows += [
        {"video_id": "b5", "event": "birthday_party", "status": "unavailable", "reason": "removed"},
        {"video_id": "b6", "event": "birthday_party", "status": "unavailable", "reason": "removed"},
        {"video_id": "p0", "event": "parade", "status": "failed", "reason": "rate_limited"},
        {"video_id": "p1", "event": "parade", "status": "corrupt", "reason": None},  # found by frame extraction
        {"video_id": "p2", "event": "parade", "status": "ok"},
    ]
    videos = _complete(rows, schemas.VIDEOS)
    io.write_parquet(videos, tmp_path / "videos.parquet", schemas.VIDEOS)

    counts = status_counts(videos)
    assert counts.filter(pl.col("event") == "birthday_party").row(0, named=True) == {
        "event": "birthday_party",
        "ok": 5,
        "unavailable": 2,
        "failed": 0,
        "corrupt": 0,
        "pending": 0,
    }
    assert counts.filter(pl.col("event") == "parade")["corrupt"].item() == 1
    reasons = failure_reasons(videos)
    assert reasons.rows() == [("removed", "unavailable", 2), ("corrupt", "corrupt", 1), ("rate_limited", "failed", 1)]

    png = tmp_path / "videos_status.png"
    assert acquisition_figure(io.read_parquet(tmp_path / "videos.parquet", schemas.VIDEOS), png, note="SYNTHETIC") == 2
    facts = _readable_png(png)
    assert facts["panels"] == 2
    assert facts["description"] == "10 videos, 6 ok, 4 not ok"


def test_acquisition_figure_of_a_manifest_without_reasons(tmp_path):
    """A manifest written before the `reason` column existed still draws: each video counts under its status."""
    videos = _complete(
        [
            {"video_id": "a", "event": "parade", "status": "ok"},
            {"video_id": "b", "event": "parade", "status": "failed"},
        ],
        schemas.VIDEOS,
    ).drop("reason")
    assert failure_reasons(videos).rows() == [("failed", "failed", 1)]
    pl_path = tmp_path / "videos.parquet"
    videos.write_parquet(pl_path)
    assert acquisition_figure(io.read_parquet(pl_path, schemas.VIDEOS), tmp_path / "v.png") == 2


# --- frames -------------------------------------------------------------------------------------------------------
def _frames_corpus(root: Path, *, videos_per_event: int = 3, k: int = 4) -> tuple[Path, Path, Path]:
    """frames.parquet with real JPEGs, a manifest with durations, and image scores (variant A under the prompt)."""
    rng = np.random.default_rng(0)
    frames, videos, scores = [], [], []
    for event in EVENTS:
        for v in range(videos_per_event):
            vid = f"{event}_{v:02d}"
            videos.append(
                {
                    "video_id": vid,
                    "event": event,
                    "status": "ok",
                    "duration_s": 10.0 if v else None,
                    "n_frames": 250,
                    "fps": 25.0,
                }
            )
            for c in range(k):
                fi = 60 * c + 5
                path = root / "images" / vid / f"{fi}.jpg"
                path.parent.mkdir(parents=True, exist_ok=True)
                Image.fromarray(rng.integers(0, 255, (90, 120, 3), dtype=np.uint8)).save(path)
                frames.append(
                    {
                        "image_id": f"{vid}_{fi}",
                        "video_id": vid,
                        "event": event,
                        "frame_index": fi,
                        "pts_s": fi / 25,
                        "cluster": c,
                        "distance": 0.0,
                        "image_path": str(path),
                        "split": ["train", "val", "test"][v % 3],
                    }
                )
                if c < 2:  # half of the frames judged, under the prompt wording annotators saw
                    scores.append(
                        {
                            "video_id": vid,
                            "frame_index": fi,
                            "event_prompt": event.replace("_", " "),
                            "variant": "A",
                            "people_mean": 80.0,
                            "people_std": 5.0,
                            "n": 3,
                            "certainty_bin": "80-100",
                            "alt_bins": ["80-100"] * 3,
                            "high_certainty": False,
                        }
                    )
                    scores.append(
                        {
                            "video_id": vid,
                            "frame_index": fi,
                            "event_prompt": "wedding",
                            "variant": "B",
                            "people_mean": 10.0,
                            "people_std": 5.0,
                            "n": 3,
                            "certainty_bin": "0-20",
                            "alt_bins": ["0-20"] * 3,
                            "high_certainty": False,
                        }
                    )
    paths = root / "frames.parquet", root / "videos.parquet", root / "scores.parquet"
    io.write_parquet(pl.DataFrame(frames), paths[0], schemas.FRAMES)
    io.write_parquet(_complete(videos, schemas.VIDEOS), paths[1], schemas.VIDEOS)
    io.write_parquet(pl.DataFrame(scores), paths[2], schemas.IMAGE_SCORES)
    return paths


def test_contact_sheets_one_per_event_with_a_panel_per_frame_and_the_judged_certainty(tmp_path):
    frames, _, scores = _frames_corpus(tmp_path, videos_per_event=3, k=4)
    sheets = contact_sheets(
        io.read_parquet(frames, schemas.FRAMES),
        tmp_path / "sheets",
        scores=io.read_parquet(scores, schemas.IMAGE_SCORES),
        max_videos=2,
    )
    assert sheets == {"birthday_party": 8, "parade": 8}  # 2 of 3 videos drawn, 4 frames each
    assert sorted(p.name for p in (tmp_path / "sheets").iterdir()) == ["birthday_party.png", "parade.png"]
    for event in EVENTS:
        facts = _readable_png(tmp_path / "sheets" / f"{event}.png")
        assert facts["panels"] == 8
        # variant A under the event's own prompt ("birthday party" for birthday_party), not variant B's "wedding"
        assert facts["description"] == "2 videos, 8 frames, 4 judged"


def test_contact_sheets_without_judgments(tmp_path):
    frames, _, _ = _frames_corpus(tmp_path, videos_per_event=1, k=3)
    assert contact_sheets(io.read_parquet(frames, schemas.FRAMES), tmp_path / "sheets") == {
        "birthday_party": 3,
        "parade": 3,
    }
    assert figure_facts(tmp_path / "sheets" / "parade.png")["description"] == "1 videos, 3 frames, 0 judged"


def test_frame_spread_positions_and_panels(tmp_path):
    frames, videos, _ = _frames_corpus(tmp_path, videos_per_event=2, k=4)
    positions = relative_positions(io.read_parquet(frames, schemas.FRAMES), io.read_parquet(videos, schemas.VIDEOS))
    # video _01 has a duration of 10 s; video _00 has none, so n_frames / fps = 250 / 25 = 10 s as well
    got = positions.filter(pl.col("video_id") == "parade_00")["position"].to_list()
    assert got == pytest.approx([0.02, 0.26, 0.5, 0.74])
    png = tmp_path / "spread.png"
    assert (
        frame_spread(io.read_parquet(frames, schemas.FRAMES), io.read_parquet(videos, schemas.VIDEOS), png)
        == len(EVENTS) + 1
    )
    assert _readable_png(png)["panels"] == len(EVENTS) + 1


# --- judgments ----------------------------------------------------------------------------------------------------
def _judgments() -> pl.DataFrame:
    """Four annotators rate the same 30 images: `fair` and `fair2` agree with the truth, `lenient` adds 20,
    `careless` answers at random."""
    rng = np.random.default_rng(1)
    rows = []
    truth = rng.integers(10, 70, 30)
    for i, t in enumerate(truth):
        for position, (annotator, rating) in enumerate(
            (("fair", t), ("fair2", t), ("lenient", t + 20), ("careless", rng.integers(0, 101)))
        ):
            rows.append(
                {
                    "video_id": f"v{i}",
                    "frame_index": 0,
                    "event_prompt": "parade",
                    "variant": "A",
                    "annotator": annotator,
                    "position": position,
                    "hit": f"h{i // 6}",
                    "rating": int(rating),
                    "round": 1,
                    "source": "simulated",
                }
            )
    return pl.DataFrame(rows, schema=schemas.JUDGMENTS.columns)


def test_annotator_stats_find_the_lenient_and_the_careless():
    stats = annotator_stats(_judgments()).sort("annotator")
    by = {r["annotator"]: r for r in stats.iter_rows(named=True)}
    # the others' mean of a lenient rating t+20 is t + (random - t)/3 on average: leniency is the largest
    assert by["lenient"]["leniency"] > 10 > by["fair"]["leniency"]
    assert max(by, key=lambda a: by[a]["carelessness"]) == "careless"
    assert by["fair"]["n_judgments"] == 30


def test_annotator_figure_marks_the_excluded(tmp_path):
    report = io.conform(
        pl.DataFrame(
            {
                "annotator": ["fair", "fair2", "lenient", "careless"],
                "n_judgments": [30] * 4,
                "flags": [[], [], [], ["random"]],
                "excluded": [False, False, False, True],
            }
        ),
        schemas.ANNOTATOR_REPORT,
    )
    png = tmp_path / "annotators.png"
    stats = annotator_figure(io.conform(_judgments(), schemas.JUDGMENTS), report, png, note="SIMULATED")
    # raters by pseudonym in the report's figure (issue 57): "careless" is the first of the sorted ids, Ann1
    assert stats.filter(pl.col("excluded"))["annotator"].to_list() == ["Ann1"]
    facts = _readable_png(png)
    assert facts["panels"] == 2
    assert facts["description"] == "4 annotators, 1 excluded, 120 first-round judgments"


def test_agreement_chart_and_figure3(tmp_path):
    table7 = pl.DataFrame(
        {
            "variant": ["A", "B", "A+B"],
            "spearman": [0.66, 0.65, 0.65],
            "alpha": [0.67, 0.72, 0.66],
            "kappa_3": [0.43, 0.45, 0.39],
            "kappa_4": [0.32, 0.41, 0.33],
            "kappa_5": [0.32, 0.34, None],
        }
    )
    png = tmp_path / "table7.png"
    assert agreement_figure(table7, png) == 1
    assert _readable_png(png)["description"] == "A, B, A+B"

    scores = pl.DataFrame(
        {
            "video_id": ["a", "b", "a", "b"],
            "frame_index": [0] * 4,
            "event_prompt": ["parade"] * 4,
            "variant": ["A", "A", "B", "B"],
            "people_mean": [20.0, 97.0, 50.0, 60.0],
            "people_std": [5.0, 2.0, 30.0, 10.0],
            "n": [3] * 4,
            "certainty_bin": ["20-40", "80-100", "40-60", "60-80"],
            "alt_bins": [["0-20"]] * 4,
            "high_certainty": [False, True, False, False],
        }
    )
    assert fig3_judgments(scores, tmp_path / "fig3.png", title="Figure 3") == 4
    assert _readable_png(tmp_path / "fig3.png")["panels"] == 4


# --- comparison sets ----------------------------------------------------------------------------------------------
def _comparison(root: Path, *, image: str | None = None) -> tuple[Path, Path]:
    img = root / "img.jpg"
    Image.fromarray(np.random.default_rng(2).integers(0, 255, (240, 320, 3), dtype=np.uint8)).save(img)
    corpus, sets = [], []
    for q in range(4):
        for j in range(3):
            corpus.append(
                {
                    "instance_id": f"q{q}-{j}",
                    "image_id": f"q{q}",
                    "image": image or str(img),
                    "width": 320,
                    "height": 240,
                    "bboxes": [{"left": 40.0, "top": 30.0, "width": 100.0, "height": 80.0}],
                    "clue": f"clue {q}",
                    "inference": f"inference {q}-{j}",
                    "split": "test",
                    "confidence": None,
                    "chunk": 0,
                }
            )
    for q, (split, set_rank) in enumerate((("train", 1), ("test", 2), ("test", 1), ("val", 1))):
        for rank, cand in enumerate((f"q{q}-1", f"q{(q + 1) % 4}-0", f"q{(q + 2) % 4}-2"), start=1):
            sets.append(
                {
                    "query_id": f"q{q}-0",
                    "split": split,
                    "rank": rank,
                    "candidate_id": cand,
                    "inference": f"inference {cand}",
                    "plausibility": 1.0 / rank,
                    "set_rank": set_rank,
                }
            )
    paths = root / "corpus.parquet", root / "sets.parquet"
    io.write_parquet(
        pl.DataFrame(corpus, schema_overrides={"confidence": pl.Float64}), paths[0], schemas.COMPARISON_CORPUS
    )
    io.write_parquet(pl.DataFrame(sets), paths[1], schemas.COMPARISON_SETS)
    return paths


def test_comparison_sets_figure_draws_the_first_set_of_each_split(tmp_path):
    corpus, sets = _comparison(tmp_path)
    assert chosen_sets(io.read_parquet(sets, schemas.COMPARISON_SETS), 3) == ["q2-0", "q3-0", "q0-0"]
    png = tmp_path / "sets.png"
    assert (
        sets_figure(
            io.read_parquet(sets, schemas.COMPARISON_SETS),
            io.read_parquet(corpus, schemas.COMPARISON_CORPUS),
            png,
            n_sets=3,
            image_root=tmp_path,
        )
        == 6
    )  # image + inferences per set
    facts = _readable_png(png)
    assert facts["panels"] == 6
    assert facts["description"] == "3 sets: q2-0, q3-0, q0-0"


def test_comparison_sets_figure_without_the_images(tmp_path):
    """Images that cannot be had (a URL offline) leave a note in their panel; the figure is still written."""
    corpus, sets = _comparison(tmp_path, image=(tmp_path / "nowhere" / "x.jpg").as_uri())
    assert (
        sets_figure(
            io.read_parquet(sets, schemas.COMPARISON_SETS),
            io.read_parquet(corpus, schemas.COMPARISON_CORPUS),
            tmp_path / "sets.png",
            n_sets=2,
            cache_dir=tmp_path / "cache",
        )
        == 4
    )


# --- style ----------------------------------------------------------------------------------------------------------
def test_saved_figures_record_their_panels_without_colour_bars(tmp_path):
    fig, axes = style.figure(1, 3, height=2)
    image = axes[0][0].imshow(np.arange(12).reshape(3, 4))
    fig.colorbar(image, ax=axes[0][0])
    axes[0][2].set_visible(False)
    assert style.save(fig, tmp_path / "f.png", title="t", description="d") == 2
    facts = figure_facts(tmp_path / "f.png")
    assert (facts["panels"], facts["title"], facts["description"]) == (2, "t", "d")
    assert not list(tmp_path.glob(".f.*"))  # no temporary file left behind


def test_palette_has_no_yellow_lines_and_distinct_status_colours():
    assert style.YELLOW not in style.SERIES
    assert len(set(style.STATUS_COLOURS.values())) == len(style.STATUS_COLOURS)


# --- task pages -----------------------------------------------------------------------------------------------------
def test_task_pages_inline_local_images_and_tile_placeholders(tmp_path):
    (tmp_path / "images").mkdir()
    Image.fromarray(np.zeros((4, 4, 3), np.uint8)).save(tmp_path / "images" / "a.jpg")
    page = (
        '<img src="../images/a.jpg" alt="a"><img alt="b" src="${image_2_url}">'
        "<img src='https://example.org/c.jpg'><img src=\"../images/missing.jpg\">"
    )
    out, missing, _ = self_contained(page, tmp_path / "annotation")
    assert 'src="data:image/jpeg;base64,' in out
    assert "data:image/svg+xml;base64," in out and "${image_2_url}" not in out
    assert "src='https://example.org/c.jpg'" in out
    assert missing == ["../images/missing.jpg"]

    source = tmp_path / "annotation" / "page.html"
    source.parent.mkdir()
    source.write_text('<p>task</p><img src="../images/a.jpg">')
    copy, missing, _ = self_contained(source.read_text(), source.parent)  # a page's images are relative to its folder
    assert missing == []
    assert copy.startswith("<p>task</p>") and "data:image/jpeg" in copy


# --- run summary ----------------------------------------------------------------------------------------------------
def _record(folder: Path, name: str, **fields) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps({"record_format_version": 6, "incomplete": False, **fields}))


def test_run_summary_reads_snakemake_job_records(tmp_path):
    meta = tmp_path / ".snakemake" / "metadata"
    # one job with two outputs (start times differ by microseconds), two jobs of another rule, and noise
    _record(meta, "a1", rule="make_demo_videos", job_hash=1, starttime=100.0, endtime=110.0)
    _record(meta, "a2", rule="make_demo_videos", job_hash=1, starttime=100.0001, endtime=109.999)  # a folder
    _record(meta / "sub", "b1", rule="train", job_hash=2, starttime=110.0, endtime=170.0)
    _record(meta, "b2", rule="train", job_hash=3, starttime=111.0, endtime=141.0)
    _record(meta, "c", rule="train", job_hash=4, starttime=None, endtime=None)
    (meta / "junk").write_bytes(b"\xff\x00")
    jobs = job_records(meta)
    assert jobs.height == 3
    per_rule = rule_times(jobs)
    assert per_rule.select("rule", "jobs", "total_s", "max_s").rows() == [
        ("make_demo_videos", 1, 10.0, 10.0),
        ("train", 2, 90.0, 60.0),
    ]
    config = tmp_path / "my.yaml"
    config.write_text("stages: [videos]\n")
    out = tmp_path / "summary.html"
    write_run_summary(
        out, configfiles=[str(config)], stages=["videos"], data_note="SYNTHETIC videos", metadata_dir=meta
    )
    page = out.read_text()
    assert str(config) in page and "stages: [videos]" in page and "SYNTHETIC videos" in page
    assert "<code>train</code></td><td class='n'>2</td><td class='n'>1 min 30 s</td>" in page
    assert "3 jobs of 2 steps" in page and "1 min 10 s from the first job" in page


def test_run_summary_says_cluster_job_times_are_not_recorded(tmp_path):
    """Under a cluster executor Snakemake records a remote job when it sees it finish (its end a hair before its
    start): the summary says the time is unknown rather than showing -0.0 s."""
    meta = tmp_path / ".snakemake" / "metadata"
    _record(meta, "a", rule="make_demo_videos", job_hash=1, starttime=100.0, endtime=110.0)  # a localrule
    _record(meta, "b", rule="train", job_hash=2, starttime=200.0003, endtime=200.0)
    _record(meta, "c", rule="train", job_hash=3, starttime=230.0002, endtime=230.0)
    jobs = job_records(meta)
    assert jobs["seconds"].to_list() == [10.0, None, None]
    assert rule_times(jobs).select("rule", "jobs", "total_s", "max_s").rows() == [
        ("make_demo_videos", 1, 10.0, 10.0),
        ("train", 2, None, None),
    ]
    out = tmp_path / "summary.html"
    write_run_summary(out, configfiles=[], stages=["videos"], metadata_dir=meta)
    page = out.read_text()
    assert "-0.0 s" not in page
    assert "<code>train</code></td><td class='n'>2</td><td class='n'>not recorded</td>" in page
    assert "the 1 job run by this machine's Snakemake ran 10.0 s in total; 2 ran through a cluster executor" in page


def test_comparison_sets_figure_says_what_the_order_is(tmp_path, monkeypatch):
    """Issue 32: "rank order [plausibility]" over a set reading 0.57, 0.57, 0.54, 0.55, 0.53: the order is the greedy
    selection's, not by plausibility, and the title says so."""
    from squidflow.comparison import figures as comparison_figures

    titles, real_save = [], style.save

    def recording_save(fig, path, **kw):
        titles.extend(ax.get_title(loc="left") for ax in fig.axes)
        return real_save(fig, path, **kw)

    monkeypatch.setattr(comparison_figures.style, "save", recording_save)
    corpus, sets = _comparison(tmp_path)
    sets_figure(
        io.read_parquet(sets, schemas.COMPARISON_SETS),
        io.read_parquet(corpus, schemas.COMPARISON_CORPUS),
        tmp_path / "sets.png",
        n_sets=1,
    )
    text = " ".join(titles)
    assert "in the order picked (plausible yet diverse)" in text and "rank order [plausibility]" not in text
