"""Label Studio without a server: the labeling configs and tasks squidflow writes, the export reader with every case
Label Studio produces (skips, drafts, updates, several annotators, bad ratings, foreign tasks, an annotator in both
variants), the SQUID-E release round-tripped through the export format, and crowd-kit's models beside the rubric.

The tests against a real Label Studio server are in tests/e2e/test_label_studio_server.py."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from squidflow.contracts import schemas
from squidflow.contracts.io import read_parquet, write_csv, write_parquet
from squidflow.demo.label_studio import simulated_exports
from squidflow.judgments import crowd
from squidflow.judgments.agreement import agreement_table
from squidflow.judgments.ingest import JudgmentError, read_mturk_batch, read_release
from squidflow.judgments.label_studio import tasks as ls
from squidflow.judgments.label_studio.export import read_export
from squidflow.judgments.label_studio.run_exports import ingest_exports
from squidflow.judgments.quality import QualityConfig, annotator_report


# --- helpers -------------------------------------------------------------------------------------------------------
def release_as_export(judgments: pl.DataFrame) -> list[dict]:
    """The release's judgments as Label Studio would export them: the release has no HITs, so each of its rows (one
    image under one prompt, three ratings) is its own task, as `read_release` makes each row its own HIT; its rating
    positions huj_k are the users `huj_k@<variant>` (the release names no annotator, and the paper's variant groups
    are disjoint)."""
    named = judgments.with_columns((pl.col("annotator") + "@" + pl.col("variant")).alias("annotator"))
    return ls.export_from_judgments(named)


def rating(i: int, value) -> dict:
    return {"from_name": f"rating_{i}", "to_name": f"image_{i}", "type": "number", "value": {"number": value}}


def annotation(
    aid: int, user: int, values: list, *, created="2026-01-01T10:00:00.000000Z", updated=None, cancelled=False
) -> dict:
    return {
        "id": aid,
        "completed_by": user,
        "result": [] if cancelled else [rating(i + 1, v) for i, v in enumerate(values)],
        "was_cancelled": cancelled,
        "created_at": created,
        "updated_at": updated or created,
    }


def task(tid: int, hit: str, variant: str, images: list[str], annotations: list[dict], drafts=()) -> dict:
    data = {"hit": hit, "variant": variant, "event_prompt": "wedding"}
    for i, img in enumerate(images, start=1):
        data[f"image_{i}_id"] = img
        data[f"image_{i}"] = f"http://images.example/{img}.jpg"
    return {"id": tid, "data": data, "annotations": annotations, "drafts": list(drafts)}


IMGS = ["v1_10", "v2_20", "v3_30"]


def write_export(path: Path, tasks: list[dict]) -> Path:
    path.write_text(json.dumps(tasks))
    return path


# --- configs and tasks -------------------------------------------------------------------------------------------
def test_labeling_configs_have_one_control_per_image_with_the_papers_ranges():
    rating = ET.fromstring(ls.rating_config(6))
    numbers = rating.findall(".//Number")
    assert [n.get("name") for n in numbers] == [f"rating_{i}" for i in range(1, 7)]
    assert {(n.get("min"), n.get("max"), n.get("toName")) for n in numbers[:1]} == {("0", "100", "image_1")}
    assert [i.get("value") for i in rating.findall(".//Image")] == [f"$image_{i}" for i in range(1, 7)]
    assert rating.find("Header").get("value") == "Event type: $event_prompt"
    assert "nearly certain" in rating.find("Text").get("value")
    keywords = ET.fromstring(ls.keyword_config(6, 4))
    areas = keywords.findall(".//TextArea")
    assert len(areas) == 6 and {a.get("maxSubmissions") for a in areas} == {"4"}
    comparison = ET.fromstring(ls.comparison_config(3))
    choices = comparison.findall(".//Choices")
    assert [c.get("name") for c in choices] == ["plausibility_1", "plausibility_2", "plausibility_3"]
    assert [x.get("value") for x in choices[0]] == ["1", "2", "3"]
    assert "instructions" in ls.template_instructions("hit_template.html").lower() or "0%" in ls.template_instructions(
        "hit_template.html"
    )


def test_tasks_reference_images_by_base_url_or_local_files(tmp_path):
    hits = pl.DataFrame(
        {
            "hit_index": [0],
            "variant": ["A"],
            "event": ["wedding"],
            "event_prompt": ["Wedding"],
            "image_1_id": ["vid_a_3"],
            "image_1_url": ["x"],
            "image_2_id": [""],
            "image_2_url": [""],
        }
    )
    paths = {"vid_a_3": "results/dataset/images/vid_a/3.jpg"}
    by_url = ls.rating_tasks(hits, ls.ImageSource("url", "https://bucket.example/frames/"), paths)
    assert by_url[0]["data"]["image_1"] == "https://bucket.example/frames/vid_a/3.jpg"
    assert by_url[0]["data"]["hit"] == "A-0" and by_url[0]["data"]["image_2"] == ""
    local = ls.rating_tasks(hits, ls.ImageSource("local_files"), paths)
    assert local[0]["data"]["image_1"] == "/data/local-files/?d=results/dataset/images/vid_a/3.jpg"


# --- the export reader -------------------------------------------------------------------------------------------
def test_export_counts_skips_drafts_updates_and_keeps_the_last_annotation(tmp_path):
    export = [
        task(
            1,
            "A-0",
            "A",
            IMGS,
            [
                annotation(1, 7, [10, 20, 30]),
                annotation(2, 8, [11, 21, 31], updated="2026-01-01T10:05:00.000000Z"),  # updated later: counted
                annotation(3, 9, [], cancelled=True),  # skipped
                annotation(4, 7, [12, 22, 32], created="2026-01-01T11:00:00.000000Z"),  # user 7 again: the last counts
            ],
            drafts=[{"id": 1, "result": [rating(1, 99)]}],
        ),
        task(2, "A-1", "A", IMGS, []),
    ]
    path = write_export(tmp_path / "A.json", export)
    df, problems, stats = read_export(path)
    assert not problems
    assert (
        stats.tasks,
        stats.annotations,
        stats.cancelled,
        stats.drafts,
        stats.updated,
        stats.superseded,
        stats.several,
        stats.unannotated,
    ) == (2, 4, 1, 1, 1, 1, 1, 1)
    got = {(r["annotator"], r["video_id"], r["rating"], r["position"]) for r in df.iter_rows(named=True)}
    assert ("user-7", "v1", 12, 1) in got and ("user-8", "v1", 11, 0) in got  # user 8's first surviving = position 0
    assert not any(r[2] in (10, 99) for r in got)  # the superseded annotation and the draft are not judgments
    report = ingest_exports([{"path": path}])[1]
    assert "| 2 | 4 | 1 | 1 | 1 | 1 | 1 | 1 |" in report


@pytest.mark.parametrize(
    "case, needle",
    [
        ("out_of_range", "rating_2 = 140"),
        ("not_rated", "has no rating_3"),
        ("mismatch", "do not match hit 'A-0'"),
        ("foreign", "is not in"),
        ("unknown_image", "unknown image 'v3_30'"),
    ],
)
def test_bad_tasks_stop_with_file_task_and_fix_or_are_skipped(tmp_path, case, needle):
    values = {"out_of_range": [10, 140, 30], "not_rated": [10, 20]}.get(case, [10, 20, 30])
    imgs = ["v9_90", *IMGS[1:]] if case == "mismatch" else IMGS
    hit = "Z-9" if case == "foreign" else "A-0"
    export = [
        task(5, hit, "A", imgs, [annotation(1, 7, values)]),
        task(6, "A-1", "A", IMGS[:2], [annotation(2, 7, [1, 2])]),
    ]
    path = write_export(tmp_path / "A.json", export)
    expected = {"A-0": IMGS, "A-1": IMGS[:2]}
    known = {"v1_10", "v2_20"} | ({"v3_30"} if case != "unknown_image" else set()) | {"v9_90"}
    with pytest.raises(JudgmentError) as err:
        read_export(
            path, expected=expected, expected_from="results/annotation/label_studio/A/tasks.json", known_images=known
        )
    msg = str(err.value)
    assert f"{path}: task 5:" in msg and needle in msg and "on_error" in msg, msg
    df, problems, _ = read_export(path, expected=expected, known_images=known, on_error="skip")
    assert [p.task for p in problems] == [5] and set(df["hit"]) == {"A-1"}


def test_an_annotator_in_both_variants_stops_naming_both_projects(tmp_path):
    a = write_export(
        tmp_path / "A.json", [task(1, "A-0", "A", IMGS, [annotation(1, 7, [1, 2, 3]), annotation(2, 8, [4, 5, 6])])]
    )
    b = write_export(
        tmp_path / "B.json", [task(9, "B-0", "B", IMGS, [annotation(3, 7, [7, 8, 9]), annotation(4, 5, [1, 1, 1])])]
    )
    with pytest.raises(JudgmentError) as err:
        ingest_exports([{"path": a}, {"path": b}])
    msg = str(err.value)
    assert "user-7" in msg and f"variant A in {a} (task 1)" in msg and f"variant B in {b} (task 9)" in msg
    assert "Remove each from one project" in msg
    df, report = ingest_exports([{"path": a}, {"path": b}], on_error="skip")
    assert "user-7" not in set(df["annotator"]) and set(df["annotator"]) == {"user-8", "user-5"}
    assert "Annotators dropped for working in both variants: 1 (user-7)" in report


def test_not_an_export_names_the_file_and_the_fix(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"tasks": 1}')
    with pytest.raises(JudgmentError, match=r"x\.json: not a Label Studio JSON export .*Export > JSON"):
        read_export(p)


# --- the release and the simulated panel through the export format ----------------------------------------------
@pytest.fixture(scope="module")
def release(shared_data) -> pl.DataFrame:
    return read_release(shared_data / "squid-e" / "huj_annotations.csv")[0]


def test_release_through_a_label_studio_export_gives_the_same_judgments_and_table7(release, tmp_path):
    export = release_as_export(release)
    assert len(export) == 3600 and all(len(t["annotations"]) == 3 for t in export)
    path = write_export(tmp_path / "release_export.json", export)
    got, report = ingest_exports([{"path": path}])
    assert "Judgments read: 10800." in report
    back = got.with_columns(pl.col("annotator").str.replace(r"@[AB]$", ""), pl.lit("squid-e-release").alias("source"))
    assert back.select(release.columns).equals(release), (
        "the release's judgments, in its row order, every column but the source"
    )
    assert set(got["source"]) == {"label_studio"}
    before, after = agreement_table(release), agreement_table(got)
    assert after.equals(before), "Table 7 unchanged"
    assert before.filter(pl.col("variant") == "A")["alpha"][0] == pytest.approx(0.658, abs=0.005)


def test_simulated_panel_answers_through_the_export_format(tmp_path):
    header = "HITId,WorkerId,AssignmentStatus,Input.event_prompt,Input.variant,Input.image_1_id,Input.image_2_id,Answer.rating_1,Answer.rating_2\n"
    rows = [
        "h1,w1,Approved,Wedding,A,v1_1,v2_2,10,20",
        "h1,w2,Approved,Wedding,A,v1_1,v2_2,30,40",
        "h2,w3,Submitted,Parade,B,v1_1,v3_3,50,60",
    ]
    batch = tmp_path / "batch.csv"
    batch.write_text(header + "\n".join(rows) + "\n")
    repeat = tmp_path / "repeat.csv"
    repeat.write_text(header + "h1,w1,Approved,Wedding,A,v1_1,v2_2,12,22\n")
    out = {k: tmp_path / f"{k}.json" for k in ("A", "B", "A_repeat", "B_repeat")}
    texts = simulated_exports(
        {r: read_mturk_batch(b, source="simulated", round_=r)[0] for r, b in ((1, batch), (2, repeat))},
        images_per_hit=2,
    )
    for key, text in texts.items():
        out[key].write_text(text)
    exports = [{"path": out[k], "round": 2 if "repeat" in k else 1} for k in out]
    got, report = ingest_exports(exports, source="simulated")
    assert "SIMULATED" in report
    want = pl.concat(
        [read_mturk_batch(batch, source="simulated")[0], read_mturk_batch(repeat, source="simulated", round_=2)[0]]
    )
    cols = schemas.JUDGMENTS.required  # not the file each came from
    assert got.select(cols).sort(cols).equals(want.select(cols).sort(cols))
    assert json.loads(out["A"].read_text())[0]["meta"]["simulated"] is True


# --- crowd-kit ---------------------------------------------------------------------------------------------------
def test_crowd_tables_equal_crowd_kits_own_result_on_the_same_answers(release, tmp_path):
    from crowdkit.aggregation import GLAD, MACE, DawidSkene, MajorityVote

    # a slice of the release keeps the test quick: one prompt, 80 items of each variant
    j = release.filter(pl.col("event_prompt") == release["event_prompt"].unique().sort()[0])
    j = j.filter(
        pl.col("hit").is_in(
            pl.concat(
                [j.filter(pl.col("variant") == v)["hit"].unique(maintain_order=True)[:80] for v in ("A", "B")]
            ).implode()
        )
    )
    j = j.with_columns((pl.col("annotator") + "@" + pl.col("variant")).alias("annotator"))
    jp, rp = tmp_path / "judgments.parquet", tmp_path / "report.parquet"
    write_parquet(j, jp, schemas.JUDGMENTS)
    report = annotator_report(j, QualityConfig()).with_columns(  # as if the rubric had excluded huj_0 of variant A
        (pl.col("annotator") == "huj_0@A").alias("excluded")
    )
    write_parquet(report, rp, schemas.ANNOTATOR_REPORT)
    ratings = tmp_path / "ratings.csv"
    rng = np.random.default_rng(0)
    lines = ["query_id,candidate_id,annot1,annot2"] + [
        f"q{q},c{c},{rng.integers(1, 4)},{rng.integers(1, 4)}" for q in range(6) for c in range(5)
    ]
    ratings.write_text("\n".join(lines) + "\n")
    out = {k: tmp_path / f"{k}" for k in ("annotators.csv", "items.csv")}
    from squidflow.statistics.intervals import IntervalConfig

    tables = crowd.crowd_tables(
        read_parquet(jp, schemas.JUDGMENTS),
        read_parquet(rp, schemas.ANNOTATOR_REPORT),
        n_iter=10,
        mace_restarts=1,
        intervals=IntervalConfig(0.95, 200, 0, "percentile"),
    )
    table = tables["table"]
    for column in ("A_alpha", "B_spearman", "A+B_kappa5"):  # Table 7's numbers carry Table 7's intervals
        assert (table[f"{column}_lo"] <= table[column]).all() and (table[column] <= table[f"{column}_hi"]).all()
        assert (table[f"{column}_lo"] < table[f"{column}_hi"]).all()
    assert "] |" in tables["markdown"] and "bootstrap intervals" in tables["markdown"]
    write_csv(tables["items"], out["items.csv"], float_precision=4)  # as the rule writes them
    write_csv(tables["annotators"], out["annotators.csv"], float_precision=4)
    answers = crowd.rating_answers(j)
    items = pl.read_csv(out["items.csv"], infer_schema_length=0)
    own = {
        "majority_vote": MajorityVote().fit(answers),
        "dawid_skene": DawidSkene(n_iter=10).fit(answers),
        "glad": GLAD(n_iter=10).fit(answers),
        "mace": MACE(n_iter=10, n_restarts=1, random_state=0).fit(answers),
    }
    for name, model in own.items():
        mine = dict(zip(items["item"], items[f"{name}_label"], strict=False))
        # a task whose top labels tie exactly (two raters, two bins) may break the tie either way: squidflow's GLAD
        # sums in another order (test_crowd_models: its probabilities equal crowd-kit's within 1e-6), so the label
        # must be one of crowd-kit's top labels, and is crowd-kit's own wherever the top is unique
        probas = model.probas_
        for task, label in model.labels_.items():
            top = probas.loc[task]
            assert mine[task] in {str(k) for k, p in top.items() if p >= top.max() - 1e-9}, (name, task)
            if (top >= top.max() - 1e-9).sum() == 1:
                assert mine[task] == str(label), (name, task)
    ds = DawidSkene(n_iter=10).fit(answers)
    err = ds.errors_  # P(answer | true label) per annotator; a bin an annotator never answered has no row: 0
    skill = {
        w: sum(ds.priors_[k] * (err.loc[(w, k), k] if (w, k) in err.index else 0.0) for k in ds.priors_.index)
        for w in answers["worker"].unique()
    }
    annotators = pl.read_csv(out["annotators.csv"])
    assert dict(zip(annotators["annotator"], annotators["dawid_skene_skill"], strict=False)) == pytest.approx(
        skill, abs=1e-4
    )
    # the mean row is Table 7 over the rubric's survivors
    excluded = report.filter(pl.col("excluded"))["annotator"].to_list()
    kept = j.filter(~pl.col("annotator").is_in(excluded))
    t7 = agreement_table(kept)
    mean_row = table.filter(pl.col("aggregation") == "mean").row(0, named=True)
    assert mean_row["annotators_excluded"] == len(excluded) == 1
    for v in ("A", "B", "A+B"):
        assert mean_row[f"{v}_alpha"] == pytest.approx(t7.filter(pl.col("variant") == v)["alpha"][0])
    # the comparison sets' ratings: each model's label is crowd-kit's own, the mean row is the leaderboard's oracle
    from squidflow.comparison.metrics_sherlock.comparison import comparison_accuracy
    from squidflow.comparison.metrics_sherlock.report import read_comparison_ratings
    from squidflow.comparison.rating_models import comparison_oracles, plausibility_answers

    rt = read_comparison_ratings(ratings)
    oracles = comparison_oracles(rt, n_iter=10, mace_restarts=1)
    sets = [
        (np.zeros(len(p)), p["annot1"].to_numpy(), p["annot2"].to_numpy())
        for _, p in rt.group_by("query_id", maintain_order=True)
    ]
    assert oracles.filter(pl.col("aggregation") == "mean")["comparison_oracle"][0] == pytest.approx(
        comparison_accuracy(sets)["oracle"]
    )
    mv = MajorityVote().fit_predict(plausibility_answers(rt))
    from squidflow.comparison.metrics_sherlock.comparison import pairwise_accuracy

    mv_oracle = (
        np.mean(
            [
                np.mean(
                    [
                        pairwise_accuracy(
                            mv.reindex((p["query_id"] + "|" + p["candidate_id"]).to_list()).astype(float).to_numpy(),
                            p[a].to_numpy().astype(float),
                        )
                        for a in ("annot1", "annot2")
                    ]
                )
                for _, p in rt.group_by("query_id", maintain_order=True)
            ]
        )
        * 100
    )
    assert oracles.filter(pl.col("aggregation") == "majority_vote")["comparison_oracle"][0] == pytest.approx(mv_oracle)
    assert "crowd-kit" in tables["markdown"]


def test_crowd_kit_on_the_release_ratings_flags_nobody_at_the_default_skill(release):
    fits, skipped = crowd.fit_all(
        crowd.rating_answers(release.filter(pl.col("variant") == "A")), n_iter=5, mace_restarts=1
    )
    assert not skipped and set(fits) == set(crowd.MODELS)
    for name, f in fits.items():
        assert f["skills"].between(0, 1).all() and (f["skills"] >= 0.3).all(), (name, f["skills"].to_dict())
