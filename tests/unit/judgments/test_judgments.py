"""Judgments: ingestion (MTurk batch results, the release) and its errors, quality checks, aggregation, the
simulated panel's calibration, and the judgments stage run by Snakemake (demo and release configs)."""

from __future__ import annotations

import csv
import subprocess
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from helpers.judgments_corpus import hits_as_csv, make_corpus
from helpers.runs import snakemake

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet, write_csv
from squidflow.demo.panel import PanelConfig, simulate_panel
from squidflow.judgments.agreement import agreement_table
from squidflow.judgments.ingest import JudgmentError, ingest, read_mturk_batch, read_release
from squidflow.judgments.quality import QualityConfig, annotator_report, blank_images
from squidflow.judgments.scores import image_scores

ROOT = Path(__file__).resolve().parents[3]
# --- broken batch-results CSVs -----------------------------------------------------------------------------------
HEADER = [
    "HITId",
    "WorkerId",
    "AssignmentStatus",
    "Input.event_prompt",
    "Input.variant",
    "Input.image_1_id",
    "Input.image_2_id",
    "Answer.rating_1",
    "Answer.rating_2",
]


def write_batch(path: Path, rows: list[list], header=HEADER) -> Path:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


KNOWN = {"vidA_10", "vidB_20", "-dashy_5"}
GOOD = [
    ["H1", "W1", "Approved", "parade", "A", "vidA_10", "vidB_20", "40", "90"],
    ["H1", "W2", "Submitted", "parade", "A", "vidA_10", "vidB_20", "35", "100"],
]


def test_mturk_batch_reads_judgments_with_positions_and_drops_rejected(tmp_path):
    rows = [
        *GOOD,
        ["H1", "W3", "Rejected", "parade", "A", "vidA_10", "vidB_20", "x", "y"],
        ["H2", "W1", "Approved", "'-", "B", "'-dashy_5", "", "0", ""],
    ]
    df, problems, rejected = read_mturk_batch(write_batch(tmp_path / "b.csv", rows), known_images=KNOWN)
    assert rejected == 1 and problems == []
    assert len(df) == 5
    w2 = df.filter(pl.col("annotator") == "W2")
    assert w2["position"].unique().to_list() == [1] and sorted(w2["rating"].to_list()) == [35, 100]
    # a neutralised cell ('-dashy_5, a YouTube id starting with '-') reads back as the id
    assert df.filter(pl.col("hit") == "H2").row(0, named=True)["video_id"] == "-dashy"


@pytest.mark.parametrize(
    ("bad_row", "needle"),
    [
        (
            ["H2", "W9", "Approved", "parade", "A", "vidA_10", "vidB_20", "101", "5"],
            "Answer.rating_1 = '101' is not an integer in [0, 100]",
        ),
        (["H2", "W9", "Approved", "parade", "A", "vidA_10", "vidB_20", "50", "5.5"], "Answer.rating_2 = '5.5'"),
        (
            ["H2", "W9", "Approved", "parade", "A", "vidA_10", "vidB_20", "", "5"],
            "Answer.rating_1 is empty (not rated)",
        ),
        (["H2", "W9", "Approved", "parade", "A", "nope_3", "vidB_20", "50", "5"], "unknown image 'nope_3'"),
        (
            ["H2", "W1", "Approved", "parade", "A", "vidA_10", "vidB_20", "50", "5"],
            "duplicate judgment: worker W1 already rated vidA_10",
        ),
        (["H2", "W9", "Approved", "parade", "C", "vidA_10", "vidB_20", "50", "5"], "Input.variant 'C' is not A or B"),
    ],
)
def test_bad_rows_stop_with_file_row_and_problem_or_are_skipped(tmp_path, bad_row, needle):
    path = write_batch(tmp_path / "batch.csv", [*GOOD, bad_row])
    with pytest.raises(JudgmentError) as err:
        read_mturk_batch(path, known_images=KNOWN)
    msg = str(err.value)
    assert f"{path}:4:" in msg and needle in msg and "on_error" in msg
    df, problems, _ = read_mturk_batch(path, known_images=KNOWN, on_error="skip")
    assert len(df) == 4 and [(p.row, needle in p.problem) for p in problems] == [(4, True)]


def test_missing_columns_stop_even_in_skip_mode(tmp_path):
    path = write_batch(tmp_path / "batch.csv", [r[:-1] for r in GOOD], header=HEADER[:-1])
    with pytest.raises(JudgmentError, match=r"batch\.csv: missing column\(s\) \['Answer.rating_2'\]"):
        read_mturk_batch(path, on_error="skip")
    rel = write_batch(
        tmp_path / "huj.csv",
        [["v", "1", "a", "parade", "1", "2"]],
        header=["vid_ID", "frame_num", "task_var", "event", "huj_0", "huj_1"],
    )
    with pytest.raises(JudgmentError, match=r"huj\.csv: missing column\(s\) \['huj_2'\]"):
        read_release(rel, on_error="skip")


def test_release_reader_errors_name_the_line(tmp_path):
    header = ["vid_ID", "frame_num", "task_var", "event", "huj_0", "huj_1", "huj_2"]
    path = write_batch(
        tmp_path / "huj.csv",
        [['"""-abc"""', "12", "a", "parade", "1", "50", "100"], ["xyz", "3", "b", "parade", "-4", "50", "7"]],
        header=header,
    )
    with pytest.raises(JudgmentError, match=r"huj\.csv:3: huj_0 = '-4' is not an integer in \[0, 100\]"):
        read_release(path)
    df, problems = read_release(path, on_error="skip")
    assert df["video_id"].unique().to_list() == ["-abc"] and df["annotator"].to_list() == ["huj_0", "huj_1", "huj_2"]
    assert len(problems) == 1


def test_duplicates_across_batch_files_stop_unless_marked_as_a_repeat_round(tmp_path):
    a = write_batch(tmp_path / "a.csv", GOOD)
    b = write_batch(tmp_path / "b.csv", GOOD)
    with pytest.raises(JudgmentError, match="round: 2"):
        ingest(source="mturk", batches=[(a, 1), (b, 1)], known_images=KNOWN)
    df, report = ingest(source="mturk", batches=[(a, 1), (b, 2)], known_images=KNOWN)
    assert sorted(df["round"].unique().to_list()) == [1, 2] and "Judgments read: 8" in report


# --- quality and aggregation ---------------------------------------------------------------------------------------
def _judgments(rows):
    base = {"event_prompt": "parade", "variant": "A", "hit": "H", "position": 0, "round": 1, "source": "mturk"}
    cols = {c: schemas.JUDGMENTS.columns[c] for c in schemas.JUDGMENTS.required}
    return pl.DataFrame([{**base, **r} for r in rows]).select(list(cols)).cast(cols)


def test_quality_flags_blank_and_control_violations_and_lists_the_excluded(tmp_path):
    make_corpus(tmp_path, videos_per_event=1, frames_per_video=12, seed=3)
    frames = read_parquet(tmp_path / "results/dataset/frames.parquet", schemas.FRAMES)
    truth = pl.read_parquet(tmp_path / "results/videos/demo/truth.parquet")
    blank = blank_images(frames, 4.0, root=tmp_path)
    black = {
        f"{v}_{f}"
        for v, f in truth.filter(pl.col("condition") == "black").select("video_id", "frame_index").iter_rows()
    }
    assert blank == black and blank
    img = sorted(blank)[0]
    vid, fi = img.rsplit("_", 1)
    j = _judgments(
        [
            {"video_id": vid, "frame_index": int(fi), "annotator": "careful", "rating": 2},
            {"video_id": vid, "frame_index": int(fi), "annotator": "careless", "rating": 60},
            {"video_id": "ctl", "frame_index": 1, "annotator": "careful", "rating": 95},
            {"video_id": "ctl", "frame_index": 1, "annotator": "sloppy", "rating": 40},
        ]
    )
    cfg = QualityConfig(controls=[{"image_id": "ctl_1", "event_prompt": "parade", "min": 90, "max": 100}])
    report = annotator_report(j, cfg, blank)
    by = {r["annotator"]: r for r in report.iter_rows(named=True)}
    assert not by["careful"]["excluded"] and by["careful"]["flags"] == []
    assert by["careless"]["excluded"] and "blank: rated 1 blank image(s) above 5" in by["careless"]["flags"][0]
    assert by["sloppy"]["excluded"] and "expected 90-100" in by["sloppy"]["flags"][0]
    assert set(report["annotator"]) == {"careful", "careless", "sloppy"}  # nobody dropped from the report


def test_image_scores_bins_and_alt_bins():
    j = _judgments(
        [
            {"video_id": "v", "frame_index": 1, "annotator": "a", "rating": 100},
            {"video_id": "v", "frame_index": 1, "annotator": "b", "rating": 100},
            {"video_id": "v", "frame_index": 1, "annotator": "c", "rating": 88},
            {"video_id": "v", "frame_index": 2, "annotator": "a", "rating": 10},
            {"video_id": "v", "frame_index": 2, "annotator": "b", "rating": 50},
            {"video_id": "v", "frame_index": 2, "annotator": "c", "rating": 90},
            {"video_id": "v", "frame_index": 2, "annotator": "x", "rating": 0},
        ]
    )
    s = {r["frame_index"]: r for r in image_scores(j, excluded=["x"]).iter_rows(named=True)}
    assert s[1]["certainty_bin"] == "80-100" and s[1]["alt_bins"] == ["80-100"] * 3 and s[1]["high_certainty"]
    assert s[2]["people_mean"] == 50 and s[2]["n"] == 3 and s[2]["certainty_bin"] == "40-60"
    assert s[2]["alt_bins"] == ["0-20", "40-60", "80-100"] and s[2]["people_std"] == pytest.approx(np.std([10, 50, 90]))


# --- the simulated panel ---------------------------------------------------------------------------------------------
def test_panel_is_calibrated_to_the_release_agreement_on_a_realistic_truth(tmp_path):
    """300 images per event, like the release's variant A (1,200 images): α and Spearman within ±0.05."""
    make_corpus(tmp_path, videos_per_event=50, frames_per_video=6, seed=7)
    frames = read_parquet(tmp_path / "results/dataset/frames.parquet", schemas.FRAMES)
    truth = read_parquet(tmp_path / "results/videos/demo/truth.parquet", schemas.TRUTH)
    hits = hits_as_csv(frames, tmp_path)
    batch, repeat, info = simulate_panel(hits, truth, PanelConfig(seed=5))
    write_csv(batch, tmp_path / "batch.csv")
    write_csv(repeat, tmp_path / "repeat.csv")
    assert batch["WorkerId"].str.starts_with("SIMULATED-").all() and batch["HITId"].str.starts_with("SIMULATED-").all()
    known = set(frames["image_id"])
    judgments, _ = ingest(
        source="simulated", batches=[(tmp_path / "batch.csv", 1), (tmp_path / "repeat.csv", 2)], known_images=known
    )
    table = {r["variant"]: r for r in agreement_table(judgments).iter_rows(named=True)}
    assert table["A"]["alpha"] == pytest.approx(0.658, abs=0.05)
    assert table["A"]["spearman"] == pytest.approx(0.676, abs=0.05)
    assert 0 < info["noise_sd"] < 100
    # no annotator works on both variants; each HIT has three different annotators
    assert judgments.group_by("annotator").agg(pl.col("variant").n_unique())["variant"].max() == 1
    r1 = judgments.filter(pl.col("round") == 1)
    assert r1.group_by("hit").agg(pl.col("annotator").n_unique())["annotator"].unique().to_list() == [3]


def test_careless_simulated_annotators_are_caught_by_the_quality_checks(tmp_path):
    make_corpus(tmp_path, videos_per_event=6, frames_per_video=6, seed=2)
    frames = read_parquet(tmp_path / "results/dataset/frames.parquet", schemas.FRAMES)
    truth = read_parquet(tmp_path / "results/videos/demo/truth.parquet", schemas.TRUTH)
    batch, _, _ = simulate_panel(
        hits_as_csv(frames, tmp_path), truth, PanelConfig(careless=1, annotators_per_variant=4, seed=1)
    )
    write_csv(batch, tmp_path / "batch.csv")
    judgments, _ = ingest(
        source="simulated", batches=[(tmp_path / "batch.csv", 1)], known_images=set(frames["image_id"])
    )
    report = annotator_report(judgments, QualityConfig(), blank_images(frames, 4.0, root=tmp_path))
    assert set(report.filter(pl.col("excluded"))["annotator"]) == {"SIMULATED-A-04", "SIMULATED-B-04"}
    assert len(report) == 8
    # without them, agreement is higher than with them
    kept = judgments.filter(~pl.col("annotator").is_in(report.filter(pl.col("excluded"))["annotator"].to_list()))
    a_all = agreement_table(judgments).filter(pl.col("variant") == "A")["alpha"][0]
    a_kept = agreement_table(kept).filter(pl.col("variant") == "A")["alpha"][0]
    assert a_kept > a_all


# --- the stage as Snakemake runs it ------------------------------------------------------------------------------------
def run_in(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    return snakemake("--snakefile", ROOT / "Snakefile", "--directory", workdir, "--cores", "2", *args, timeout=600)


@pytest.mark.slow
def test_demo_stage_runs_from_the_simulated_panel(small_workflow):
    """The judgments stage as the demo runs it: every selected frame rated three times in each variant (round 1) by the
    SIMULATED panel, and Table 7, Figure 3 and the per-image scores written from those ratings."""
    results = small_workflow.results
    table = pl.read_csv(results / "tables/table7_agreement.csv")
    measures = ["spearman", "alpha", "kappa_3", "kappa_4", "kappa_5", "alpha_ordinal", "alpha_interval"]
    assert table.columns == ["variant", *[c for m in measures for c in (m, f"{m}_lo", f"{m}_hi")]]
    for m in measures:  # every measure inside its bootstrap interval over images
        assert ((table[f"{m}_lo"] <= table[m]) & (table[m] <= table[f"{m}_hi"])).all(), m
    assert table["variant"].to_list() == ["A", "B", "A+B"]
    assert "SIMULATED" in (results / "tables/table7_agreement.md").read_text()
    assert (results / "annotation/hit_template.html").stat().st_size > 0
    n_images = len(read_parquet(results / "dataset/frames.parquet", schemas.FRAMES))
    assert n_images > 0
    j = read_parquet(results / "judgments/judgments.parquet", schemas.JUDGMENTS)
    assert set(j["source"]) == {"simulated"} and len(j.filter(pl.col("round") == 1)) == n_images * 3 * 2
    scores = read_parquet(results / "judgments/image_scores.parquet", schemas.IMAGE_SCORES)
    assert len(scores) == n_images * 2 and scores["n"].min() == 3
    assert (results / "figures/fig3_judgments.png").stat().st_size > 10_000


@pytest.mark.slow
def test_release_config_makes_table7_without_videos_or_frames(tmp_path, shared_data):
    # the config names the release's public URL; the shared_data fixture's SQUIDFLOW_DATA has its local copy
    work = tmp_path / "work"
    work.mkdir()
    dry = run_in(work, "--configfile", str(ROOT / "config/squid-e-release.yaml"), "-n")
    assert dry.returncode == 0, dry.stderr[-3000:]
    planned = {line.split()[-1] for line in dry.stdout.splitlines() if line.startswith("rule ")}
    assert "annotation_hits" not in "".join(planned) and "frames" not in "".join(planned)
    res = run_in(work, "--configfile", str(ROOT / "config/squid-e-release.yaml"))
    assert res.returncode == 0, res.stderr[-4000:]
    table = {r["variant"]: r for r in pl.read_csv(work / "results/tables/table7_agreement.csv").iter_rows(named=True)}
    assert table["A"]["alpha"] == pytest.approx(0.658, abs=0.005) and table["B"]["kappa_5"] == pytest.approx(
        0.386, abs=0.005
    )
    assert not (work / "results/dataset").exists() and not (work / "results/videos").exists()
    assert (work / "results/figures/fig3_judgments.png").exists()


def test_mturk_ids_as_the_release_writes_them_and_the_closest_known_id(tmp_path):
    """Issue 32: an id written `\"\"\"-dashy_5\"\"\"` (the release's form) or `"-dashy_5"` (pandas') is the id; an
    unknown one names the closest known id and what was stripped."""
    rows = [*GOOD, ["H2", "W1", "Approved", "parade", "B", '"""-dashy_5"""', ' "vidB_20" ', "0", "10"]]
    df, problems, _ = read_mturk_batch(write_batch(tmp_path / "b.csv", rows), known_images=KNOWN)
    assert problems == [] and set(df.filter(pl.col("hit") == "H2")["video_id"]) == {"-dashy", "vidB"}
    typo = write_batch(
        tmp_path / "typo.csv", [*GOOD, ["H2", "W9", "Approved", "parade", "A", '"-dashy_6"', "vidB_20", "50", "5"]]
    )
    with pytest.raises(JudgmentError) as err:
        read_mturk_batch(typo, known_images=KNOWN)
    msg = str(err.value)
    assert "unknown image '-dashy_6'" in msg and "quotes stripped from '\"-dashy_6\"'" in msg, msg
    assert "closest known id: '-dashy_5'" in msg


def test_missing_column_messages_list_only_the_files_columns(tmp_path):
    """Issue 32: the reader's own `_line` column leaked into "missing column" messages."""
    rel = write_batch(
        tmp_path / "huj.csv",
        [["v", "1", "a", "parade", "1", "2"]],
        header=["vid_ID", "frame_num", "task_var", "event", "huj_0", "huj_1"],
    )
    with pytest.raises(JudgmentError) as err:
        read_release(rel)
    assert "missing column(s) ['huj_2']" in str(err.value) and "_line" not in str(err.value), str(err.value)
