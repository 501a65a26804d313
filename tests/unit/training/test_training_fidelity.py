"""The definition choices of Tables 1, 3 and 9, each against what it claims: the authors' ECE against torchmetrics,
relaxed softmax and MC dropout as the authors built them, the trainable-layer switch, GA/AU on whole frames, the
clean and authors' sets, the human means, and the captions that name every choice."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import polars as pl
import pytest
import torch
from PIL import Image
from torchvision.transforms import v2

from squidflow.contracts import io, schemas
from squidflow.training.augment import PerspectiveCrop, build_augmentation, frame_short_side, transform_list
from squidflow.training.cache import FrameCache, build_cache, build_frame_cache, open_frame_cache, resize_short_side
from squidflow.training.calibration import authors_calibration_error, binary_calibration_error
from squidflow.training.config import TrainConfig
from squidflow.training.losses import get_method, mc_dropout_probs, relaxed_softmax_loss, relaxed_softmax_probs
from squidflow.training.models import Classifier, load_backbone, set_trainable
from squidflow.training.sets import (
    authors_images,
    calibration_sets,
    experiment_sets_with_summary,
    judgment_means,
    screening_notes,
)
from squidflow.training.tables import TABLES, aggregate_runs, to_markdown

# --- ECE as the authors computed it ------------------------------------------------------------------------------


def test_binary_calibration_error_equals_torchmetrics_on_random_data():
    from torchmetrics.functional.classification import binary_calibration_error as tm_binary

    rng = np.random.default_rng(0)
    for n in (16, 7, 200):
        confidence, target = rng.uniform(0.001, 0.999, n), rng.integers(0, 2, n)
        want = tm_binary(torch.tensor(confidence), torch.tensor(target), n_bins=5, norm="l1").item()
        assert binary_calibration_error(confidence, target, 5) == pytest.approx(want, abs=1e-6)


def test_authors_ece_is_torchmetrics_on_p_class0_averaged_over_shuffled_batches_of_16():
    from torchmetrics.functional.classification import binary_calibration_error as tm_binary

    rng = np.random.default_rng(1)
    p0 = rng.uniform(0.01, 0.99, 200)
    probs, labels = np.stack([p0, 1 - p0], axis=1), rng.integers(0, 2, 200)
    order = np.random.default_rng(7).permutation(200)  # the batches the seed draws
    batches = [order[i : i + 16] for i in range(0, 200, 16)]
    want = np.mean([tm_binary(torch.tensor(p0[b]), torch.tensor(labels[b]), n_bins=5).item() for b in batches])
    assert len(batches) == 13 and len(batches[-1]) == 8  # the short last batch counts as one, as in the authors' loop
    assert authors_calibration_error(probs, labels, n_bins=5, batch_size=16, seed=7) == pytest.approx(want, abs=1e-6)
    # swapping the class names does not change it
    assert authors_calibration_error(probs[:, ::-1], 1 - labels, seed=7) == pytest.approx(want, abs=1e-6)


def test_authors_ece_is_high_for_a_confident_correct_model_and_zero_for_a_constant_half():
    labels = np.array([0, 1] * 40)
    confident = np.eye(2)[labels] * 0.98 + 0.01
    assert authors_calibration_error(confident, labels) > 0.95
    assert authors_calibration_error(np.full((80, 2), 0.5), labels) == pytest.approx(0.0, abs=0.13)


# --- relaxed softmax and MC dropout ------------------------------------------------------------------------------
Z = torch.tensor([[0.0, math.log(3.0), -2.0]], dtype=torch.float64)  # logits (0, ln 3), extra output -2


def test_relaxed_softmax_raw_multiplies_by_the_extra_output_as_is():
    # a = -2: softmax(-2·(0, ln 3)) = (9/10, 1/10): a negative scale flips the prediction (the authors' model allows it)
    assert relaxed_softmax_probs(Z, "raw")[0].tolist() == pytest.approx([0.9, 0.1])
    assert relaxed_softmax_probs(Z, "softplus")[0, 1].item() > 0.5  # softplus keeps the order of the logits
    # trained with label smoothing 0.2 on a·z: target (0.1, 0.9)
    want = -(0.1 * math.log(0.9) + 0.9 * math.log(0.1))
    assert relaxed_softmax_loss(Z, torch.tensor([1]), "raw", 0.2).item() == pytest.approx(want)
    method = get_method("RS", TrainConfig())
    assert method.rs_scale == "raw" and method.loss(Z, torch.tensor([1])).item() == pytest.approx(want)
    assert get_method("RS", replace(TrainConfig(), rs_scale="softplus", rs_label_smoothing=0.0)).loss(
        Z, torch.tensor([1])
    ).item() == pytest.approx(relaxed_softmax_loss(Z, torch.tensor([1]), "softplus", 0.0).item())
    with pytest.raises(ValueError, match="rs_scale"):
        get_method("RS", replace(TrainConfig(), rs_scale="exp"))


def test_mc_dropout_averages_logits_then_softmax_or_probabilities():
    passes = torch.tensor([[[0.0, 4.0]], [[0.0, -2.0]]])  # two passes, one image
    assert mc_dropout_probs(passes, "logits")[0].tolist() == pytest.approx(
        torch.softmax(torch.tensor([0.0, 1.0]), 0).tolist()
    )
    mean_probs = (torch.softmax(passes[0, 0], 0) + torch.softmax(passes[1, 0], 0)) / 2
    assert mc_dropout_probs(passes, "probs")[0].tolist() == pytest.approx(mean_probs.tolist())
    assert (
        get_method("MC", TrainConfig()).mc_average == "logits"
        and get_method("MC", replace(TrainConfig(), mc_average="probs")).mc_average == "probs"
    )


# --- trainable layers --------------------------------------------------------------------------------------------


def _step(choice: str, backbone: str = "resnet50"):
    torch.set_num_threads(1)
    torch.manual_seed(0)
    net, width = load_backbone(backbone, "none")
    model = Classifier(net, width, 2)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    buffers = {n: b.detach().clone() for n, b in model.named_buffers()}
    optimizer = torch.optim.Adam(set_trainable(model, choice, backbone), lr=1e-2)
    model.train()
    loss = torch.nn.functional.cross_entropy(model(torch.randn(2, 3, 32, 32)), torch.tensor([0, 1]))
    loss.backward()
    optimizer.step()
    changed = {n for n, p in model.named_parameters() if not torch.equal(p, before[n])}
    return model, changed, {n for n, b in model.named_buffers() if not torch.equal(b, buffers[n])}


def test_layer4_choice_trains_only_layer4_and_the_head():
    model, changed, buffers = _step("layer4")
    names = [n for n, _ in model.named_parameters()]
    below = [n for n in names if n.startswith("backbone.") and not n.startswith("backbone.layer4.")]
    assert below and not set(below) & changed  # conv1, bn1, layer1-3 unchanged after a step
    assert {"head.weight", "head.bias"} <= changed and any(n.startswith("backbone.layer4.") for n in changed)
    # frozen layers stay in training mode, as under the authors' .detach(): batch-norm statistics still move
    assert "backbone.bn1.running_mean" in buffers


def test_head_choice_trains_only_the_head_and_all_trains_everything():
    _, changed, _ = _step("head", "efficientnet_lite0")
    assert changed == {"head.weight", "head.bias"}
    model, changed, _ = _step("all", "efficientnet_lite0")
    assert "backbone.conv_stem.weight" in changed and "backbone.blocks.0.0.conv_dw.weight" in changed


def test_layer4_of_efficientnet_is_its_last_stride_32_stage():
    model, changed, _ = _step("layer4", "efficientnet_lite0")
    assert not any(n.startswith(("backbone.conv_stem", "backbone.blocks.4.")) for n in changed)
    assert any(n.startswith("backbone.blocks.6.") for n in changed) and "backbone.conv_head.weight" in changed


def test_train_config_defaults_are_the_authors_choices():
    from squidflow.training.config import TrainConfig

    cfg = TrainConfig()
    assert (
        cfg.trainable_for("MC") == "head"
        and cfg.trainable_for("BL") == "layer4"
        and cfg.trainable_for("GA") == "layer4"
    )
    assert (cfg.rs_scale, cfg.rs_label_smoothing, cfg.mc_average, cfg.augment_geometry) == (
        "raw",
        0.2,
        "logits",
        "whole_frame",
    )
    assert TrainConfig(trainable={"MC": "all"}).trainable_for("MC") == "all"


# --- GA and AU on whole frames -----------------------------------------------------------------------------------
def _two_colour_frame(short: int = 128, wide: int = 256) -> torch.Tensor:
    """A wide frame: a red centre square (what Resize + CenterCrop keeps), blue on both sides."""
    frame = torch.zeros(3, short, wide, dtype=torch.uint8)
    frame[2] = 220  # blue everywhere
    left = (wide - short) // 2
    frame[:, :, left : left + short] = torch.tensor([220, 30, 30], dtype=torch.uint8)[:, None, None]
    return frame


def _blue_share(image: torch.Tensor) -> float:
    return float(((image[2].int() > 150) & (image[0].int() < 80)).float().mean())


@pytest.mark.parametrize("method", ["GA", "AU"])
def test_whole_frame_augmentation_reaches_outside_the_centre_crop(method):
    frame = _two_colour_frame()
    augment = build_augmentation(method, 64, "whole_frame")
    assert frame_short_side(method, 64, "whole_frame") == 128
    outs = []
    for seed in range(40):
        torch.manual_seed(seed)
        outs.append(augment(frame))
    assert all(o.shape == (3, 64, 64) and o.dtype == torch.uint8 for o in outs)
    assert sum(_blue_share(o) > 0.05 for o in outs) >= 5  # pixels from outside the centre crop
    centre = v2.functional.center_crop(v2.functional.resize(frame, 64), [64, 64])
    assert sum(not torch.equal(o, centre) for o in outs) >= 35  # not the centre crop


def test_center_crop_geometry_never_leaves_the_centre_crop():
    # the former behaviour, still available: AU's RandomCrop(64) of a 64-px centre crop does nothing
    centre = v2.functional.center_crop(v2.functional.resize(_two_colour_frame(), 64), [64, 64])
    augment = build_augmentation("AU", 64, "center_crop")
    for seed in range(20):
        torch.manual_seed(seed)
        assert _blue_share(augment(centre)) == 0.0
    assert frame_short_side("AU", 64, "center_crop") is None and frame_short_side("PA", 64) is None


def test_fused_perspective_crop_equals_torchvision_warp_then_crop():
    torch.manual_seed(3)
    frame = torch.nn.functional.avg_pool2d(torch.randint(0, 256, (1, 3, 128, 170)).float(), 3, 1, 1)[0].to(torch.uint8)
    perspective, crop = transform_list("GA", 64)
    reference, fused = v2.Compose([perspective, crop]), PerspectiveCrop(perspective, crop)
    for seed in range(60):
        torch.manual_seed(seed)
        a = reference(frame)
        torch.manual_seed(seed)
        b = fused(frame)
        assert (a.int() - b.int()).abs().max() <= 1, seed  # same random draws, same pixels up to rounding


def test_separable_blur_equals_torchvision_gaussian_blur():
    from squidflow.training.augment import SeparableGaussianBlur

    image = torch.randint(0, 256, (3, 40, 52), dtype=torch.uint8, generator=torch.Generator().manual_seed(2))
    reference, fast = v2.GaussianBlur(kernel_size=(5, 9)), SeparableGaussianBlur(kernel_size=(5, 9))
    for seed in range(30):
        torch.manual_seed(seed)
        a = reference(image)
        torch.manual_seed(seed)
        b = fast(image)
        assert a.shape == b.shape and (a.int() - b.int()).abs().max() <= 1, seed
    steps = build_augmentation("NM", 64).transforms
    assert type(steps[-1]) is SeparableGaussianBlur and steps[-1].kernel_size == (5, 9)


def _jpegs(folder, sizes):
    rng = np.random.default_rng(0)
    paths = []
    for i, (h, w) in enumerate(sizes):
        path = folder / f"{i}.jpg"
        Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(path)
        paths.append(str(path))
    return pl.DataFrame(
        {"image_id": [f"i{i}" for i in range(len(paths))], "source_path": paths, "frame_index": [None] * len(paths)},
        schema_overrides={"frame_index": pl.Int64},
    )


def test_frame_cache_keeps_whole_frames_of_any_shape_beside_the_centre_crops(tmp_path):
    images = _jpegs(tmp_path, [(120, 160), (200, 100), (90, 90)])
    index = build_cache(images, tmp_path / "SD.npy", 64, 64)  # the unaugmented path: Resize(64) -> CenterCrop(64)
    assert np.load(tmp_path / "SD.npy").shape == (3, 3, 64, 64)
    frames = build_frame_cache(index.slice(0, 2), tmp_path / "SD_frames.npy", 128)
    io.conform(frames, schemas.TRAINING_FRAMES)
    cache = open_frame_cache(tmp_path / "SD_frames.npy", frames)
    assert isinstance(cache, FrameCache) and len(cache) == 2
    with Image.open(images["source_path"][1]) as im:
        want = resize_short_side(im, 128)
    assert cache[1].shape == (3, 256, 128) and np.array_equal(cache[1], want)  # portrait: width is the short side
    assert cache[0].shape == (3, 128, 170)
    with pytest.raises(KeyError, match="no whole frame"):
        cache[2]


# --- sets ---------------------------------------------------------------------------------------------------------
EVENTS = ["birthday", "wedding", "parade", "protest"]


def _pool(pool: str, videos_per_event: int, frames: int = 6, split_of=lambda v: "train") -> pl.DataFrame:
    rows = []
    for event in EVENTS:
        for v in range(videos_per_event):
            for f in range(frames):
                rows.append(
                    {
                        "image_id": f"{event}{v}_{f}",
                        "pool": pool,
                        "event": event,
                        "split": split_of(v),
                        "video_id": f"{event}{v}",
                        "source_path": "x",
                        "frame_index": f,
                    }
                )
    return pl.DataFrame(rows).with_row_index("row").with_columns(pl.col("row").cast(pl.Int64))


def _scores(se: pl.DataFrame, prompt: str = "birthday party") -> pl.DataFrame:
    judged = se.filter(pl.col("event").is_in(["birthday", "wedding"]))
    return judged.select(
        "video_id",
        "frame_index",
        pl.lit(prompt).alias("event_prompt"),
        pl.lit("B").alias("variant"),
        pl.when(pl.col("event") == "birthday").then(80.0).otherwise(20.0).alias("people_mean"),
    )


def test_clean_calibration_sets_are_video_disjoint_and_balanced_with_a_note():
    se = _pool("SE", 10, split_of=lambda v: "test" if v < 5 else "train")  # 60 frames per event
    sd = _pool("SD", 10, split_of=lambda v: "val" if v < 2 else "train")
    notes = []
    sets = calibration_sets(
        sd,
        se,
        _scores(se),
        events=EVENTS,
        target="birthday",
        similar="wedding",
        train_target=48,
        train_other=48,
        val_target=12,
        val_similar=12,
        notes=notes,
    )
    train = sets.filter((pl.col("use") == "train") & (pl.col("dataset") == "SE")).join(
        se.select("image_id", "video_id"), on="image_id"
    )
    val = sets.filter((pl.col("use") == "eval") & (pl.col("dataset") == "SE")).join(
        se.select("image_id", "video_id"), on="image_id"
    )
    assert not set(train["video_id"]) & set(val["video_id"])  # no evaluation video gives a training image
    assert (
        val.group_by("label").len().sort("label")["len"].to_list() == [12, 12] and val["human_mean"].null_count() == 0
    )
    assert len(set(val["video_id"])) == 4  # chosen video by video: 2 videos of 6 frames per class
    # 60 birthday frames - 12 used for evaluation = 48: enough, no note for SE
    assert train.group_by("label").len().sort("label")["len"].to_list() == [48, 48] and not any(
        "SE train" in n for n in notes
    )
    # ask for more than the data holds: both classes shrink to the same size and a note says so
    notes = []
    sets = calibration_sets(
        sd,
        se,
        _scores(se),
        events=EVENTS,
        target="birthday",
        similar="wedding",
        train_target=480,
        train_other=480,
        val_target=12,
        val_similar=12,
        notes=notes,
    )
    counts = sets.filter((pl.col("use") == "train") & (pl.col("dataset") == "SE")).group_by("label").len().sort("label")
    assert counts["len"].to_list() == [48, 48]
    assert any("SE train" in n and "balanced to 48 + 48" in n for n in notes)


def _authors_rows(**kw) -> dict:
    return {
        "experiment": "table3",
        "target": "birthday",
        "split": "train",
        "image": "x.png",
        "event": "birthday",
        "data_type": "train",
        "video_id": "birthday0",
        "frame_index": None,
        "match": "video",
        **kw,
    }


def test_authors_images_map_frames_and_give_video_only_images_distinct_frames():
    se = _pool("SE", 2)
    listed = pl.DataFrame(
        [
            _authors_rows(image="a.png", data_type="eval", frame_index=2, match="ratings"),
            *[_authors_rows(image=f"t{i}.png") for i in range(3)],  # three images known only by video birthday0
            _authors_rows(image="gone.png", video_id="missing"),
        ],
        schema=schemas.AUTHORS_SETS.columns,
    )
    notes = []
    rows = authors_images(listed, se, 0, "SE train (authors)", notes)
    ids = rows["image_id"].to_list()
    assert "birthday0_2" in ids and len(ids) == 4 and len(set(ids)) == 4
    assert all(i.startswith("birthday0_") for i in ids)
    assert notes and "1 video-only image(s)" in notes[0]


def test_authors_calibration_sets_use_the_listed_images_and_summary_counts_the_leak():
    se = _pool("SE", 4)
    sd = _pool("SD", 4, split_of=lambda v: "val" if v == 0 else "train")
    scores = _scores(se)
    authors = pl.DataFrame(
        [
            _authors_rows(image="r1.png", data_type="eval", video_id="birthday1", frame_index=0, match="ratings"),
            _authors_rows(image="t1.png", video_id="birthday0"),
            _authors_rows(image="w1.png", event="wedding", video_id="wedding0"),
            _authors_rows(
                image="v1.png", split="val", data_type="eval", video_id="birthday1", frame_index=3, match="ratings"
            ),
            _authors_rows(
                image="v2.png",
                split="val",
                data_type="eval",
                event="wedding",
                video_id="wedding2",
                frame_index=1,
                match="ratings",
            ),
        ],
        schema=schemas.AUTHORS_SETS.columns,
    )
    judgments = _judgments(scores)
    training = {
        "data_seed": 0,
        "sets": "authors",
        "human_means": "all",
        "classification": {"events": EVENTS},
        "calibration": {
            "target_event": "birthday",
            "similar_event": "wedding",
            "train_target": 6,
            "train_other": 6,
            "val_target": 2,
            "val_similar": 2,
        },
    }
    sets, summary = experiment_sets_with_summary(
        "calibration", sd, se, scores, judgments, _report(), training, None, authors=authors
    )
    se_train = sets.filter((pl.col("use") == "train") & (pl.col("dataset") == "SE"))
    se_val = sets.filter((pl.col("use") == "eval") & (pl.col("dataset") == "SE"))
    assert set(se_val["image_id"]) == {"birthday1_3", "wedding2_1"} and se_val["label"].sort().to_list() == [0, 1]
    assert "birthday1_0" in set(se_train["image_id"]) and len(se_train) == 3
    (leak,) = summary["leaks"]
    assert leak["rated_in_train"] == 1 and leak["val_sharing_video"] == 1 and "share a video" in leak["sentence"]
    with pytest.raises(ValueError, match="targets"):
        experiment_sets_with_summary(
            "calibration",
            sd,
            se,
            scores,
            judgments,
            _report(),
            {**training, "calibration": {**training["calibration"], "target_event": "parade"}},
            None,
            authors=authors,
        )


# --- human means as released -------------------------------------------------------------------------------------
def _judgments(scores: pl.DataFrame) -> pl.DataFrame:
    rows = []
    for r in scores.iter_rows(named=True):
        for k, delta in enumerate((-10, 0, 10)):
            rows.append(
                {
                    "video_id": r["video_id"],
                    "frame_index": r["frame_index"],
                    "event_prompt": r["event_prompt"],
                    "variant": r["variant"],
                    "annotator": f"huj_{k}",
                    "position": k,
                    "hit": "h",
                    "rating": int(r["people_mean"]) + delta,
                    "round": 1,
                    "source": "squid-e-release",
                }
            )
    return pl.DataFrame(rows, schema=schemas.JUDGMENTS.columns)


def _report(excluded: tuple[str, ...] = ()) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "annotator": ["huj_0", "huj_1", "huj_2"],
            "n_judgments": [1, 1, 1],
            "flags": [["control: rated x"] if a in excluded else [] for a in ("huj_0", "huj_1", "huj_2")],
            "excluded": [a in excluded for a in ("huj_0", "huj_1", "huj_2")],
        },
        schema=schemas.ANNOTATOR_REPORT.columns,
    )


def test_human_means_all_are_the_release_means_and_screening_is_reported():
    se = _pool("SE", 10, split_of=lambda v: "test" if v < 5 else "train")
    sd = _pool("SD", 10, split_of=lambda v: "val" if v < 2 else "train")
    release = _judgments(_scores(se))
    screened = release.filter(pl.col("annotator") != "huj_0")  # what image_scores holds after excluding huj_0
    scores = judgment_means(screened)
    notes = screening_notes(release, _report(("huj_0",)), scores)
    assert len(notes) == 1 and "huj_0" in notes[0] and f"removes {len(release) // 3}" in notes[0]
    training = {
        "data_seed": 0,
        "sets": "clean",
        "classification": {"events": EVENTS},
        "calibration": {
            "target_event": "birthday",
            "similar_event": "wedding",
            "train_target": 12,
            "train_other": 12,
            "val_target": 6,
            "val_similar": 6,
        },
    }
    for choice, want in (("all", {80.0, 20.0}), ("screened", {85.0, 25.0})):
        sets, summary = experiment_sets_with_summary(
            "calibration", sd, se, scores, release, _report(("huj_0",)), {**training, "human_means": choice}, None
        )
        se_eval = sets.filter((pl.col("use") == "eval") & (pl.col("dataset") == "SE"))
        assert set(se_eval["human_mean"]) == want and summary["human_means"] == choice
        assert any("huj_0" in n for n in summary["notes"])


# --- captions -----------------------------------------------------------------------------------------------------
def test_captions_name_every_choice_and_the_leak():
    runs = pl.DataFrame(
        {
            "train_set": ["SD", "SD"],
            "method": ["MC", "RS"],
            "seed": [0, 0],
            "metric": ["ece_authors"] * 2,
            "value": [0.5, 0.4],
        }
    )
    spec = TABLES["table3_calibration"]
    table = aggregate_runs(runs, spec)
    choices = {
        "sets": "authors",
        "target_event": "birthday",
        "trainable": {"MC": "head", "RS": "layer4"},
        "rs_scale": "raw",
        "rs_label_smoothing": 0.2,
        "mc_average": "logits",
        "mc_samples": 50,
        "authors_ece_bins": 5,
        "authors_ece_batch": 16,
        "judgments_source": "release",
    }
    sets = {
        "counts": [{"use": "train", "dataset": "SE", "label": 1, "n": 480}],
        "notes": ["SD train: balanced"],
        "human_means": "all",
        "leaks": [{"rated_in_train": 180, "val_sharing_video": 95, "n_val": 200}],
    }
    md = to_markdown(table, spec, ["MC", "RS"], 10, choices, sets)
    for text in (
        "training.sets: authors",
        "indices_uq.json, target birthday",
        "LEAK",
        "180 training images",
        "95 of 200",
        "training.sets: clean avoids",
        "the head only for MC",
        "training.mc_average: logits",
        "training.rs_scale: raw",
        "ECE (authors' code)",
        "10 equal-width bins",
        "5 bins",
        "training.human_means: all",
        "SD train: balanced",
    ):
        assert text in md, text
    header = md.splitlines()[2]
    assert "| ECE (Trained on SD) | ECE (authors' code) (Trained on SD) |" in header


def test_figures_are_written(tmp_path):
    from squidflow.training.figures import reliability_diagram, table1_plot

    runs = pl.DataFrame(
        {
            "train_set": ["SD"] * 10,
            "method": ["SD"] * 5 + ["GA"] * 5,
            "seed": [0, 1, 0, 1, 0] * 2,
            "metric": ["acc_0-20", "acc_0-20", "acc_80-100", "acc_80-100", "avg_acc"] * 2,
            "value": [0.2, 0.4, 0.8, 0.9, 0.6] * 2,
        }
    )
    series = table1_plot(runs, ["SD", "GA"], tmp_path / "t1.png", "Table 1")
    row = series.filter((pl.col("method") == "SD") & (pl.col("bin") == "0-20")).row(0, named=True)
    assert row["mean"] == pytest.approx(0.3) and row["std"] == pytest.approx(np.std([0.2, 0.4], ddof=1))
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 1, 40)
    predictions = pl.DataFrame(
        {
            "image_id": [str(i) for i in range(40)],
            "eval_set": ["SE"] * 40,
            "label": (p > 0.5).astype(int),
            "probs": [[1 - x, x] for x in p],
            "human_mean": 100 * p,
            "train_set": ["SD"] * 20 + ["SE"] * 20,
        }
    )
    points = reliability_diagram(predictions, tmp_path / "rel.png", "RS")
    assert (
        points.filter(pl.col("n_human") > 0).select((pl.col("confidence") - pl.col("human")).abs().max()).item() < 1e-9
    )
    from helpers.png_facts import figure_facts

    assert figure_facts(tmp_path / "t1.png")["panels"] == 1 and figure_facts(tmp_path / "rel.png")["panels"] == 2
    for name in ("t1.png", "rel.png"):
        with Image.open(tmp_path / name) as im:
            assert im.size[0] > 500


def test_figure_legends_name_the_models_and_training_sets(tmp_path, monkeypatch):
    """Legends read RN+SD and "trained on SD", not a tuple of group keys."""
    import matplotlib.axes

    from squidflow.training.figures import reliability_diagram, table1_plot

    labels = []
    original = matplotlib.axes.Axes.plot

    def plot(self, *args, **kwargs):
        labels.append(kwargs.get("label"))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "plot", plot)
    runs = pl.DataFrame({"train_set": ["SD"], "method": ["GA"], "seed": [0], "metric": ["acc_0-20"], "value": [0.5]})
    table1_plot(runs, ["GA"], tmp_path / "t1.png", "Table 1")
    predictions = pl.DataFrame(
        {
            "image_id": ["a"],
            "eval_set": ["SE"],
            "label": [1],
            "probs": [[0.2, 0.8]],
            "human_mean": [70.0],
            "train_set": ["SE"],
        }
    )
    reliability_diagram(predictions, tmp_path / "rel.png", "BL")
    assert "RN+GA (1 seeds)" in labels and "trained on SQUID-E (n=1)" in labels
