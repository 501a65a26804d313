"""The SQUID-E authors' Table 1 and Table 3 image sets, reconstructed from the real release files (experiments/indices)
and mapped to frames through huj_annotations.csv — offline, without a video."""

from __future__ import annotations

import subprocess
from pathlib import Path

import polars as pl
import pytest
from helpers.runs import SNAKEMAKE

from squidflow.contracts import io, schemas
from squidflow.judgments.ingest import read_release
from squidflow.training.authors_sets import authors_sets, experiment_file_sources, leaks, read_experiment_files
from squidflow.vocabulary.release import EVENTS_BY_PROMPT

ROOT = Path(__file__).resolve().parents[3]
EVENTS = {"birthday", "parade", "protest", "wedding"}
SIMILAR = {"birthday": "wedding", "wedding": "birthday", "parade": "protest", "protest": "parade"}


@pytest.fixture(scope="module")
def release(shared_data: Path):
    squid = shared_data / "squid-e"
    files = read_experiment_files(experiment_file_sources(str(squid / "experiments")))
    judgments, _ = read_release(squid / "huj_annotations.csv")
    sets, notes = authors_sets(files, judgments, squid / "dataset.csv")
    return sets, notes, judgments, files


def test_table1_sets_counts_per_event_and_split(release):
    sets, *_ = release
    io.conform(sets, schemas.AUTHORS_SETS)
    t1 = sets.filter(pl.col("experiment") == "table1")
    assert t1["target"].null_count() == len(t1)
    counts = dict(((e, s), n) for e, s, n in t1.group_by("event", "split").len().iter_rows())
    assert counts == {**{(e, "train"): 300 for e in EVENTS}, **{(e, "val"): 300 for e in EVENTS}}
    train, val = t1.filter(pl.col("split") == "train"), t1.filter(pl.col("split") == "val")
    assert (train["match"] == "video").all() and train["frame_index"].null_count() == 1200
    assert train.group_by("video_id").len()["len"].unique().to_list() == [6]  # each train video: its six frames
    assert val["frame_index"].null_count() == 0 and set(val["match"]) == {"ratings", "tied ratings"}


def test_table3_sets_per_target(release):
    sets, *_ = release
    t3 = sets.filter(pl.col("experiment") == "table3")
    assert set(t3["target"]) == EVENTS
    for target in EVENTS:
        g = t3.filter(pl.col("target") == target)
        train, val = g.filter(pl.col("split") == "train"), g.filter(pl.col("split") == "val")
        assert len(train) == 960 and len(val) == 200
        assert len(train.filter(pl.col("event") == target)) == 480  # 300 unrated + 180 rated images of the target
        assert sorted(train.filter(pl.col("event") != target).group_by("event").len()["len"].to_list()) == [160] * 3
        assert val.group_by("event").len().sort("event")["len"].to_list() == [100, 100]
        assert set(val["event"]) == {target, SIMILAR[target]}
        assert val["frame_index"].null_count() == 0


def test_eval_images_map_to_the_frames_that_carry_their_ratings(release, shared_data: Path):
    sets, notes, judgments, files = release
    labels_a, labels_all = files["labels_var_a.json"], files["labels_all.json"]
    rows = judgments.group_by("video_id", "frame_index", "variant", "event_prompt").agg(pl.col("rating").sort())
    ratings = {(v, f, var, EVENTS_BY_PROMPT.get(p, p)): r for v, f, var, p, r in rows.iter_rows()}
    evaluated = sets.filter(pl.col("frame_index").is_not_null()).unique("image")
    assert len(evaluated) == 1200  # the rated images of the four events: Table 1's evaluation images
    for image, event, video, frame in evaluated.select("image", "event", "video_id", "frame_index").iter_rows():
        a = sorted(labels_a[image]["huj_data"])
        assert ratings[(video, frame, "A", event)] == a, image  # the frame's variant A ratings are the image's
        assert labels_all[image]["vid_id"] == video
    # release-wide: 1,798 eval images map to one frame, the two of video dcINl0zJ_YU tie (identical ratings)
    assert any("dcINl0zJ_YU" in n and "identical" in n for n in notes)
    mapped = notes[0]
    assert (
        "eval ratings: 1726" in mapped
        and "eval ratings (renamed video): 72" in mapped
        and "eval tied ratings: 2" in mapped
    )
    assert any("12 release video ids" in n and "lish_us_vaccine_1 -> cIuGwaBFX8I" in n for n in notes)
    assert any("13 release video ids are neither" in n and "399014419" in n for n in notes)


def test_the_leak_is_counted(release):
    sets, *_ = release
    table = {(r["experiment"], r["target"]): r for r in leaks(sets).iter_rows(named=True)}
    assert table[("table1", None)]["rated_in_train"] == 0 and table[("table1", None)]["val_sharing_video"] == 6
    sharing = {t: table[("table3", t)]["val_sharing_video"] for t in EVENTS}
    assert sharing == {"birthday": 95, "parade": 100, "protest": 100, "wedding": 103}
    assert all(table[("table3", t)]["rated_in_train"] == 180 for t in EVENTS)
    assert all(table[("table3", t)]["val_in_train"] == 0 for t in EVENTS)  # no image is in both lists itself


@pytest.mark.slow  # runs Snakemake jobs
def test_rule_builds_offline_from_local_copies(shared_data: Path, tmp_path: Path):
    """`snakemake results/training/authors_sets.parquet --configfile config/squid-e.yaml` with local copies: one job,
    no video, no frame."""
    squid = shared_data / "squid-e"
    (tmp_path / "data" / "standard").mkdir(parents=True)  # config/squid-e.yaml names it; nothing here reads it
    release = (
        f"squid_e_release={{dataset_csv: {squid / 'dataset.csv'}, judgments_csv: {squid / 'huj_annotations.csv'}, "
        f"experiments: {squid / 'experiments'}}}"
    )
    cmd = [
        SNAKEMAKE,
        "results/training/authors_sets.parquet",
        "--directory",
        str(tmp_path),
        "--configfile",
        str(ROOT / "config/squid-e.yaml"),
        "--config",
        release,
        "--cores",
        "1",
    ]
    plan = subprocess.run([*cmd, "-n"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert plan.returncode == 0, plan.stdout[-2000:] + plan.stderr[-2000:]
    assert "authors_sets        1" in plan.stdout and "acquire" not in plan.stdout and "extract" not in plan.stdout
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    sets = io.read_parquet(tmp_path / "results/training/authors_sets.parquet", schemas.AUTHORS_SETS)
    assert len(sets) == 2400 + 4 * 1160
    log = (tmp_path / "logs/authors_sets/authors_sets.log").read_text()
    assert "LEAK" in log and "180 training images are rated eval images" in log


def test_human_means_of_the_authors_eval_images_are_the_release_means(release):
    """training.human_means: all (the default with the release's judgments) gives each evaluation image the mean of
    its own released ratings for the prompt: Table 1 variant A of its event, Table 3 variant B of the target."""
    from squidflow.training.authors_sets import image_table
    from squidflow.training.sets import judgment_means
    from squidflow.vocabulary.release import PROMPTS

    sets, _, judgments, files = release
    images = image_table(files["labels_all.json"], files["labels_var_a.json"])
    own = {r["image"]: r for r in images.iter_rows(named=True)}
    means = {(v, f, p, var): m for v, f, p, var, m in judgment_means(judgments).iter_rows()}
    val = sets.filter(pl.col("split") == "val")
    checked = 0
    for experiment, target, image, event, video, frame in val.select(
        "experiment", "target", "image", "event", "video_id", "frame_index"
    ).iter_rows():
        rec = own[image]
        if experiment == "table1":
            want, key = rec["ratings_a"], (video, frame, PROMPTS[event], "A")
        else:
            assert rec["prompt_b"] == target  # Table 3's evaluation images were judged for the target in variant B
            want, key = rec["ratings_b"], (video, frame, PROMPTS[target], "B")
        assert means[key] == pytest.approx(sum(want) / len(want)), image
        checked += 1
    assert checked == 1200 + 4 * 200


def test_clean_table3_sets_on_the_release_reach_what_the_data_allows(release, shared_data: Path):
    """training.sets: clean on every frame dataset.csv lists (the rated videos in the test split, as the frames stage
    puts them): 120 + 120 evaluation images judged for the target, then as many video-disjoint training images as
    the remaining videos hold, balanced by class, with a note saying why it is not 480 + 480."""
    from squidflow.training.sets import experiment_sets_with_summary
    from squidflow.vocabulary.release import read_dataset_csv

    sets, _, judgments, _ = release
    rated = set(judgments["video_id"])
    rows, seen = [], set()
    for r in read_dataset_csv(shared_data / "squid-e" / "dataset.csv").rows:
        for f in r.frames:
            if r.event in EVENTS and (r.video_id, f) not in seen:
                seen.add((r.video_id, f))
                rows.append(
                    {
                        "image_id": f"{r.video_id}_{f}",
                        "pool": "SE",
                        "event": r.event,
                        "video_id": r.video_id,
                        "split": "test" if r.video_id in rated else "train",
                        "source_path": "x",
                        "frame_index": f,
                    }
                )
    se = pl.DataFrame(rows).with_row_index("row").with_columns(pl.col("row").cast(pl.Int64))
    sd = se.with_columns(
        pl.lit("SD").alias("pool"),
        ("sd" + pl.col("image_id")).alias("image_id"),
        pl.when(pl.col("split") == "test").then(pl.lit("val")).otherwise(pl.lit("train")).alias("split"),
    )
    report = pl.DataFrame(
        {"annotator": ["huj_0"], "n_judgments": [1], "flags": [[]], "excluded": [False]},
        schema=schemas.ANNOTATOR_REPORT.columns,
    )
    training = {
        "data_seed": 0,
        "sets": "clean",
        "human_means": "all",
        "classification": {"events": ["birthday", "wedding", "parade", "protest"]},
        "calibration": {
            "target_event": "birthday",
            "similar_event": "wedding",
            "train_target": 480,
            "train_other": 480,
            "val_target": 120,
            "val_similar": 120,
        },
    }
    out, summary = experiment_sets_with_summary("calibration", sd, se, None, judgments, report, training, None)
    se_sets = out.filter(pl.col("dataset") == "SE").join(se.select("image_id", "video_id"), on="image_id")
    counts = {(u, lab): n for u, lab, n in se_sets.group_by("use", "label").len().iter_rows()}
    assert counts[("eval", 1)] == 120 and counts[("eval", 0)] == 120
    assert counts[("train", 1)] == counts[("train", 0)] == 402  # 67 birthday videos × 6 frames left after evaluation
    train_videos = set(se_sets.filter(pl.col("use") == "train")["video_id"])
    assert not train_videos & set(se_sets.filter(pl.col("use") == "eval")["video_id"])
    assert any(n.startswith("SE train") and "balanced to 402 + 402" in n for n in summary["notes"])
