"""The evaluation stage on the real SQUID-E release judgments: Tables 2 and 8 against a hand computation, the
predictions format and its errors, labels against the imSitu vocabulary, and the training runs scored the same way."""

from __future__ import annotations

import csv
import json
import math
import zlib
from collections import defaultdict
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from squidflow.contracts import io, schemas
from squidflow.evaluation.judged import judged_images
from squidflow.evaluation.labels import VocabularyError, read_vocabulary
from squidflow.evaluation.models import evaluate_model, model_id
from squidflow.evaluation.predictions import PredictionsError, read_predictions
from squidflow.evaluation.tables import ModelInfo, build_table
from squidflow.evaluation.training_runs import evaluate_runs, run_predictions
from squidflow.judgments.ingest import read_release
from squidflow.judgments.scores import image_scores
from squidflow.statistics import certainty as binning
from squidflow.training.calibration import run_metrics

LABEL_MAP = {"parade": ["parading"], "protest": ["protesting"]}
BIN_NAMES = ["0-20", "20-40", "40-60", "60-80", "80-100"]


@pytest.fixture(scope="module")
def release_csv(shared_data: Path) -> Path:
    return shared_data / "squid-e" / "huj_annotations.csv"


@pytest.fixture(scope="module")
def scores(release_csv: Path) -> pl.DataFrame:
    judgments, _ = read_release(release_csv)
    return image_scores(judgments)


@pytest.fixture(scope="module")
def verbs(shared_data: Path) -> list[str]:
    return read_vocabulary(shared_data / "imsitu" / "verb_id.tab")


def hand_bin(x: float) -> str:
    """Written out again, independently of squidflow: 20-point bins, 100 in the last."""
    for i, upper in enumerate((20, 40, 60, 80)):
        if x < upper:
            return BIN_NAMES[i]
    return BIN_NAMES[4]


def release_images(release_csv: Path) -> dict[tuple[str, int], dict]:
    """Variant-A parade/protest images of huj_annotations.csv with their ratings, read with the csv module."""
    images: dict[tuple[str, int], dict] = {}
    with open(release_csv, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["task_var"] != "a" or row["event"] not in LABEL_MAP:
                continue
            key = (row["vid_ID"].strip('"'), int(row["frame_num"]))
            entry = images.setdefault(key, {"event": row["event"], "ratings": []})
            entry["ratings"] += [int(row[f"huj_{k}"]) for k in range(3)]
    return images


def case_of(key: tuple[str, int]) -> int:
    """0: correct at rank 1; 1: correct at rank 6; 2: correct at rank 11 (outside the top 10); 3: never correct."""
    return zlib.crc32(f"{key[0]}/{key[1]}".encode()) % 4


def known_predictions(images: dict, verbs: list[str]) -> list[dict]:
    """12 ranked verbs per image, the correct verb placed by case_of; protest images that are never right get
    `parading` (the other event's verb) at rank 1, which must not count."""
    fillers = [v for v in verbs if v not in ("parading", "protesting")]
    rows = []
    for i, (key, info) in enumerate(sorted(images.items())):
        right = LABEL_MAP[info["event"]][0]
        labels = [fillers[(i * 7 + j) % len(fillers)] for j in range(12)]
        case = case_of(key)
        if case < 3:
            labels[{0: 0, 1: 5, 2: 10}[case]] = right
        elif info["event"] == "protest":
            labels[0] = "parading"
        for rank, label in enumerate(labels, start=1):
            rows.append({"video_id": key[0], "frame_index": key[1], "rank": rank, "label": label, "score": 1.0 / rank})
    return rows


def hand_tables(images: dict) -> dict[tuple[int, str, str], tuple[float | None, int]]:
    """(top, binning, bin) -> (accuracy, n), computed from the raw ratings with plain Python."""
    right = defaultdict(int)
    count = defaultdict(int)
    for key, info in images.items():
        ratings = info["ratings"]
        mean = sum(ratings) / len(ratings)
        case = case_of(key)
        for top, ok in ((1, case == 0), (10, case in (0, 1))):
            for how, bins in (("mean", [hand_bin(mean)]), ("alt", [hand_bin(r) for r in ratings])):
                for b in bins:
                    for cell in (b, "avg"):
                        count[(top, how, cell)] += 1
                        right[(top, how, cell)] += int(ok)
    return {k: (right[k] / count[k], count[k]) for k in count}


def write_rows(rows: list[dict], path: Path) -> Path:
    frame = pl.DataFrame(rows)
    if path.suffix == ".parquet":
        frame.write_parquet(path)
    elif path.suffix == ".csv":
        frame.write_csv(path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# --- binning -------------------------------------------------------------------------------------------------------
def test_one_binning_everywhere() -> None:
    from squidflow.judgments import scores as judgment_scores
    from squidflow.training import calibration

    assert judgment_scores.certainty_bin is binning.certainty_bin
    assert calibration.certainty_bins is binning.certainty_bins and calibration.CERTAINTY_BINS is binning.CERTAINTY_BINS
    values = [0.0, 19.99, 20.0, 39.999, 40.0, 59.9, 60.0, 79.5, 80.0, 99.9, 100.0]
    expected = [hand_bin(v) for v in values]
    as_expr = pl.DataFrame({"v": values}).select(binning.certainty_bin(pl.col("v")))["v"].to_list()
    assert as_expr == expected
    assert [binning.certainty_bin_of(v) for v in values] == expected
    assert list(binning.certainty_bins(np.array(values))) == expected
    with pytest.raises(ValueError, match="outside 0..100"):
        binning.certainty_bins(np.array([50, 100.5]))


# --- Tables 2 and 8 against a hand computation on the real release ---------------------------------------------------
@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl"])
def test_tables_2_and_8_equal_a_hand_computation_on_the_release(tmp_path, release_csv, scores, verbs, suffix):
    images = release_images(release_csv)
    assert len(images) == 600  # 300 parade + 300 protest images, variant A
    rows = known_predictions(images, verbs)
    # predictions for judged images of other events are allowed and not scored
    other = scores.filter((pl.col("variant") == "A") & (pl.col("event_prompt") == "birthday party")).head(3)
    rows += [
        {"video_id": r["video_id"], "frame_index": r["frame_index"], "rank": 1, "label": "parading", "score": 1.0}
        for r in other.iter_rows(named=True)
    ]
    path = write_rows(rows, tmp_path / f"known{suffix}")
    accuracy, summary = evaluate_model(
        path,
        scores,
        name="known",
        variant="A",
        top_k=10,
        label_map=LABEL_MAP,
        vocabulary=None,
        cache_dir=tmp_path / "cache",
    )
    io.conform(accuracy, schemas.MODEL_ACCURACY)
    expected = hand_tables(images)
    got = {(r["top"], r["binning"], r["bin"]): (r["accuracy"], r["n"]) for r in accuracy.iter_rows(named=True)}
    assert set(got) == {(t, b, c) for t in (1, 10) for b in ("mean", "alt") for c in [*BIN_NAMES, "avg"]}
    for cell, (acc, n) in got.items():
        want_acc, want_n = expected.get(cell, (None, 0))
        assert n == want_n, cell
        assert acc == pytest.approx(want_acc, abs=1e-12), cell
    assert summary["judged_images"] == 600 and summary["judged_images_scored"] == 600
    # the alt rows count every one of the 1,800 judgments
    assert got[(1, "alt", "avg")][1] == 1800 and got[(1, "mean", "avg")][1] == 600


def test_table_files_are_long_csv_and_table2_has_only_mean_rows(tmp_path, release_csv, scores, verbs):
    images = release_images(release_csv)
    path = write_rows(known_predictions(images, verbs), tmp_path / "m.parquet")
    acc, summary = evaluate_model(
        path, scores, name="JSL", variant="A", top_k=10, label_map=LABEL_MAP, vocabulary=None, cache_dir=tmp_path
    )
    models = [ModelInfo("JSL", 0.40)]
    t2, md2, tex2 = build_table(
        [acc], [summary], models, "table2_verbs", variant="A", top_k=10, label_map=LABEL_MAP, source="release"
    )
    t8, md8, tex8 = build_table(
        [acc], [summary], models, "table8_alt_bins", variant="A", top_k=10, label_map=LABEL_MAP, source="release"
    )
    assert t2.columns == ["model", "top", "binning", "bin", "accuracy", "n", "lo", "hi"] == t8.columns
    assert t2["lo"].is_null().all()  # no intervals given: no interval, cells as before
    assert set(t2["binning"]) == {"mean"} and set(t8["binning"]) == {"mean", "alt"}
    assert len(t2) == 2 * 6 and len(t8) == 2 * 2 * 6
    assert set(t2["top"]) == {1, 10}
    assert "SD Acc." in md2 and "0.40" in md2 and "SD Acc." not in md8
    assert "Table 2" in md2 and "Table 8" in md8 and "release" in md2
    avg1 = t2.filter((pl.col("top") == 1) & (pl.col("bin") == "avg"))["accuracy"][0]
    assert f"{avg1:.2f} (600)" in md2
    assert r"\begin{tabular}" in tex8 and r"\toprule" in tex8


# --- the predictions format and its errors -------------------------------------------------------------------------
def _one_image(scores: pl.DataFrame) -> tuple[str, int]:
    r = scores.filter(pl.col("event_prompt") == "parade").row(0, named=True)
    return r["video_id"], r["frame_index"]


def _csv(path: Path, lines: list[str]) -> Path:
    path.write_text("video_id,frame_index,rank,label,score\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "lines, needle",
    [
        (
            ["{v},{f},1,parading,0.9", "nosuchvideo,7,1,parading,0.5"],
            "line 3: unknown image: video_id 'nosuchvideo', frame_index 7",
        ),
        (["{v},{f},2,parading,0.9", "{v},{f},3,marching,0.5"], "line 2: image ({v}, {f}) has no rank 1"),
        (
            ["{v},{f},1,parading,0.9", "{v},{f},2,marching,0.5", "{v},{f},2,walking,0.4"],
            "line 4: duplicate rank 2 for image ({v}, {f}) (first given at 3)",
        ),
        (["{v},{f},1,parading,high"], "line 2: score 'high' is not a number"),
        (["{v},{f},1,parading,"], "line 2: score is empty"),
        (["{v},{f},one,parading,0.9"], "line 2: rank 'one' is not a positive integer"),
        (["{v},{f},0,parading,0.9"], "line 2: rank '0' is not a positive integer"),
        (["{v},{f},1,,0.9"], "line 2: label is empty"),
        (["{v},x,1,parading,0.9"], "line 2: frame_index 'x' is not a non-negative integer"),
    ],
    ids=[
        "unknown-image",
        "missing-rank-1",
        "duplicate-rank",
        "non-numeric-score",
        "empty-score",
        "rank-text",
        "rank-zero",
        "empty-label",
        "bad-frame",
    ],
)
def test_broken_prediction_files_stop_with_file_row_and_problem(tmp_path, scores, lines, needle):
    v, f = _one_image(scores)
    path = _csv(tmp_path / "bad.csv", [line.format(v=v, f=f) for line in lines])
    known = scores.select("video_id", "frame_index")
    with pytest.raises(PredictionsError) as err:
        read_predictions(path, cache_dir=tmp_path, known_images=known)
    msg = str(err.value)
    assert str(path) in msg and needle.format(v=v, f=f) in msg, msg


def test_parquet_errors_name_the_row_and_missing_columns_are_named(tmp_path, scores):
    v, f = _one_image(scores)
    path = tmp_path / "bad.parquet"
    pl.DataFrame(
        {"video_id": [v, v], "frame_index": [f, f], "rank": [1, 1], "label": ["a", "b"], "score": [0.5, 0.4]}
    ).write_parquet(path)
    with pytest.raises(PredictionsError, match=r"bad.parquet: row 2: duplicate rank 1"):
        read_predictions(path, cache_dir=tmp_path, known_images=scores.select("video_id", "frame_index"))
    nolabel = tmp_path / "nolabel.jsonl"
    nolabel.write_text(json.dumps({"video_id": v, "frame_index": f, "rank": 1, "score": 1}) + "\n")
    with pytest.raises(PredictionsError, match=r"nolabel.jsonl: missing column\(s\) \['label'\]"):
        read_predictions(nolabel, cache_dir=tmp_path)
    with pytest.raises(PredictionsError, match="unknown predictions file type"):
        read_predictions(tmp_path / "x.xlsx", cache_dir=tmp_path)
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps({"video_id": v, "frame_index": f, "rank": 1, "label": "a", "score": 1}) + "\n{oops\n")
    with pytest.raises(PredictionsError, match=r"broken.jsonl, line 2: not valid JSON"):
        read_predictions(broken, cache_dir=tmp_path)


def test_images_by_file_name_through_a_mapping_table_and_from_a_url(tmp_path, release_csv, scores, verbs):
    images = release_images(release_csv)
    rows = known_predictions(images, verbs)
    direct = write_rows(rows, tmp_path / "direct.parquet")
    names = {key: f"img{i:04d}.png" for i, key in enumerate(sorted(images))}
    by_name = [
        {"image": names[(r["video_id"], r["frame_index"])], **{k: r[k] for k in ("rank", "label", "score")}}
        for r in rows
    ]
    named = write_rows(by_name, tmp_path / "named.csv")
    table = tmp_path / "images.csv"
    pl.DataFrame(
        {"image": list(names.values()), "video_id": [k[0] for k in names], "frame_index": [k[1] for k in names]}
    ).write_csv(table)
    kw = {"variant": "A", "top_k": 10, "label_map": LABEL_MAP, "cache_dir": tmp_path / "cache"}
    a, _ = evaluate_model(direct, scores, name="m", **kw)
    b, _ = evaluate_model(named.as_uri(), scores, name="m", image_table=table, **kw)  # file:// URL, fetched
    assert a.equals(b)
    with pytest.raises(PredictionsError, match=r"line 2: unknown image 'img0000.png': not a squidflow image name"):
        evaluate_model(named, scores, name="m", **kw)


def test_labels_outside_the_imsitu_vocabulary_are_counted(tmp_path, release_csv, scores, verbs, shared_data, caplog):
    assert len(verbs) == 504 and {"parading", "protesting", "marching"} <= set(verbs)
    images = release_images(release_csv)
    rows = known_predictions(images, verbs)
    rows[1]["label"] = "moonwalking"  # not an imSitu verb
    rows[2]["label"] = "moonwalking"
    path = write_rows(rows, tmp_path / "p.parquet")
    label_map = {**LABEL_MAP, "protest": ["protesting", "rioting_loudly"]}
    acc, summary = evaluate_model(
        path,
        scores,
        name="m",
        variant="A",
        top_k=10,
        label_map=label_map,
        vocabulary=shared_data / "imsitu" / "verb_id.tab",
        cache_dir=tmp_path,
    )
    assert summary["vocabulary_size"] == 504
    assert summary["predicted_labels_outside_vocabulary"] == ["moonwalking"]
    assert summary["prediction_rows_outside_vocabulary"] == 2
    assert summary["map_labels_outside_vocabulary"] == ["rioting_loudly"]
    assert "moonwalking" in caplog.text and "rioting_loudly" in caplog.text
    _, md, _ = build_table(
        [acc], [summary], [ModelInfo("m")], "table2_verbs", variant="A", top_k=10, label_map=label_map, source="release"
    )
    assert "1 predicted label(s) in 2 rows outside the 504-label vocabulary (moonwalking)" in md
    assert "Label-map labels outside the vocabulary (never predictable): rioting_loudly" in md


def test_imsitu_space_json_and_model_ids(tmp_path):
    space = tmp_path / "imsitu_space.json"
    space.write_text(json.dumps({"verbs": {"parading": {}, "protesting": {}}, "nouns": {}}))
    assert read_vocabulary(space) == ["parading", "protesting"]
    assert model_id("demo RN+SD (seed 0)") == "demo_RN_SD_seed_0" and model_id("JSL") == "JSL"
    with pytest.raises(ValueError, match="no letter or digit"):
        model_id("+++")


def test_vocabulary_nested_too_deeply_is_a_user_error(tmp_path):
    """A JSON label list nested past Python's recursion limit is a VocabularyError saying so (it was a TypeError:
    the handler chained the error to the message string instead of the exception)."""
    deep = tmp_path / "labels.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(VocabularyError, match=r"labels\.json: not valid JSON \(nested too deeply\)"):
        read_vocabulary(deep)


def test_judged_images_follow_the_variant_and_the_map(scores):
    a = judged_images(scores, variant="A", label_map=LABEL_MAP)
    assert len(a) == 600 and set(a["event"]) == {"parade", "protest"}
    birthday = judged_images(scores, variant="A", label_map={"birthday_party": ["celebrating"]})
    assert len(birthday) == 300  # prompt "birthday party" matches the id birthday_party
    with pytest.raises(ValueError, match="none of its events"):
        judged_images(scores, variant="A", label_map={"baseball": ["pitching"]})


# --- the training runs, scored the same way ---------------------------------------------------------------------------
def _run(scores: pl.DataFrame, events: list[str], rng: np.random.Generator, experiment: str) -> pl.DataFrame:
    """A RUN_PREDICTIONS frame over real judged images: SE images (judged) and SD images (no judgment)."""
    variant, rows = ("A", []) if experiment == "classification" else ("B", [])
    prompts = {"birthday party": "birthday", "wedding": "wedding", "parade": "parade", "protest": "protest"}
    sel = scores.filter((pl.col("variant") == variant) & pl.col("event_prompt").is_in(list(prompts))).head(80)
    for r in sel.iter_rows(named=True):
        event = prompts[r["event_prompt"]]
        if experiment == "classification":
            label = events.index(event)
            p = rng.dirichlet(np.ones(len(events)))
        else:
            if event != "birthday":
                continue
            label = int(rng.integers(0, 2))
            p = rng.dirichlet([1, 1])
        rows.append(
            {
                "image_id": f"{r['video_id']}_{r['frame_index']}",
                "eval_set": "SE",
                "label": label,
                "probs": p.tolist(),
                "human_mean": r["people_mean"],
            }
        )
    n = len(events) if experiment == "classification" else 2
    rows += [
        {"image_id": f"sd_{i}", "eval_set": "SD", "label": 0, "probs": [1 / n] * n, "human_mean": None}
        for i in range(3)
    ]
    return io.conform(pl.DataFrame(rows), schemas.RUN_PREDICTIONS)


def test_runs_are_scored_like_table1_and_table3(scores):
    rng = np.random.default_rng(0)
    events = ["birthday", "wedding", "parade", "protest"]
    cls = _run(scores, events, rng, "classification")
    cal = _run(scores, events, rng, "calibration")
    out = evaluate_runs(
        {
            "results/runs/classification/SD/PA/seed3/predictions.parquet": cls,
            "results/runs/calibration/SE/MC/seed0/predictions.parquet": cal,
        },
        scores,
        classification_events=events,
        calibration_target="birthday",
    )
    io.conform(out, schemas.RUN_EVALUATION)
    c = out.filter((pl.col("experiment") == "classification") & (pl.col("binning") == "mean"))
    assert set(c["method"]) == {"PA"} and set(c["seed"]) == {3}
    se = cls.filter(pl.col("eval_set") == "SE")
    probs, labels, human = np.array(se["probs"].to_list()), se["label"].to_numpy(), se["human_mean"].to_numpy()
    table1 = run_metrics("classification", np.array(["SE"] * len(se)), labels, probs, human)
    for b in BIN_NAMES:
        row = c.filter(pl.col("bin") == b).row(0, named=True)
        if row["n"] == 0:
            assert math.isnan(table1[f"acc_{b}"]) and row["accuracy"] is None
        else:
            assert row["accuracy"] == pytest.approx(table1[f"acc_{b}"])
    avg = c.filter(pl.col("bin") == "avg").row(0, named=True)
    assert avg["accuracy"] == pytest.approx(table1["avg_acc"]) and avg["n"] == len(se)
    own = probs[np.arange(len(se)), labels]  # probability of the judged (own) event
    assert avg["mse"] == pytest.approx(np.mean((own - human / 100) ** 2))
    # calibration: probability of the target event against the target prompt's judgment (Tables 3 and 9)
    k = out.filter((pl.col("experiment") == "calibration") & (pl.col("binning") == "mean") & (pl.col("bin") == "avg"))
    se_cal = cal.filter(pl.col("eval_set") == "SE")
    table3 = run_metrics(
        "calibration",
        np.array(["SE"] * len(se_cal)),
        se_cal["label"].to_numpy(),
        np.array(se_cal["probs"].to_list()),
        se_cal["human_mean"].to_numpy(),
    )
    assert k["mse"][0] == pytest.approx(table3["huj_mse"]) and k["kl"][0] == pytest.approx(table3["kl"])
    assert k["accuracy"][0] == pytest.approx(table3["se_acc"])
    # alt rows: three judgments per image
    alt = out.filter(
        (pl.col("experiment") == "classification") & (pl.col("binning") == "alt") & (pl.col("bin") == "avg")
    )
    assert alt["n"][0] == 3 * len(se)


def test_a_run_becomes_a_predictions_file_with_every_class_ranked(scores, tmp_path):
    events = ["birthday", "wedding", "parade", "protest"]
    run = _run(scores, events, np.random.default_rng(1), "classification")
    preds = io.conform(run_predictions(run, events), schemas.PREDICTIONS)
    se = run.filter(pl.col("eval_set") == "SE")
    assert len(preds) == 4 * len(se) and preds["rank"].max() == 4
    first = se.row(0, named=True)
    vid, frame = first["image_id"].rsplit("_", 1)
    mine = preds.filter((pl.col("video_id") == vid) & (pl.col("frame_index") == int(frame))).sort("rank")
    assert mine["label"][0] == events[int(np.argmax(first["probs"]))]
    assert mine["score"].to_list() == sorted(first["probs"], reverse=True)
    path = tmp_path / "run.parquet"
    io.write_parquet(preds, path, schemas.PREDICTIONS)
    again = read_predictions(path, cache_dir=tmp_path, known_images=scores.select("video_id", "frame_index"))
    assert len(again) == len(preds)
    with pytest.raises(ValueError, match="class names"):
        run_predictions(run, events[:3])


def test_ids_as_the_release_writes_them_are_read_and_unknown_ones_get_the_closest(tmp_path):
    """Issue 32: the release writes `\"\"\"-jmFL0i8_ZU\"\"\"`; predictions built from it with pandas carry
    `"-jmFL0i8_ZU"`, and used to fail with `unknown image` and no hint."""
    known = pl.DataFrame({"video_id": ["-jmFL0i8_ZU", "abcdefghijk"], "frame_index": [12, 3]})
    path = tmp_path / "quoted.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["video_id", "frame_index", "rank", "label", "score"])
        w.writerow(['"-jmFL0i8_ZU"', 12, 1, "parading", 0.9])  # csv quotes it again: `"""-jmFL0i8_ZU"""`
        w.writerow(['  "abcdefghijk" ', 3, 1, "parading", 0.8])
    got = read_predictions(path, cache_dir=tmp_path, known_images=known)
    assert sorted(got["video_id"].to_list()) == ["-jmFL0i8_ZU", "abcdefghijk"]
    images = tmp_path / "images.csv"
    images.write_text('image,rank,label,score\n"""-jmFL0i8_ZU_12""",1,parading,0.9\n')
    assert read_predictions(images, cache_dir=tmp_path, known_images=known)["frame_index"].to_list() == [12]
    typo = tmp_path / "typo.csv"
    typo.write_text('video_id,frame_index,rank,label,score\n"""-jmFL0i8_Zu""",12,1,parading,0.9\n')
    with pytest.raises(PredictionsError) as err:
        read_predictions(typo, cache_dir=tmp_path, known_images=known)
    msg = str(err.value)
    assert "unknown image: video_id '-jmFL0i8_Zu'" in msg
    assert "quotes stripped from '\"-jmFL0i8_Zu\"'" in msg and "closest known id: '-jmFL0i8_ZU'" in msg
    frame = tmp_path / "frame.csv"
    frame.write_text("video_id,frame_index,rank,label,score\n-jmFL0i8_ZU,13,1,parading,0.9\n")
    with pytest.raises(PredictionsError, match=r"that video's judged frames: \[12\]"):
        read_predictions(frame, cache_dir=tmp_path, known_images=known)
    nolabel = tmp_path / "nolabel.csv"
    nolabel.write_text("video_id,frame_index,rank,score\nv,1,1,0.5\n")
    with pytest.raises(PredictionsError) as err:
        read_predictions(nolabel, cache_dir=tmp_path)
    assert "_line" not in str(err.value) and "_row" not in str(err.value), str(err.value)


def test_clean_id_says_what_it_stripped():
    from squidflow.contracts.image_ids import clean_id, closest_id

    assert clean_id('"""-jmFL0i8_ZU"""') == ("-jmFL0i8_ZU", "quotes")
    assert clean_id(" abc ") == ("abc", "whitespace")
    assert clean_id(' "abc" ') == ("abc", "quotes and whitespace")
    assert clean_id("abc") == ("abc", "")
    assert closest_id("abd", ["abc", "xyz"]) == "abc" and closest_id("qqqq", ["abc"]) is None


def _accuracy_rows(model: str, n: int) -> pl.DataFrame:
    rows = [
        {
            "model": model,
            "top": top,
            "binning": "mean",
            "bin": b,
            "accuracy": 0.5,
            "n": n // 5 if b != binning.AVERAGE else n,
            "lo": None,
            "hi": None,
        }
        for top in (1, 10)
        for b in (*binning.CERTAINTY_BINS, binning.AVERAGE)
    ]
    return pl.DataFrame(
        rows,
        schema={
            "model": pl.Utf8,
            "top": pl.Int64,
            "binning": pl.Utf8,
            "bin": pl.Utf8,
            "accuracy": pl.Float64,
            "n": pl.Int64,
            "lo": pl.Float64,
            "hi": pl.Float64,
        },
    )


def test_table2_never_averages_models_scored_on_different_images_in_one_column():
    """Issue 32: classifiers scored on 24 images and text baselines on 72 shared one "Avg." column."""
    models = [ModelInfo("SD classifier"), ModelInfo("ES classifier"), ModelInfo("text-tfidf")]
    accs = [_accuracy_rows("SD classifier", 24), _accuracy_rows("ES classifier", 24), _accuracy_rows("text-tfidf", 72)]
    _, md, _ = build_table(
        accs, [], models, "table2_verbs", variant="A", top_k=10, label_map=LABEL_MAP, source="release"
    )
    assert "Avg. (own images)" in md and "| Avg. |" not in md
    lines = md.splitlines()
    block = [i for i, line in enumerate(lines) if line.startswith("| scored on ")]
    assert [lines[i].split("|")[1].strip() for i in block[:2]] == ["scored on 24 images", "scored on 72 images"]
    assert lines[block[0] + 1].startswith("| SD classifier") and lines[block[1] + 1].startswith("| text-tfidf")
    assert "compare averages only within a block" in md
    _, same, _ = build_table(
        accs[:2], [], models[:2], "table2_verbs", variant="A", top_k=10, label_map=LABEL_MAP, source="release"
    )
    assert "| Avg. |" in same and "scored on" not in same
