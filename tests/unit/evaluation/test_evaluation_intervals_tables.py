"""Intervals in the tables that compare models with people (issue 24): Tables 1/3/9 from the runs' predictions
(each resampled measure equals metrics.json at the identity; paired comparisons find a planted difference and not a
non-existent one), Tables 2/8 accuracies with intervals, the soft-label measures table with its people row, its two
figures, and `squidflow evaluate` giving the workflow's numbers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from helpers.floats import assert_floats_close, assert_frames_close
from threadpoolctl import threadpool_limits

from squidflow.contracts import io, schemas
from squidflow.evaluation import uncertainty as U
from squidflow.evaluation.soft_labels import PEOPLE, ModelPoints, model_points, ratings_matrix, soft_label_table
from squidflow.statistics.intervals import IntervalConfig
from squidflow.training.calibration import run_metrics
from squidflow.training.table_intervals import image_lists, metric_stat, run_images
from squidflow.training.tables import (
    TABLES,
    outside_rows,
    runs_table,
    table_with_intervals,
    to_latex,
    to_markdown,
)

CFG = {"level": 0.95, "resamples": 400, "seed": 0, "method": "percentile"}


def _runs(
    experiment: str,
    methods: dict[str, float],
    seeds: int = 3,
    n_sd: int = 50,
    n_se: int = 80,
    k: int = 2,
    seed: int = 0,
) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:
    """Synthetic runs: per method a skill (how often the label gets the larger probability); metrics as train.py
    writes them, from the same predictions."""
    rng = np.random.default_rng(seed)
    ids = [f"vid{i}_{i}" for i in range(n_sd + n_se)]
    eval_set = np.array(["SD"] * n_sd + ["SE"] * n_se)
    labels = rng.integers(0, k, n_sd + n_se)
    human = np.where(eval_set == "SE", rng.uniform(0, 100, len(ids)).round(), np.nan)
    human[n_sd : n_sd + 7] = np.nan  # unjudged SE images
    rows, predictions = [], {}
    train_sets = ["SD"] if experiment == "classification" else ["SD", "SE"]
    for train_set in train_sets:
        for method, skill in methods.items():
            for s in range(seeds):
                logits = rng.normal(0, 1, (len(ids), k))
                right = rng.random(len(ids)) < skill
                logits[np.arange(len(ids)), labels] += np.where(right, 3.0, -3.0)
                probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
                path = f"results/runs/{experiment}/{train_set}/{method}/seed{s}/predictions.parquet"
                predictions[path] = pl.DataFrame(
                    {
                        "image_id": ids,
                        "eval_set": eval_set,
                        "label": labels,
                        "probs": [list(p) for p in probs],
                        "human_mean": pl.Series(human).fill_nan(None),
                    }
                )
                metrics = run_metrics(experiment, eval_set, labels, probs, human, seed=s)
                rows += [
                    {"train_set": train_set, "method": method, "seed": s, "metric": m, "value": v}
                    for m, v in metrics.items()
                ]
    runs = pl.DataFrame(rows).with_columns(pl.col("value").fill_nan(None).fill_null(float("nan")))
    return runs, predictions


@pytest.mark.parametrize(
    "experiment, table",
    [("classification", "table1_training"), ("calibration", "table3_calibration"), ("calibration", "table9_kl")],
)
def test_every_resampled_measure_equals_the_runs_metrics_at_the_identity(experiment, table):
    runs, predictions = _runs(experiment, {"AA": 0.8}, seeds=2, k=4 if experiment == "classification" else 2)
    ids = image_lists(predictions)
    metrics = runs.filter(pl.col("method") == "AA")
    for path, run in predictions.items():
        seed = int(Path(path).parent.name[4:])
        train_set = Path(path).parents[2].name
        images = {s: run_images(run, s, ids[s]) for s in ids}
        for metric in TABLES[table].metrics:
            eval_set, stat = metric_stat(
                metric,
                images["SD"],
                images["SE"],
                ece_bins=10,
                kl_eps=1e-6,
                authors_ece_bins=5,
                authors_ece_batch=16,
                seed=seed,
            )
            got = stat(np.arange(len(ids[eval_set]))[None])[0]
            want = metrics.filter(
                (pl.col("seed") == seed) & (pl.col("metric") == metric) & (pl.col("train_set") == train_set)
            )["value"][0]
            assert got == pytest.approx(want, abs=1e-12, nan_ok=True), (metric, seed)


def test_table3_intervals_bracket_the_seed_mean_and_paired_tests_find_the_planted_difference():
    runs, predictions = _runs("calibration", {"BL": 0.75, "SAME": 0.75, "GOOD": 0.97}, seeds=3, n_se=150)
    spec = TABLES["table3_calibration"]
    table = table_with_intervals(runs, predictions, spec, ["BL", "SAME", "GOOD"], CFG)
    table = io.conform(table, schemas.RESULT_TABLE)
    assert table.filter(pl.col("mean").is_not_null())["lo"].null_count() == 0
    # the point is the seed mean of metrics.json, unchanged, and lies inside its interval
    inside = (
        table.filter(pl.col("mean").is_not_null())
        .select(((pl.col("lo") <= pl.col("mean") + 1e-9) & (pl.col("mean") <= pl.col("hi") + 1e-9)).all())
        .item()
    )
    assert inside
    base = table.filter(pl.col("method") == "BL")
    assert base["diff"].null_count() == len(base)  # the baseline is not compared with itself
    good = table.filter((pl.col("method") == "GOOD") & (pl.col("metric") == "se_acc"))
    assert (good["diff_lo"] > 0).all() and (good["p_holm"] < 0.05).all()
    same = table.filter((pl.col("method") == "SAME") & (pl.col("metric") == "se_acc"))
    assert (same["diff_lo"] < 0).all() or (same["diff_hi"] > 0).all()
    md = to_markdown(table, spec, ["BL", "SAME", "GOOD"], intervals=CFG)
    row = next(line for line in md.splitlines() if line.startswith("| GOOD |"))
    assert "*†" in row and " [" in row and "± " in row
    assert "bootstrap interval of the seed mean over the evaluation images" in md and "Holm" in md
    tex = to_latex(table, spec, ["BL", "SAME", "GOOD"], intervals=CFG)
    assert r"$^{*\dagger}$" in tex and r"$\dagger$" in tex


def test_table1_compares_every_method_with_the_first_one(tmp_path):
    runs, predictions = _runs("classification", {"SD": 0.6, "ES": 0.95}, seeds=2, k=4, n_se=120)
    table = table_with_intervals(runs, predictions, TABLES["table1_training"], ["SD", "ES"], CFG)
    es = table.filter((pl.col("method") == "ES") & (pl.col("metric") == "avg_acc")).row(0, named=True)
    assert es["diff"] == pytest.approx(
        es["mean"] - table.filter((pl.col("method") == "SD") & (pl.col("metric") == "avg_acc"))["mean"][0]
    )
    assert es["p_value"] < 0.05 and es["lo"] <= es["mean"] <= es["hi"]
    # the same rows, as the rule reads them from the runs' metrics.json
    metrics = {
        f"results/runs/classification/{train_set}/{method}/seed{seed}/metrics.json": dict(
            zip(rows["metric"], rows["value"], strict=True)
        )
        for (train_set, method, seed), rows in runs.group_by(["train_set", "method", "seed"])
    }
    again = table_with_intervals(runs_table(metrics), predictions, TABLES["table1_training"], ["SD", "ES"], CFG)
    key = ["train_set", "method", "metric"]
    assert again.sort(key).select("lo", "hi").equals(table.sort(key).select("lo", "hi"))


def test_without_predictions_cells_keep_the_old_form():
    runs, _ = _runs("calibration", {"BL": 0.8}, seeds=2)
    table = table_with_intervals(runs, {}, TABLES["table9_kl"], ["BL"], CFG)
    md = to_markdown(table, TABLES["table9_kl"], ["BL"], intervals=CFG)
    assert "[" not in md.split("**")[2] and "bootstrap" not in md


# --- Tables 2 and 8 ------------------------------------------------------------------------------------------------
def _judged(n: int, seed: int = 0) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """judged images (as judged.judged_images), ranked predictions over labels a, b, c (a is right), and the
    images' ratings (as soft_labels.image_ratings)."""
    rng = np.random.default_rng(seed)
    ratings = rng.integers(0, 101, (n, 3))
    images = pl.DataFrame(
        {
            "video_id": [f"v{i}" for i in range(n)],
            "frame_index": list(range(n)),
            "event": ["parade"] * n,
            "targets": [["a"]] * n,
            "people_mean": ratings.mean(axis=1),
        }
    ).with_columns(
        pl.Series(
            "certainty_bin",
            np.asarray(["0-20", "20-40", "40-60", "60-80", "80-100"])[
                np.minimum(ratings.mean(axis=1) // 20, 4).astype(int)
            ],
        ),
        pl.Series(
            "alt_bins",
            [[["0-20", "20-40", "40-60", "60-80", "80-100"][min(int(r // 20), 4)] for r in row] for row in ratings],
        ),
    )
    rows = []
    for i in range(n):
        p = rng.dirichlet([2, 1, 1])
        order = np.argsort(-p)
        rows += [
            {
                "video_id": f"v{i}",
                "frame_index": i,
                "image": None,
                "rank": r + 1,
                "label": "abc"[j],
                "score": float(p[j]),
            }
            for r, j in enumerate(order)
        ]
    preds = pl.DataFrame(rows, schema=schemas.PREDICTIONS.columns)
    ratings_frame = images.select("video_id", "frame_index", "event").with_columns(
        pl.Series("ratings", ratings.astype(float).tolist())
    )
    return images, preds, ratings_frame


def test_table2_and_8_accuracies_get_image_bootstrap_intervals():
    from squidflow.evaluation.metrics import model_accuracy
    from squidflow.evaluation.tables import ModelInfo, build_table

    images, preds, _ = _judged(300)
    cfg = IntervalConfig(**CFG)
    with_ci = model_accuracy(preds, images, model="m", top_k=2, intervals=cfg)
    plain = model_accuracy(preds, images, model="m", top_k=2)
    assert with_ci.select("accuracy", "n").equals(plain.select("accuracy", "n"))  # values unchanged
    full = with_ci.filter(pl.col("n") > 0)
    assert full["lo"].null_count() == 0
    assert ((full["lo"] <= full["accuracy"]) & (full["accuracy"] <= full["hi"])).all()
    avg = full.filter((pl.col("bin") == "avg") & (pl.col("binning") == "mean") & (pl.col("top") == 1)).row(
        0, named=True
    )
    se = np.sqrt(avg["accuracy"] * (1 - avg["accuracy"]) / avg["n"])  # binomial: the interval is about ±1.96 se
    assert avg["hi"] - avg["lo"] == pytest.approx(2 * 1.96 * se, rel=0.25)
    _, md, tex = build_table(
        [with_ci],
        [{"model": "m"}],
        [ModelInfo("m")],
        "table8_alt_bins",
        variant="A",
        top_k=2,
        label_map={"parade": ["a"]},
        source="release",
        intervals=CFG,
    )
    assert f"{avg['accuracy']:.2f} [{avg['lo']:.2f}, {avg['hi']:.2f}] ({avg['n']})" in md
    assert "bootstrap interval over the model's scored images" in md and "alt-binned image" in md


# --- the soft-label table ------------------------------------------------------------------------------------------
def test_model_points_read_the_probability_of_the_judged_event_from_the_scores():
    images, preds, ratings = _judged(40)
    m = model_points("m", preds, images, ratings)
    a = preds.filter(pl.col("label") == "a").sort("video_id", "frame_index")
    top = preds.filter(pl.col("rank") == 1).sort("video_id", "frame_index")
    assert_floats_close(m.prob, a["score"].to_numpy())
    assert_floats_close(m.confidence, top["score"].to_numpy())
    assert np.array_equal(m.correct, (top["label"] == "a").cast(pl.Float64).to_numpy())
    assert m.ratings.shape == (40, 3)


def test_soft_label_table_values_equal_the_core_and_the_people_row_is_the_ceiling():
    rng = np.random.default_rng(3)
    n = 250
    truth = rng.uniform(0, 1, n)
    ratings = np.clip(rng.normal(100 * truth[:, None], 15, (n, 3)), 0, 100).round()
    ratings[:20, 2] = np.nan
    prob = np.clip(truth + rng.normal(0, 0.1, n), 0, 1)
    conf = np.maximum(prob, 1 - prob)
    correct = (rng.random(n) < conf).astype(float)
    m = ModelPoints("m", prob, conf, correct, np.ones(n), ratings)
    cfg = IntervalConfig(**CFG)
    table = soft_label_table([m], ratings, cfg, ece_bins=15, binary_bins=10)
    got = {(r["model"], r["measure"]): r for r in table.iter_rows(named=True)}
    soft = U.soft_label_measures(prob, ratings)
    for k, v in soft.items():
        assert got[("m", k)]["value"] == pytest.approx(np.nanmean(v))
    ceiling = U.people_ceiling(ratings)
    for k, v in ceiling.items():
        assert got[(PEOPLE, k)]["value"] == pytest.approx(np.nanmean(v))
    assert got[("m", "ece_equal_width")]["value"] == pytest.approx(U.ece_equal_width(conf, correct, 15))
    assert got[("m", "ece_equal_mass")]["value"] == pytest.approx(U.ece_equal_mass(conf, correct, 15))
    assert got[("m", "smooth_ece")]["value"] == pytest.approx(U.smooth_ece(conf, correct))
    assert got[("m", "entropy_spearman")]["value"] == pytest.approx(U.entropy_correlation(prob, ratings)["spearman"])
    for r in got.values():
        assert r["lo"] <= r["value"] + 1e-9 and r["value"] <= r["hi"] + 1e-9, r
    # a model close to the people's mean is closer to them than a rater is to the others
    assert got[("m", "brier")]["value"] < got[(PEOPLE, "brier")]["value"]


def test_the_two_figures_are_drawn(tmp_path):
    from helpers.png_facts import figure_facts

    from squidflow.evaluation.figures import reliability_figure, saturation, saturation_figure

    images, preds, ratings = _judged(120)
    m = model_points("m", preds, images, ratings)
    people = m.ratings
    assert reliability_figure([m, m], tmp_path / "rel.png", IntervalConfig(**CFG), n_bins=10) == 2
    curves = saturation([m], people, repeats=5, seed=0, level=0.95)
    assert curves["m"]["brier"].shape == (3, 4) and curves["alpha"]["alpha"].shape == (2, 4)
    # with all raters kept every draw is the same: no band
    last = curves["m"]["brier"][-1]
    assert last[2] == pytest.approx(last[3])
    assert saturation_figure([m], people, tmp_path / "sat.png", repeats=3) == 7
    assert figure_facts(tmp_path / "sat.png")["panels"] == 7


def test_the_saturation_figure_says_what_its_bands_are(tmp_path, monkeypatch):
    """Issue 32: the bands collapsed to grey triangles with no legend. Two sizes (the people's curve starts at 2 of 3
    raters) get error bars; the legend names the band, the figure has a title."""
    from squidflow.evaluation import figures

    drawn = {}
    real_save = figures.style.save

    def recording_save(fig, path, **kw):
        drawn["legend"] = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
        drawn["legend"] += [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
        drawn["title"] = fig._suptitle.get_text() if fig._suptitle else ""
        drawn["bands"] = sum(len(ax.collections) for ax in fig.axes)
        return real_save(fig, path, **kw)

    monkeypatch.setattr(figures.style, "save", recording_save)
    images, preds, ratings = _judged(120)
    m = model_points("m", preds, images, ratings)
    figures.saturation_figure([m], m.ratings, tmp_path / "sat.png", repeats=3, level=0.9)
    assert any("central 90%\nof 3 draws per size" in t for t in drawn["legend"]), drawn
    assert "people (leave-one-rater-out)" in drawn["legend"] and "raters per image" in drawn["title"]


def test_the_per_image_points_come_back_from_parquet_exactly(tmp_path):
    """Rule per_image_points writes what the soft-label table and both figures read: the round trip through the
    Parquet file gives the same arrays, models in order, the empty and the left-out models kept."""
    from squidflow.contracts.io import SchemaError
    from squidflow.evaluation.points import points_frame, points_from_frame

    images, preds, ratings = _judged(60)
    ratings = ratings.with_columns(
        pl.when(pl.col("frame_index") < 5)
        .then(pl.col("ratings").list.head(2))
        .otherwise(pl.col("ratings"))
        .alias("ratings")
    )  # ragged: two raters on five
    m = model_points("m", preds, images, ratings)
    half = model_points("half", preds.filter(pl.col("frame_index") % 2 == 0), images, ratings)
    none = model_points("none", preds.head(0), images, ratings)
    path = tmp_path / "per_image_points.parquet"
    io.write_parquet(points_frame([m, none, half], ratings, ["not probabilities"]), path, schemas.PER_IMAGE_POINTS)
    points, people, skipped = points_from_frame(io.read_parquet(path, schemas.PER_IMAGE_POINTS))
    assert [p.name for p in points] == ["m", "none", "half"] and skipped == ["not probabilities"]
    for got, want in zip(points, [m, none, half], strict=True):
        for field in ("prob", "confidence", "correct", "target", "ratings"):
            assert np.array_equal(getattr(got, field), getattr(want, field), equal_nan=True), (want.name, field)
    want = ratings_matrix(ratings["ratings"].to_list())
    assert np.array_equal(people, want, equal_nan=True) and np.isnan(people[:5, 2]).all()
    cfg = IntervalConfig(**CFG)
    assert soft_label_table(points, people, cfg, ece_bins=10, binary_bins=10).equals(
        soft_label_table([m, none, half], want, cfg, ece_bins=10, binary_bins=10)
    )
    # read back, the file is checked against its schema
    pl.read_parquet(path).with_columns(pl.col("prob").cast(pl.Utf8)).write_parquet(path)
    with pytest.raises(SchemaError, match="per_image_points.*column 'prob' is String"):
        io.read_parquet(path, schemas.PER_IMAGE_POINTS)


# --- squidflow evaluate ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def release_predictions(tmp_path_factory, shared_data) -> Path:
    """Probabilities over parading/protesting/cooking for every variant A image of the release."""
    release = pl.read_csv(shared_data / "squid-e" / "huj_annotations.csv", infer_schema=False)
    images = (
        release.filter(pl.col("task_var") == "a")
        .select(
            pl.col("vid_ID").str.strip_chars('"').alias("video_id"),
            pl.col("frame_num").cast(pl.Int64).alias("frame_index"),
        )
        .unique()
        .sort("video_id", "frame_index")
    )
    rng = np.random.default_rng(0)
    rows = []
    for r in images.iter_rows(named=True):
        p = rng.dirichlet([1, 1, 1])
        for rank, j in enumerate(np.argsort(-p)):
            rows.append(
                {**r, "rank": rank + 1, "label": ["parading", "protesting", "cooking"][j], "score": float(p[j])}
            )
    path = tmp_path_factory.mktemp("preds") / "model.csv"
    pl.DataFrame(rows).write_csv(path)
    return path


def test_squidflow_evaluate_writes_the_tables_the_library_computes(tmp_path, release_predictions, shared_data):
    from squidflow.cli import main
    from squidflow.evaluation.models import evaluate_model
    from squidflow.evaluation.tables import ModelInfo, build_table
    from squidflow.judgments.ingest import read_release
    from squidflow.judgments.scores import image_scores

    out = tmp_path / "out"
    rc = main(
        [
            "evaluate",
            str(release_predictions),
            "--judgments",
            str(shared_data / "squid-e" / "huj_annotations.csv"),
            "--label-map",
            "parade=parading",
            "protest=protesting",
            "--top-k",
            "2",
            "--resamples",
            "200",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    for name in ("table2_verbs", "table8_alt_bins", "soft_label_measures"):
        assert all((out / f"{name}.{ext}").exists() for ext in ("csv", "md", "tex"))
    # what the rules model_accuracy + evaluation_table compute from the same files
    judgments, _ = read_release(shared_data / "squid-e" / "huj_annotations.csv")
    scores = image_scores(judgments)
    intervals = {"level": 0.95, "resamples": 200, "seed": 0, "method": "percentile"}
    label_map = {"parade": ["parading"], "protest": ["protesting"]}
    acc, summary = evaluate_model(
        release_predictions,
        scores,
        name="model",
        variant="A",
        top_k=2,
        label_map=label_map,
        cache_dir=tmp_path,
        intervals=intervals,
    )
    df, md, _ = build_table(
        [acc],
        [summary],
        [ModelInfo("model")],
        "table2_verbs",
        variant="A",
        top_k=2,
        label_map=label_map,
        source="release",
        intervals=intervals,
    )
    written = pl.read_csv(out / "table2_verbs.csv")
    assert written.select("accuracy", "n", "lo", "hi").equals(df.select("accuracy", "n", "lo", "hi"))
    assert (out / "table2_verbs.md").read_text() == md
    soft = pl.read_csv(out / "soft_label_measures.csv")
    assert set(soft["model"]) == {"model", PEOPLE} and soft["lo"].null_count() == 0
    brier = soft.filter((pl.col("model") == "model") & (pl.col("measure") == "brier"))["value"][0]
    parade = scores.filter((pl.col("variant") == "A") & pl.col("event_prompt").is_in(["parade", "protest"]))
    assert 0 < brier < 1 and len(parade) == 600


def test_evaluate_reads_each_predictions_file_and_scores_the_people_once(
    tmp_path, release_predictions, shared_data, monkeypatch
):
    """One `squidflow evaluate` call: the people's image scores computed once and each predictions file read once,
    with the numbers of the rules' own path (per_image_points, then the soft-label table read back from it)."""
    from squidflow.evaluation import models as models_module
    from squidflow.evaluation import scoring
    from squidflow.evaluation.points import points_from_frame
    from squidflow.judgments.ingest import read_release

    judgments, _ = read_release(shared_data / "squid-e" / "huj_annotations.csv")
    intervals = {"level": 0.95, "resamples": 200, "seed": 0, "method": "percentile"}
    how = scoring.Scoring(
        variant="A",
        top_k=2,
        label_map={"parade": ["parading"], "protest": ["protesting"]},
        intervals=intervals,
        ece_bins=10,
        binary_bins=10,
        source="release",
        cache_dir=tmp_path,
    )
    models = [{"name": n, "predictions": str(release_predictions)} for n in ("one", "two")]
    calls = {"read_predictions": 0, "image_scores": 0}

    def counted(name, fn):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return fn(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(models_module, "read_predictions", counted("read_predictions", models_module.read_predictions))
    monkeypatch.setattr(scoring, "image_scores", counted("image_scores", scoring.image_scores))
    out = scoring.evaluate_predictions(models, judgments, [], how)
    assert calls == {"read_predictions": 2, "image_scores": 1}
    rule_path = scoring.soft_label_outputs_of(
        *points_from_frame(
            scoring.per_image_points(
                models, judgments, [], variant="A", label_map=how.label_map, events_config=None, cache_dir=tmp_path
            )
        ),
        variant="A",
        intervals=intervals,
        ece_bins=10,
        binary_bins=10,
        source="release",
    )
    assert out[scoring.SOFT_LABEL_TABLE][0].equals(rule_path[0]) and out[scoring.SOFT_LABEL_TABLE][1:] == rule_path[1:]


def test_squidflow_evaluate_stops_on_a_bad_file_naming_file_row_and_fix(
    tmp_path, release_predictions, capsys, shared_data
):
    from squidflow.cli import main

    lines = release_predictions.read_text().splitlines()
    video, frame = lines[1].split(",")[:2]
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([lines[0], lines[1], f"{video},{frame},1,marching,0.5"]) + "\n")
    rc = main(
        [
            "evaluate",
            str(bad),
            "--judgments",
            str(shared_data / "squid-e" / "huj_annotations.csv"),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    err = capsys.readouterr().err
    assert rc == 2 and str(bad) in err and "line 3" in err and "rank" in err
    rc = main(
        [
            "evaluate",
            str(release_predictions),
            "--judgments",
            str(shared_data / "squid-e" / "huj_annotations.csv"),
            "--label-map",
            "parade",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert rc == 2 and "EVENT=LABEL" in capsys.readouterr().err


@pytest.mark.slow
def test_squidflow_evaluate_gives_the_workflows_numbers(small_workflow, tmp_path):
    """The small demo's trained classifiers, scored by the command from the run's own files, equal the run's
    Tables 2 and 8 and soft-label table (same library calls, same judgments, same exclusions, same seed)."""
    from squidflow.cli import main

    res = small_workflow.results
    # the Table 2 models in table order: the trained classifiers, then the text baselines
    models = [
        (
            res / f"evaluation/predictions/runs/classification/{'SE' if m == 'ES' else 'SD'}/{m}/seed0.parquet",
            f"{m} classifier seed 0",
        )
        for m in ("SD", "ES")
    ]
    models += [(res / f"text/baseline_{m}.parquet", f"text-{m} (co-occurring text)") for m in ("tfidf", "sbert")]
    args = [
        "evaluate",
        *[str(p) for p, _ in models],
        "--judgments",
        str(res / "judgments/judgments.parquet"),
        "--annotator-report",
        str(res / "judgments/annotator_report.parquet"),
        "--frames",
        str(res / "dataset/frames.parquet"),
        "--configfile",
        *map(str, small_workflow.configfiles),
        "--out",
        str(tmp_path),
    ]
    for _, name in models:
        args += ["--name", name]
    # as the rules' jobs run: Snakemake sets a job's BLAS threads to its `threads` (1 here). With the BLAS threads of
    # the test's process instead, one smECE bootstrap bound differed by 5.7e-9 (a matrix product blocked otherwise,
    # then relplot's bandwidth search), beyond the float64 bound below; with one thread the two agree
    with threadpool_limits(limits=1):
        assert main(args) == 0
    for table, key in (
        ("table2_verbs", ["model", "top", "binning", "bin"]),
        ("table8_alt_bins", ["model", "top", "binning", "bin"]),
        ("soft_label_measures", ["model", "measure"]),
    ):
        want = pl.read_csv(res / f"tables/{table}.csv").sort(key)
        got = pl.read_csv(tmp_path / f"{table}.csv").sort(key)
        # two computations of one table (the rules' scripts and the command, each reading the run's files in its
        # own order, with its own BLAS blocking): equal up to the rounding of float64 sums. The longest sums are
        # smooth ECE's (relplot): a kernel summed over every image at each point of its grid, resampled (and the
        # bias-adjusted interval subtracts the mean of the resamples), so the
        # bound counts images × grid points (the small run: under 10^6; seen: 1.3e-10 relative on its bounds), of
        # the size of the row's estimate and bounds (a bias-adjusted bound near 0 is a difference of such sums)
        scale = tuple(c for c in ("value", "accuracy", "lo", "hi") if c in want.columns)
        assert_frames_close(got, want, terms=1_000_000, row_scale=scale, what=table)


def test_the_matrix_form_of_each_sum_measure_equals_its_index_form():
    from squidflow.statistics.intervals import counts, image_resamples

    _, predictions = _runs("calibration", {"BL": 0.8}, seeds=1)
    ids = image_lists(predictions)
    run = next(iter(predictions.values()))
    images = {s: run_images(run, s, ids[s]) for s in ids}
    for metric in ("sd_acc", "se_acc", "huj_mse", "kl", "ece"):
        eval_set, stat = metric_stat(
            metric,
            images["SD"],
            images["SE"],
            ece_bins=10,
            kl_eps=1e-6,
            authors_ece_bins=5,
            authors_ece_batch=16,
            seed=0,
        )
        index = image_resamples(len(ids[eval_set]), IntervalConfig(**CFG))
        assert_floats_close(
            stat.weighted(counts(index, len(ids[eval_set]))),
            stat(index),
            terms=len(ids[eval_set]),
            equal_nan=True,
            what=metric,
        )


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize(
    "experiment, table",
    [("classification", "table1_training"), ("calibration", "table3_calibration"), ("calibration", "table9_kl")],
)
def test_every_estimate_of_tables_1_3_9_lies_inside_its_interval(experiment, table, method):
    """Issue 32: demo-sized runs (24 SD, 30 SE images: the authors' ECE then has two 16-image batches) gave Table 3
    `0.23 ± 0.01 [0.27, 0.61]`; every cell's mean and every paired difference now lies inside its interval, the ECEs
    with the bias-adjusted interval the caption names, their bias in the CSV."""
    methods = {"BL": 0.75, "MC": 0.7, "FL": 0.8}
    runs, predictions = _runs(
        experiment, methods, seeds=2, n_sd=24, n_se=30, k=4 if experiment == "classification" else 2, seed=3
    )
    spec = TABLES[table]
    out = io.conform(
        table_with_intervals(runs, predictions, spec, list(methods), {**CFG, "method": method}), schemas.RESULT_TABLE
    )
    assert outside_rows(out).is_empty(), outside_rows(out)
    biased = out.filter(pl.col("metric").is_in(["ece", "ece_authors"]))
    assert set(biased["interval_method"]) <= {"bias-adjusted percentile"}
    assert biased["bias"].null_count() == 0 if len(biased) else True
    md = to_markdown(out, spec, list(methods), intervals={**CFG, "method": method})
    assert "‡" not in md
    if len(biased):
        assert "bias-adjusted percentile interval" in md and "ECE (authors' code)" in md.split("bias-adjusted")[0]


def test_a_row_whose_estimate_lies_outside_its_interval_is_marked_and_explained():
    runs, predictions = _runs("calibration", {"BL": 0.75, "MC": 0.7}, seeds=2, n_se=60)
    spec = TABLES["table3_calibration"]
    table = table_with_intervals(runs, predictions, spec, ["BL", "MC"], CFG)
    row = (pl.col("train_set") == "SD") & (pl.col("method") == "MC") & (pl.col("metric") == "se_acc")  # above it
    bent = table.with_columns(
        pl.when(row).then(pl.col("mean") + 0.1).otherwise(pl.col("lo")).alias("lo"),
        pl.when(row).then(pl.col("mean") + 0.2).otherwise(pl.col("hi")).alias("hi"),
    )
    assert len(outside_rows(bent)) == 1
    md = to_markdown(bent, spec, ["BL", "MC"], intervals=CFG)
    assert "‡" in next(line for line in md.splitlines() if line.startswith("| MC |"))
    assert "‡: the estimate lies outside its own interval" in md


def estimates_outside(table: pl.DataFrame) -> list[tuple] | None:
    """(row, estimate column, value, lo, hi) of every estimate outside its interval, in any of the layouts the tables
    use (mean/value + lo/hi, diff + diff_lo/diff_hi, X + X_lo/X_hi); None when the table has no intervals."""
    pairs = [(v, "lo", "hi") for v in ("mean", "value", "accuracy") if v in table.columns and "lo" in table.columns]
    pairs += [(v, f"{v}_lo", f"{v}_hi") for v in table.columns if {f"{v}_lo", f"{v}_hi"} <= set(table.columns)]
    if not pairs:
        return None
    out = []
    for i, r in enumerate(table.iter_rows(named=True)):
        for v, lo, hi in pairs:
            x, a, b = r[v], r[lo], r[hi]
            if None in (x, a, b) or not all(isinstance(t, (int, float)) for t in (x, a, b)) or x != x:
                continue
            if not a - 1e-9 <= x <= b + 1e-9:
                out.append((i, v, x, a, b))
    return out


@pytest.mark.slow
def test_every_estimate_in_the_small_workflows_tables_lies_inside_its_interval_or_is_marked(small_workflow):
    """Issue 32, over every interval table the small demo writes: each estimate (a cell's value, a paired
    difference) lies inside its interval; a row that does not is marked ‡ in the Markdown, whose caption says why."""
    tables = sorted(small_workflow.results.glob("tables/*.csv"))
    checked = 0
    for path in tables:
        outside = estimates_outside(pl.read_csv(path, infer_schema_length=None))
        if outside is None:
            continue
        checked += 1
        if outside:
            md = path.with_suffix(".md").read_text()
            assert "‡" in md and "outside its own interval" in md, (path.name, outside)
    assert checked >= 3, [p.name for p in tables]


def test_table1_names_the_models_after_the_backbone_that_ran(tmp_path, monkeypatch):
    """Issue 32: demo Table 1 labelled every model RN+… while the demo trains EfficientNet-Lite0."""
    from squidflow.training.figures import table1_plot

    runs, predictions = _runs("classification", {"SD": 0.6, "ES": 0.9}, seeds=2, k=4, n_se=60)
    spec = TABLES["table1_training"]
    table = table_with_intervals(runs, predictions, spec, ["SD", "ES"], CFG)
    choices = {"sets": "squidflow", "trainable": {}, "judgments_source": "release", "backbone": "efficientnet_lite0"}
    md = to_markdown(table, spec, ["SD", "ES"], choices=choices, intervals=CFG)
    assert "| ENL0+SD |" in md and "| ENL0+ES |" in md and "RN+SD |" not in md
    assert "ENL0+<method> = EfficientNet-Lite0 (training.backbone)" in md
    assert "| RN+SD |" in to_markdown(table, spec, ["SD", "ES"], choices={**choices, "backbone": "resnet50"})
    import matplotlib.axes

    labels, original = [], matplotlib.axes.Axes.plot

    def plot(self, *args, **kwargs):
        labels.append(kwargs.get("label"))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "plot", plot)
    table1_plot(runs, ["SD", "ES"], tmp_path / "t1.png", "Table 1", backbone="efficientnet_lite0")
    assert "ENL0+SD (2 seeds)" in labels and "ENL0+ES (2 seeds)" in labels, labels
