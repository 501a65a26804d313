"""The publish stage (squidflow.publish): a folder that `datasets` loads config by config, that mlcroissant validates
and reads, whose card's YAML names every config, and whose LeWiDi files carry the judgments; `squidflow publish
check` names what a hand edit broke; the SQUID-E release round-trips to Table 7's α."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import datasets
import numpy as np
import polars as pl
import pytest
import yaml
from helpers.floats import assert_floats_close
from helpers.publish_run import INTERVALS, ROOT, small_run
from helpers.publish_run import annotator_report as _report
from helpers.publish_run import settings as _settings
from PIL import Image

from squidflow.config.validation import ConfigError, load_config
from squidflow.contracts import schemas
from squidflow.errors import UserError
from squidflow.judgments.agreement import agreement_table
from squidflow.judgments.ingest import read_release
from squidflow.judgments.scores import image_scores
from squidflow.publish import check, lewidi
from squidflow.publish.card import read_header
from squidflow.publish.dataset import RunSettings, RunTables, publish
from squidflow.publish.facts import required


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> tuple[Path, RunTables]:
    tmp = tmp_path_factory.mktemp("publish_small")
    run = small_run(tmp / "run")
    publish(tmp / "out" / "squidflow-demo", run, _settings())
    return tmp / "out" / "squidflow-demo", run


def _load_dataset(folder: Path, config: str = "images") -> datasets.DatasetDict:
    """`datasets.load_dataset(folder, config)` into a cache of its own: the library keys a local folder's cache by its
    name (huggingface/datasets#2956), and these tests publish several folders named squidflow-demo."""
    cache = tempfile.mkdtemp(prefix="load-", dir=os.environ["HF_DATASETS_CACHE"])
    return datasets.load_dataset(str(folder), config, cache_dir=cache)


def _load(folder: Path, config: str) -> dict[str, pl.DataFrame]:
    return {split: d.to_polars() for split, d in _load_dataset(folder, config).items()}


def test_every_config_loads_with_the_row_counts_of_squidflows_tables(small):
    folder, run = small
    loaded = {c: _load(folder, c) for c in ("images", "judgments", "soft_labels", "keywords")}
    assert sum(len(t) for t in loaded["images"].values()) == run.frames.height
    assert sum(len(t) for t in loaded["judgments"].values()) == run.judgments.height
    assert sum(len(t) for t in loaded["soft_labels"].values()) == run.scores.height
    assert sum(len(t) for t in loaded["keywords"].values()) == run.keywords.height
    assert set(loaded["images"]) == {"train", "test"}  # the frames' splits, in the datasets library's names
    # one pseudonym per person across variants and tasks; no platform worker id is published
    names = set(pl.concat(list(loaded["judgments"].values()))["annotator"])
    assert names == {"Ann1", "Ann2", "Ann3"}
    assert set(pl.concat(list(loaded["keywords"].values()))["annotator"]) == {"Ann4"}
    soft = pl.concat(list(loaded["soft_labels"].values()))
    assert soft["n"].to_list() == [len(r) for r in soft["ratings"].to_list()] == [2] * soft.height  # W3 excluded
    assert (soft["mean_lo"] <= soft["mean"]).all() and (soft["mean"] <= soft["mean_hi"]).all()


def test_images_config_decodes_to_the_selected_jpegs(small):
    folder, run = small
    images = _load_dataset(folder, "images")
    by_id = {r["image_id"]: r["image_path"] for r in run.frames.iter_rows(named=True)}
    for split in images.values():
        for row in split:
            assert isinstance(row["image"], Image.Image)
            with Image.open(by_id[row["image_id"]]) as original:
                assert np.array_equal(np.asarray(row["image"]), np.asarray(original))
    raw = pl.read_parquet(next((folder / "data/images").glob("train-*.parquet")))
    assert raw["image"].struct.field("bytes")[0] == Path(by_id[raw["image_id"][0]]).read_bytes()


def test_croissant_validates_and_yields_records_with_the_mlcroissant_cli(small):
    folder, _ = small
    meta = json.loads((folder / "croissant.json").read_text())
    assert meta["conformsTo"] == "http://mlcommons.org/croissant/1.1"
    assert {rs["@id"] for rs in meta["recordSet"]} == {"images", "judgments", "soft_labels", "keywords"}
    assert meta["rai:annotatorDemographics"].startswith("none: the ratings come from a SIMULATED annotator panel")
    assert "Simulated annotations" in meta["rai:dataCollectionType"]
    assert "SIMULATED" in " ".join(meta["rai:dataLimitations"])
    cli = Path(sys.executable).with_name("mlcroissant")
    res = subprocess.run(
        [str(cli), "validate", "--jsonld", str(folder / "croissant.json")], capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr[-3000:]
    for rs in meta["recordSet"]:
        res = subprocess.run(
            [
                str(cli),
                "load",
                "--jsonld",
                str(folder / "croissant.json"),
                "--record_set",
                rs["@id"],
                "--num_records",
                "2",
            ],
            capture_output=True,
            text=True,
            cwd=folder,
        )
        assert res.returncode == 0, res.stderr[-3000:]
        records = [line for line in res.stdout.splitlines() if line.startswith(f"{{'{rs['@id']}/")]
        assert len(records) == 2, res.stdout[-2000:]


def test_card_names_every_config_and_says_the_panel_is_simulated_first(small):
    folder, _ = small
    text = (folder / "README.md").read_text()
    head = read_header(text)
    assert [c["config_name"] for c in head["configs"]] == ["images", "judgments", "soft_labels", "keywords"]
    assert head["license"] == "cc-by-4.0" and head["size_categories"] == ["n<1K"] and head["pretty_name"]
    body = text.split("---", 2)[2]
    first_paragraph = body.strip().split("\n\n")[1]
    assert "SIMULATED" in first_paragraph
    assert "Rate each image." in body and "[tasks/rating_task.html](tasks/rating_task.html)" in body
    assert (folder / "tasks/rating_task.html").exists()


def test_a_fact_the_card_names_and_the_facts_lack_stops_the_card_naming_it():
    """The card is templates/dataset_card.md.j2 filled from one Facts (issue 60) with StrictUndefined: a fact that
    the template names and the facts lack (a renamed field, a template edit) fails the card, naming the fact, instead
    of printing an empty line in a published dataset."""
    import jinja2

    from squidflow.publish import card
    from squidflow.publish.facts import Facts

    facts = Facts(
        name="mine", pretty_name="My events", version="1.0.0", license="mit", citation="@misc{mine}",
        url="https://example.org/mine", description="Frames of my events.", creators=[], demo=False,
        judgment_source="mturk", platform="mturk", image_mode="embed", sources=["local"], terms="",
        pay="US$0.10 per task", annotator_demographics="not collected",
    )  # fmt: skip
    text = card.card(facts)
    assert text.startswith("---\npretty_name: My events\n") and "- Pay: US$0.10 per task.\n" in text
    del facts.__dict__["pay"]
    with pytest.raises(jinja2.UndefinedError, match="'pay'"):
        card.card(facts)


def test_lewidi_files_hold_each_variants_items(small):
    folder, run = small
    files = sorted(p.name for p in (folder / "lewidi").iterdir())
    assert files == [
        "squidflow-demo_A_test.json",
        "squidflow-demo_A_train.json",
        "squidflow-demo_B_test.json",
        "squidflow-demo_B_train.json",
        "squidflow-demo_annotators_meta.json",
    ]
    item = next(iter(json.loads((folder / "lewidi/squidflow-demo_A_train.json").read_text()).values()))
    assert item["number of annotators"] == 2 and item["annotators"] == "Ann1,Ann2"
    assert sum(item["soft_label"].values()) == pytest.approx(1.0) and item["split"] == "train"
    assert set(item["other_info"]) >= {"image_id", "prompt"}
    meta = json.loads((folder / "lewidi/squidflow-demo_annotators_meta.json").read_text())
    assert meta["Ann1"] == {"Annotator_id": "Ann1", "demographics": "not collected"}
    assert lewidi._annotations(["Ann1", "Ann1"], [5, 7]) == {"Ann1": "5", "Ann1#2": "7"}


def test_check_passes_a_published_folder(small):
    folder, _ = small
    assert check.check_folder(folder) == []


def test_lewidi_soft_labels_keep_full_precision(small):
    """LeWiDi 2025's soft labels sum to 1 within 1e-15; thirds rounded to 6 decimals summed to 0.999999."""
    folder, _ = small
    for path in (folder / "lewidi").glob("squidflow-demo_[AB]_*.json"):
        for item in json.loads(path.read_text()).values():
            shares = item["soft_label"].values()
            assert abs(sum(shares) - 1) <= 1e-15, (path.name, item["soft_label"])
            assert set(shares) <= {0.0, 1 / 3, 0.5, 2 / 3, 1.0}, item["soft_label"]  # 2 or 3 ratings, unrounded


def test_check_reads_a_rebuilt_folder_not_the_cache_of_its_name(small, tmp_path):
    """A user loads a published folder, rebuilds it elsewhere with other rows under the same name, and checks the
    rebuild: `datasets` alone serves the first build's rows from the user's cache (huggingface/datasets#2956), while
    `squidflow publish check`, run with that same cache as the machine's, reads the rebuilt files and passes."""
    first, run = small
    gone = (pl.col("video_id") == "parade_00") & (pl.col("frame_index") == 10)
    j = run.judgments.filter(~gone)
    rebuilt = tmp_path / "elsewhere" / "squidflow-demo"
    publish(
        rebuilt,
        dataclasses.replace(run, judgments=j, scores=image_scores(j, ["W3"]), table7=agreement_table(j)),
        _settings(),
    )
    assert check.shard_rows(rebuilt, "judgments") == j.height < run.judgments.height
    user = tmp_path / "home-cache-huggingface"  # the machine's ~/.cache/huggingface after loading the first build
    old = datasets.load_dataset(str(first), "judgments", cache_dir=str(user / "datasets"))
    served = datasets.load_dataset(str(rebuilt), "judgments", cache_dir=str(user / "datasets"))
    assert sum(map(len, served.values())) == sum(map(len, old.values())) == run.judgments.height  # the stale rows
    env = {**os.environ, "HF_HOME": str(user), "HF_DATASETS_CACHE": str(user / "datasets")}
    res = subprocess.run(
        [sys.executable, "-m", "squidflow.cli", "publish", "check", str(rebuilt)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    assert res.returncode == 0 and res.stdout == "", res.stdout + res.stderr[-3000:]
    assert check.check_loading(rebuilt, ["judgments"]) == []  # its loads yield the shards' rows, counted
    shard = next((rebuilt / "data/judgments").glob("train-*.parquet"))
    shutil.copy(shard, shard.with_name("extra-" + shard.name))  # a shard that the card's data_files do not name
    assert check.check_loading(rebuilt, ["judgments"]) == [
        f"{rebuilt}: config judgments: datasets.load_dataset yields {j.height:,} rows, but the shards under "
        f"data/judgments/ hold {j.height + pl.read_parquet(shard).height:,} (the card's data_files miss or repeat a shard)"
    ]


def test_check_names_each_problem_of_an_edited_folder(small, tmp_path):
    folder, _ = small
    edited = tmp_path / "edited"
    shutil.copytree(folder, edited)
    shard = next((edited / "data/judgments").glob("test-*.parquet"))
    shard.unlink()  # a shard removed
    card = edited / "README.md"
    card.write_text(card.read_text().replace("config_name: soft_labels", "config_name: soft_label"))  # a config renamed
    meta = json.loads((edited / "croissant.json").read_text())
    meta["rai:dataLimitations"] = []  # a RAI field emptied
    (edited / "croissant.json").write_text(json.dumps(meta))
    res = subprocess.run(
        [sys.executable, "-m", "squidflow.cli", "publish", "check", str(edited)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert res.returncode == 1, res.stderr[-3000:]
    out = res.stdout
    assert f"{shard.relative_to(edited).as_posix()} is missing" in out
    assert "`configs` does not name the config soft_labels (data/soft_labels/)" in out
    assert "datasets.load_dataset(folder, 'judgments') fails" in out  # its card still lists the removed split
    assert "rai:dataLimitations is empty" in out
    ok = subprocess.run(
        [sys.executable, "-m", "squidflow.cli", "publish", "check", "--no-load", str(folder)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert ok.returncode == 0 and ok.stdout == "", ok.stdout + ok.stderr[-2000:]


def test_outside_the_demo_an_empty_required_key_stops_naming_it():
    for key in ("name", "license", "citation"):
        cfg = {"name": "mine", "license": "cc-by-4.0", "citation": "@misc{x}", key: ""}
        with pytest.raises(ConfigError, match=f"publish.{key} is empty"):
            required(cfg, demo=False)
    assert required({"name": "", "license": "", "citation": ""}, demo=True)["name"] == "squidflow-demo"


def test_embed_refuses_frames_of_youtube_videos_not_under_creative_commons(tmp_path):
    run = small_run(tmp_path / "run")
    run.videos = run.videos.with_columns(
        pl.lit("youtube").alias("source"), pl.lit("Standard YouTube License").alias("license")
    )
    with pytest.raises(ConfigError, match="publish.images: embed would copy the pixels of 2 videos"):
        publish(tmp_path / "out" / "x", run, _settings(images="embed"))
    assert not (tmp_path / "out" / "x").exists()


def test_shard_size_cuts_a_config_into_shards_that_load_as_one(tmp_path):
    run = small_run(tmp_path / "run")
    folder = tmp_path / "out" / "sharded"
    publish(folder, run, _settings(shard_size="1KB"))
    shards = sorted(p.name for p in (folder / "data/judgments").glob("train-*.parquet"))
    assert len(shards) > 1 and shards[0].endswith(f"-of-{len(shards):05d}.parquet")
    assert sum(len(t) for t in _load(folder, "judgments").values()) == run.judgments.height
    assert check.check_folder(folder, load=False) == []


def test_a_config_without_rows_is_left_out_and_no_image_stops(tmp_path):
    run = small_run(tmp_path / "run")
    run.keywords = run.keywords.head(0)
    folder = tmp_path / "out" / "nokw"
    publish(folder, run, _settings())
    assert not (folder / "data/keywords").exists()
    assert "keywords" not in [c["config_name"] for c in read_header((folder / "README.md").read_text())["configs"]]
    run.frames = run.frames.head(0)
    with pytest.raises(UserError, match="nothing to publish"):
        publish(tmp_path / "out" / "none", run, _settings())


@pytest.fixture(scope="module")
def release_folder(tmp_path_factory, shared_data) -> tuple[Path, pl.DataFrame]:
    """The SQUID-E release's judgments published as config/squid-e-release.yaml publishes them (reference mode)."""
    cfg = load_config(ROOT / "config" / "squid-e-release.yaml", check_paths=False)
    judgments, _ = read_release(shared_data / "squid-e" / "huj_annotations.csv")
    run = RunTables(
        judgments=judgments,
        annotator_report=_report(judgments["annotator"]),
        scores=image_scores(judgments),
        table7=agreement_table(judgments),
    )
    settings = RunSettings(
        publish=cfg["publish"],
        demo=False,
        judgment_source="release",
        platform="mturk",
        sources=[s["type"] for s in cfg["sources"]],
        intervals=INTERVALS,
    )
    folder = tmp_path_factory.mktemp("release") / cfg["publish"]["name"]
    publish(folder, run, settings)
    return folder, judgments


def test_release_round_trips_to_table7_alpha(release_folder):
    folder, judgments = release_folder
    published = _load(folder, "judgments")
    assert list(published) == ["test"] and len(published["test"]) == 10_800 == judgments.height
    back = published["test"].rename({"prompt": "event_prompt"})
    alpha = {r["variant"]: r["alpha"] for r in agreement_table(back).iter_rows(named=True)}
    assert round(alpha["A"], 3) == 0.658 and round(alpha["B"], 3) == 0.696  # SQUID-E Table 7


def test_release_publishes_references_not_pixels(release_folder):
    folder, judgments = release_folder
    images = _load(folder, "images")["test"]
    assert "image" not in images.columns
    assert len(images) == judgments.select("video_id", "frame_index").unique().height  # 1,800 rows, 5 images repeated
    kinds = images["source"].str.extract(r"^(https://www\.youtube\.com|UCF-Crime|SQUID-E release)").value_counts()
    assert set(kinds["source"]) == {"https://www.youtube.com", "UCF-Crime"}  # banner ids are UCF-Crime's
    text = (folder / "README.md").read_text()
    assert "frames.mode: exact" in text and "rating positions" in text
    assert "Your task is to rate your confidence" in text  # the release's task wording, quoted
    meta = json.loads((folder / "croissant.json").read_text())
    assert meta["rai:annotatorDemographics"].startswith("not collected")  # publish.annotators empty: never invented
    assert check.check_folder(folder, load=False) == []


def test_release_soft_labels_match_image_scores(release_folder):
    folder, judgments = release_folder
    soft = _load(folder, "soft_labels")["test"]
    scores = image_scores(judgments)
    assert len(soft) == scores.height
    assert np.allclose(np.sort(soft["mean"].to_numpy()), np.sort(scores["people_mean"].to_numpy()))


def test_a_png_is_not_a_card(tmp_path):
    (tmp_path / "README.md").write_bytes(b"\x89PNG")
    problems = check.check_folder(tmp_path)
    assert any(p.endswith("README.md: not UTF-8 text") for p in problems)
    assert any("croissant.json: missing" in p for p in problems)


@pytest.mark.slow
def test_the_demo_publishes_what_it_made(small_workflow):
    """`make demo`'s folder: every config with the row counts of squidflow's own tables, the images config decoding
    to the selected JPEGs, mlcroissant's CLI validating and loading records of every record set, the check passing."""
    from squidflow.contracts.io import read_parquet

    results = small_workflow.results
    folder = results / "publish" / "squidflow-demo"
    own = {
        "images": read_parquet(results / "dataset/frames.parquet", schemas.FRAMES),
        "judgments": read_parquet(results / "judgments/judgments.parquet", schemas.JUDGMENTS),
        "soft_labels": read_parquet(results / "judgments/image_scores.parquet", schemas.IMAGE_SCORES),
        "comparison_sets": read_parquet(results / "comparison/sets.parquet", schemas.COMPARISON_SETS),
        "keywords": read_parquet(results / "judgments/keywords.parquet", schemas.KEYWORD_JUDGMENTS),
    }
    for config, table in own.items():
        loaded = _load(folder, config)
        assert sum(len(t) for t in loaded.values()) == table.height, config
    images = _load_dataset(folder, "images")["train"]
    paths = dict(zip(own["images"]["image_id"].to_list(), own["images"]["image_path"].to_list(), strict=True))
    row = images[0]
    with Image.open(small_workflow.directory / paths[row["image_id"]]) as original:
        assert np.array_equal(np.asarray(row["image"]), np.asarray(original))
    cli = str(Path(sys.executable).with_name("mlcroissant"))
    jsonld = str(folder / "croissant.json")
    assert subprocess.run([cli, "validate", "--jsonld", jsonld], capture_output=True).returncode == 0
    for rs in own:
        res = subprocess.run(
            [cli, "load", "--jsonld", jsonld, "--record_set", rs, "--num_records", "1"], capture_output=True, text=True
        )
        assert res.returncode == 0 and f"{{'{rs}/" in res.stdout, res.stderr[-2000:]
    assert check.check_folder(folder) == []
    assert "SIMULATED" in (folder / "README.md").read_text().split("---", 2)[2].strip().split("\n\n")[1]
    rows = pl.concat(list(_load(folder, "judgments").values()))  # issue 47: the rows say where they came from
    assert set(rows["source"]) == {"simulated"} and set(rows["wave"]) == {"first"}
    assert set(own["judgments"]["wave"]) == {"first"} and own["judgments"]["source_file"].null_count() == 0
    assert "<h2>Agreement</h2>" in (results / "report/published_dataset.html").read_text()


@pytest.mark.slow
def test_the_release_config_publishes_and_round_trips(tmp_path, shared_data):
    """`snakemake --configfile config/squid-e-release.yaml`: the publish job's folder passes the check and its
    judgments give Table 7's α."""
    import os

    (tmp_path / "shared").symlink_to(shared_data.parent, target_is_directory=True)
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "--snakefile",
            str(ROOT / "Snakefile"),
            "--directory",
            str(work),
            "--cores",
            "2",
            "results/publish/squid-e",
            "--configfile",
            str(ROOT / "config/squid-e-release.yaml"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=900,
    )
    assert res.returncode == 0, res.stderr[-4000:]
    folder = work / "results/publish/squid-e"
    assert check.check_folder(folder) == []
    back = _load(folder, "judgments")["test"].rename({"prompt": "event_prompt"})
    alpha = {r["variant"]: r["alpha"] for r in agreement_table(back).iter_rows(named=True)}
    assert (round(alpha["A"], 3), round(alpha["B"], 3)) == (0.658, 0.696)
    assert "image" not in _load(folder, "images")["test"].columns


def test_check_names_a_licence_disagreement_a_missing_lewidi_folder_and_a_parent_folder(small, tmp_path):
    """A card that says mit beside a Croissant file that says CC-BY, a folder without lewidi/, and the folder above a
    dataset given for it (issue 47)."""
    folder, _ = small
    meta = json.loads((folder / "croissant.json").read_text())
    assert meta["license"] in (
        "https://spdx.org/licenses/CC-BY-4.0.html",
        ["https://spdx.org/licenses/CC-BY-4.0.html"],
    )  # the SPDX URL of the card's cc-by-4.0
    edited = tmp_path / "out" / "edited"
    shutil.copytree(folder, edited)
    card_path = edited / "README.md"
    card_path.write_text(card_path.read_text().replace("license: cc-by-4.0", "license: mit", 1))
    shutil.rmtree(edited / "lewidi")
    problems = check.check_folder(edited, load=False)
    assert any(
        "croissant.json: license https://spdx.org/licenses/CC-BY-4.0.html disagrees with the card" in p
        and "license mit" in p
        for p in problems
    ), problems
    assert any(p.startswith(f"{edited / 'lewidi'}: missing") for p in problems), problems
    parent = check.check_folder(tmp_path / "out", load=False)
    assert parent == [
        f"{tmp_path / 'out'}: not a published dataset (no README.md, no croissant.json) but the folder "
        f"above 1: did you mean {edited}?"
    ]
    card_path.write_text(card_path.read_text().replace("license: mit", "license: CC BY 4.0", 1))
    assert any(
        "license 'CC BY 4.0' is not a Hugging Face Hub licence id (did you mean 'cc-by-4.0'?)" in p
        for p in check.check_folder(edited, load=False)
    )


def _published(folder: Path, config: str) -> pl.DataFrame:
    return pl.concat([pl.read_parquet(p) for p in sorted((folder / "data" / config).glob("*.parquet"))])


def _card_alpha(folder: Path) -> dict[str, float]:
    """variant -> Krippendorff's α as the card prints it (its agreement table)."""
    out = {}
    for line in (folder / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] in ("A", "B", "A+B") and cells[2][:1] in "-0123456789":
            out[cells[0]] = float(cells[2].split()[0])
    return out


def _alpha_from_rows(rows: pl.DataFrame) -> float:
    """Krippendorff's interval α of published rows, by the `krippendorff` package: one unit per image, prompt and
    task page (hit), one coder per position in it."""
    import krippendorff

    units = rows.select("image_id", "prompt", "hit").unique().sort("image_id", "prompt", "hit")
    index = {k: i for i, k in enumerate(units.iter_rows())}
    positions = sorted(rows["position"].unique().to_list())
    data = np.full((len(positions), len(index)), np.nan)
    for r in rows.iter_rows(named=True):
        data[positions.index(r["position"]), index[(r["image_id"], r["prompt"], r["hit"])]] = r["rating"]
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="interval"))


@pytest.mark.parametrize("excluded", [set(), {"W3"}])
def test_the_cards_alpha_and_every_soft_label_follow_from_the_published_files(tmp_path, excluded):
    """Issue 47: excluded raters stay in `judgments` with `excluded` and `excluded_because`; the card's α and every
    soft label are recomputed from the published rows that are not excluded (an independent α)."""
    run = small_run(tmp_path / "run")
    run.annotator_report = _report(run.judgments["annotator"], excluded=excluded)
    if excluded:
        run.annotator_report = run.annotator_report.with_columns(
            pl.when(pl.col("excluded"))
            .then(pl.lit(["triage: constant ratings"]))
            .otherwise(pl.col("flags"))
            .alias("flags")
        )
    kept = run.judgments.filter(~pl.col("annotator").is_in(list(excluded)))
    run.scores, run.table7 = image_scores(run.judgments, list(excluded)), agreement_table(kept)
    folder = tmp_path / "out" / "mine"
    publish(folder, run, _settings())
    judgments = _published(folder, "judgments")
    assert judgments.height == run.judgments.height  # every rating published, excluded ones too
    gone = judgments.filter(pl.col("excluded"))
    assert gone["annotator"].n_unique() == len(excluded)
    assert set(gone["excluded_because"]) <= {"triage: constant ratings"}
    assert (
        judgments.filter(~pl.col("excluded"))["excluded_because"].null_count()
        == judgments.filter(~pl.col("excluded")).height
    )
    assert set(judgments["source"]) == {"simulated"} and set(judgments["wave"]) == {"first"}
    used = judgments.filter(~pl.col("excluded") & (pl.col("round") == 1))
    card_alpha = _card_alpha(folder)
    for variant in ("A", "B"):
        assert card_alpha[variant] == pytest.approx(
            _alpha_from_rows(used.filter(pl.col("variant") == variant)), abs=5e-4
        )
    soft = _published(folder, "soft_labels")
    mine = used.group_by("image_id", "prompt", "variant").agg(pl.col("rating").mean().alias("m"), pl.len().alias("k"))
    both = soft.join(mine, on=["image_id", "prompt", "variant"], how="full", coalesce=True)
    assert both.height == soft.height == mine.height
    assert (both["n"] == both["k"]).all()
    assert_floats_close(both["mean"].to_numpy(), both["m"].to_numpy(), terms=int(both["k"].max()))
    text = (folder / "README.md").read_text()
    assert f"Raters excluded: {len(excluded)} of 3" in text
    sources = _published(folder, "images")["source"].to_list()
    assert sources and not any(s.startswith("/") or str(tmp_path) in s for s in sources)  # no local absolute path


def test_one_simulated_rating_makes_the_card_say_simulated_whatever_the_config_says(tmp_path):
    run = small_run(tmp_path / "run")
    run.judgments = run.judgments.with_columns(
        pl.when(pl.int_range(pl.len()) == 0).then(pl.lit("simulated")).otherwise(pl.lit("label_studio")).alias("source")
    )
    settings = RunSettings(
        **{
            **_settings().__dict__,
            "judgment_source": "label_studio",
            "demo": False,
            "publish": {**_settings().publish, "name": "mine", "license": "mit", "citation": "@misc{m}"},
        }
    )
    publish(tmp_path / "out" / "mine", run, settings)
    body = (tmp_path / "out" / "mine" / "README.md").read_text().split("---", 2)[2]
    assert "SIMULATED" in body.strip().split("\n\n")[1]
    assert "Platform: a SIMULATED annotator panel" in body


def test_the_reports_page_shows_the_published_folder(small):
    """The report's "Published dataset" category (issue 47): the card rendered, each config's rows, the Croissant
    file and the LeWiDi files, read from the folder itself; data in the card is escaped."""
    from squidflow.report.dataset_page import config_rows, dataset_page, markdown_html

    folder, run = small
    page = dataset_page(folder)
    rows = dict(((c, s), n) for c, s, n in config_rows(folder))
    assert sum(n for (c, _), n in rows.items() if c == "judgments") == run.judgments.height
    assert f"<td><code>judgments</code></td><td>train</td><td>{rows[('judgments', 'train')]:,}</td>" in page
    assert "<h2>Agreement</h2>" in page and "&quot;@context&quot;" in page and "squidflow-demo_A_train.json" in page
    assert markdown_html("# <script>x</script>\n\n| a | <b> |\n|---|---|\n") == (
        "<h1>&lt;script&gt;x&lt;/script&gt;</h1>\n<table><tr><td>a</td><td>&lt;b&gt;</td></tr></table>"
    )


@pytest.mark.parametrize("kind", ["local", "urls"])
def test_reference_mode_carries_the_url_list_its_recipe_reads(tmp_path, kind):
    """Issue 47: a reference-mode folder holds rebuild/videos.csv, a URL list whose `frames` are the published frame
    numbers of each video; the card's config reads it as a `urls` source (a base_url only where the list names
    videos by their path in a local folder) with the settings that made the pixels, and the listing takes exactly
    the published frames."""
    from squidflow.publish import card
    from squidflow.videos.sources import read_url_list, urls_source

    run = small_run(tmp_path / "run")
    if kind == "urls":
        run.videos = run.videos.with_columns(
            pl.lit("urls").alias("source"),
            (pl.lit("https://videos.example/") + pl.col("video_id")).alias("webpage_url"),
        )
    settings = _settings(images="reference")
    settings = dataclasses.replace(settings, frames={**settings.frames, "letterbox": True, "letterbox_below": 1.7,
                                                     "letterbox_to": 1.8, "decoder": "ffmpeg", "image_format": "png",
                                                     "image_quality": 90})  # fmt: skip
    folder = tmp_path / "out" / "mine"
    publish(folder, run, settings)
    text = (folder / "README.md").read_text()
    [snippet] = re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
    config = yaml.safe_load(snippet)
    assert config["stages"] == ["videos", "frames"]
    assert config["frames"] == {"mode": "exact", "decoder": "ffmpeg", "letterbox": True, "letterbox_below": 1.7,
                                "letterbox_to": 1.8}  # fmt: skip
    assert config["selection"] == {"image_format": "png", "image_quality": 90}
    [source] = config["sources"]
    assert source["type"] == "urls" and source["path"] == f"{card.DATASET_PLACEHOLDER}/rebuild/videos.csv"
    assert ("base_url" in source) == (kind == "local")
    assert card.REBUILD_COMMAND in text and "rebuild/results/dataset/images/<video_id>/<frame_index>.jpg" in text
    listing = urls_source(read_url_list(folder / "rebuild/videos.csv"), "videos.csv", base_url="http://127.0.0.1:1/")
    got = {r["video_id"]: r["release_frames"] for r in listing.candidates.iter_rows(named=True)}
    want = run.frames.group_by("video_id").agg(pl.col("frame_index").sort()).iter_rows()
    assert got == dict(want)
    urls = set(listing.candidates["url"])
    assert urls == (
        {"http://127.0.0.1:1/wedding_00.mp4", "http://127.0.0.1:1/parade_00.mp4"}
        if kind == "local"
        else {"https://videos.example/wedding_00", "https://videos.example/parade_00"}
    )
    assert check.check_folder(folder, load=False) == []


def test_the_cards_precision_line_follows_from_the_published_files(tmp_path):
    """Issue 59: the card says how precisely the soft labels are known (their intervals' widths) and how many ratings
    that took, numbers that follow from the published `soft_labels` and `judgments` alone."""
    run = small_run(tmp_path / "run")
    run.annotator_report = _report(run.judgments["annotator"], excluded={"W3"})
    run.scores = image_scores(run.judgments, ["W3"])
    folder = tmp_path / "out" / "mine"
    publish(folder, run, _settings())
    line = next(ln for ln in (folder / "README.md").read_text().splitlines() if ln.startswith("- Precision:"))
    soft, rows = _published(folder, "soft_labels"), _published(folder, "judgments")
    width = (soft["mean_hi"] - soft["mean_lo"]).drop_nulls()
    assert f"{width.median():.1f} rating points wide at the median" in line, line
    assert f"{width.quantile(0.9):.1f} at the 90th percentile, over {soft.height:,} soft labels" in line, line
    assert f"from {rows.height:,} ratings ({rows.filter(~pl.col('excluded')).height:,} kept)" in line, line


def test_the_cards_next_round_line_follows_from_the_published_files(tmp_path):
    """Issue 47: a next round ingested as wave round2 (its own raters, round 1 of its task) is published with its
    wave; the card says how many ratings it added and how the soft labels' intervals it re-rated narrowed, and those
    numbers follow from the published `judgments` and `soft_labels` alone."""
    from squidflow.statistics.intervals import IntervalConfig, item_mean_intervals

    run = small_run(tmp_path / "run")
    again = run.judgments.filter((pl.col("variant") == "A") & (pl.col("annotator") == "W1"))
    extra = pl.concat(
        [again.with_columns(pl.lit(w).alias("annotator"), pl.lit(f"A-{w}").alias("hit")) for w in ("W7", "W8")]
    ).with_columns(pl.lit("round2").alias("wave"), pl.lit("A_round2.json").alias("source_file"))
    run.judgments = pl.concat([run.judgments.with_columns(pl.lit("first").alias("wave")), extra])
    run.annotator_report = _report(run.judgments["annotator"], excluded={"W3"})
    run.scores = image_scores(run.judgments, ["W3"])
    folder = tmp_path / "out" / "mine"
    publish(folder, run, _settings())
    text = (folder / "README.md").read_text()
    rows = _published(folder, "judgments")
    added = rows.filter(pl.col("wave") == "round2")
    line = next(ln for ln in text.splitlines() if ln.startswith("- Next round: round2"))
    assert f"round2 added {added.height} ratings to " in line, line
    # before: the first wave's ratings not excluded; after: the published soft label's interval
    used = rows.filter(~pl.col("excluded") & (pl.col("round") == 1)).sort("hit", "position")
    items = added.select("image_id", "prompt", "variant").unique()
    before = (
        used.filter(pl.col("wave") == "first")
        .group_by("image_id", "prompt", "variant", maintain_order=True)
        .agg(pl.col("rating"))
        .join(items, on=["image_id", "prompt", "variant"])
        .sort("image_id", "prompt", "variant")
    )
    lo, hi = item_mean_intervals(before["rating"].to_list(), IntervalConfig.from_config(INTERVALS))
    soft = _published(folder, "soft_labels").join(before, on=["image_id", "prompt", "variant"])
    soft = soft.sort("image_id", "prompt", "variant")
    width_before, width_after = hi - lo, (soft["mean_hi"] - soft["mean_lo"]).to_numpy()
    assert f"to {items.height} images × prompts × variants" in line
    assert f"went from {np.median(width_before):.1f} to {np.median(width_after):.1f} rating points" in line, line
    assert f"narrower for {int((width_after < width_before).sum())} of {items.height}" in line, line
