"""One results folder per configuration (issue 32): a run records its config files beside the run summary, and a run
with other config files in the same folder stops before its first job, naming both and the fix, files unchanged."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import yaml

from squidflow.runtime import run_record

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "config" / "config.yaml"
RELEASE = ROOT / "config" / "squid-e-release.yaml"


def _checksums(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_the_record_names_the_files_and_keeps_their_contents(tmp_path):
    assert run_record.check_and_record([DEMO], repo_root=ROOT, folder=tmp_path) is None
    record = yaml.safe_load((tmp_path / run_record.RECORD).read_text())
    assert [f["file"] for f in record["configfiles"]] == ["config/config.yaml"]
    assert record["configfiles"][0]["text"] == DEMO.read_text()
    # the same configuration again (edited, or with an overlay: a model added): the run goes on, the record renewed
    overlay = tmp_path / "models.yaml"
    overlay.write_text("evaluation: {top_k: 5}\n")
    assert run_record.check_and_record([DEMO, overlay], repo_root=ROOT, folder=tmp_path) is None
    assert run_record.names(run_record.read(tmp_path / run_record.RECORD)) == ["config/config.yaml", str(overlay)]
    # another configuration: the message names both configurations and both fixes
    message = run_record.check_and_record([RELEASE], repo_root=ROOT, folder=tmp_path)
    assert f"holds the results of another configuration: config/config.yaml + {overlay} (recorded on " in message
    assert "this run reads config/squid-e-release.yaml" in message
    assert "--directory runs/squid-e-release" in message and "--config replace_other_config=true" in message
    assert "\n" not in message
    # the confirmed override replaces the record
    assert run_record.check_and_record([RELEASE], replace=True, repo_root=ROOT, folder=tmp_path) is None
    assert run_record.names(run_record.read(tmp_path / run_record.RECORD)) == ["config/squid-e-release.yaml"]


def test_a_folder_recorded_where_earlier_runs_recorded_it_is_still_one_configuration(tmp_path):
    """Runs before wave 6 wrote the record to results/report/run_config.yaml: another configuration in such a folder
    still stops, and the same one goes on with the record written where issue 56 names it, results/run_config.yaml."""
    earlier = tmp_path / run_record.EARLIER_RECORD
    run_record.write(run_record.current([DEMO], ROOT), earlier)
    message = run_record.check_and_record([RELEASE], repo_root=ROOT, folder=tmp_path)
    assert message and "holds the results of another configuration: config/config.yaml" in message
    assert not (tmp_path / run_record.RECORD).exists()
    assert run_record.check_and_record([DEMO], repo_root=ROOT, folder=tmp_path) is None
    assert run_record.RECORD == "results/run_config.yaml"
    assert run_record.names(run_record.read(tmp_path / run_record.RECORD)) == ["config/config.yaml"]


def test_the_release_config_in_the_demos_folder_stops_and_changes_nothing(tmp_path, shared_data):
    """The README's "regenerate one output" example run where the demo's results are: it used to plan
    ingest_judgments and overwrite the demo's judgments and Table 7."""
    work = tmp_path / "work"  # the release's judgments: the public URL's copy under SQUIDFLOW_DATA (shared_data)
    results = work / "results"
    # the demo's files this run would overwrite (results/judgments/, Table 7's Markdown, the summary); the CSV
    # target is missing, so the run has jobs to do
    for name, text in {
        "judgments/judgments.parquet": "demo judgments",
        "judgments/image_scores.parquet": "demo",
        "tables/table7_agreement.md": "| A |",
        "report/run_summary.html": "<p>demo</p>",
    }.items():
        (results / name).parent.mkdir(parents=True, exist_ok=True)
        (results / name).write_text(text)
    run_record.write(run_record.current([DEMO], ROOT), work / run_record.RECORD)  # as the demo's run records it
    before = _checksums(work / "results")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "--snakefile",
            str(ROOT / "Snakefile"),
            "--cores",
            "1",
            "results/tables/table7_agreement.csv",
            "--directory",
            str(work),
            "--configfile",
            "config/squid-e-release.yaml",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
    )
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-3000:]
    assert "holds the results of another configuration: config/config.yaml" in out, out[-3000:]
    assert "this run reads config/squid-e-release.yaml" in out and "--directory runs/squid-e-release" in out
    assert "Traceback" not in out
    assert _checksums(work / "results") == before
    assert not (work / "logs" / "ingest_judgments").exists()  # no job started


def test_an_absent_local_copy_is_named_once_and_the_download_is_offered(tmp_path):
    """Issue 32: a shipped config whose ../shared copy is absent printed the same path twice and did not say that
    removing the key downloads the file."""
    import pytest

    from squidflow.config.validation import load_config
    from squidflow.errors import UserError

    cfg = tmp_path / "release.yaml"
    cfg.write_text("squid_e_release:\n  judgments_csv: missing/huj_annotations.csv\n")
    with pytest.raises(UserError) as err:
        load_config(cfg, base_dir=ROOT)  # the working directory is the clone: both places are one
    msg = str(err.value)
    assert msg.count(str(ROOT / "missing" / "huj_annotations.csv")) == 1, msg
    assert (
        "Or remove squid_e_release.judgments_csv from the config to download it from "
        "https://raw.githubusercontent.com/katesanders9/squid-e/main/dataset/data/huj_annotations.csv instead"
    ) in msg


def test_evaluate_help_gives_the_predictions_format_and_an_example(capsys):
    import pytest

    from squidflow.cli import main

    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    out = capsys.readouterr().out
    assert "predictions format" in out and "video_id,frame_index,rank,label,score" in out
    assert "squidflow evaluate my_model.csv --judgments" in out and '"""-jmFL0i8_ZU"""' in out


def test_missing_column_messages_show_no_internal_column(tmp_path):
    """Issue 32: the readers' own line-number columns (`_line`, `_row`) leaked into "missing column" messages."""
    import pytest

    from squidflow.errors import UserError
    from squidflow.evaluation.predictions import read_predictions
    from squidflow.judgments.ingest import read_mturk_batch
    from squidflow.videos.sources import list_candidates

    urls = tmp_path / "urls.csv"
    urls.write_text("url,evnt\nhttps://a.example/1.mp4,parade\n")
    batch = tmp_path / "batch.csv"
    batch.write_text("HITId,WorkerId\nH1,W1\n")
    predictions = tmp_path / "predictions.csv"
    predictions.write_text("video_id,frame_index,rank,score\nv,1,1,0.5\n")
    for read, needle in [(lambda: list_candidates([{"type": "urls", "path": str(urls)}]), "['event']"),
                         (lambda: read_mturk_batch(batch), "AssignmentStatus"),
                         (lambda: read_predictions(predictions, cache_dir=tmp_path), "label")]:  # fmt: skip
        with pytest.raises(UserError) as err:
            read()
        msg = str(err.value)
        assert needle in msg and "_line" not in msg and "_row" not in msg, msg
