"""Fault injection: bad inputs, misuses and crashes, each with the exact input that once passed silently or crashed
unhelpfully, and what squidflow must do instead — stop with one line that names the file, row or key and the fix,
keep two videos apart, leave no live payload in a file a person opens, or recover to results identical to a clean
run. The session summary (tests/conftest.py) counts the cases tried and their outcomes.

The whole-workflow cases (marked slow) run the smallest demo (tests/helpers/faults.py: TINY) in temporary directories.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from helpers.checkout import copy_checkout
from helpers.faults import (
    ROOT,
    SNAKEMAKE,
    STARTS,
    TINY,
    TRACEBACK,
    assert_one_clear_stop,
    hostile,
    raw_payloads,
    run,
    snakemake_args,
    tried,
    write_config,
)

from squidflow.contracts.io import SchemaError, md_escape, read_csv_strings, write_csv
from squidflow.errors import EmptyError, InputError
from squidflow.judgments.ingest import JudgmentError, ingest, read_mturk_batch
from squidflow.judgments.tables import table7, table7_markdown
from squidflow.videos.sources import list_candidates

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def dry_run(workdir: Path, config_text: str, *extra: str) -> subprocess.CompletedProcess:
    conf = write_config(workdir, config_text)
    return run([*snakemake_args(workdir, conf), "-n", *extra], timeout=300)


# ====================================== 1. inputs checked when the config is read ======================================
def test_typo_in_url_list_path_stops_before_any_job_even_with_old_results(tmp_path):
    (tmp_path / "lists").mkdir()
    (tmp_path / "lists" / "urls.csv").write_text("url,event\nhttps://example.org/a.mp4,parade\n")
    (tmp_path / "results" / "videos").mkdir(parents=True)
    (tmp_path / "results" / "videos" / "videos.parquet").write_bytes(b"old result")  # "results exist"
    res = dry_run(tmp_path, "sources:\n  - {type: urls, path: lists/url.csv}\n")
    assert_one_clear_stop(res, "sources[0].path", "lists/url.csv", "Did you mean 'lists/urls.csv'")
    assert "Nothing to be done" not in res.stdout
    tried(
        "typo in a URL list path, old results present", "stopped with a message: key, path and the closest file named"
    )


def test_typo_in_mturk_batch_path_stops_before_any_job(tmp_path):
    (tmp_path / "mturk").mkdir()
    (tmp_path / "mturk" / "batch_results.csv").write_text("HITId\n")
    res = dry_run(tmp_path, "judgments:\n  source: mturk\n  batches: [{path: mturk/batch_result.csv}]\n")
    assert_one_clear_stop(res, "judgments.batches[0].path", "mturk/batch_result.csv", "no such file")
    tried("typo in an MTurk batch path", "stopped with a message: key and path named")


def test_mturk_source_without_batches_stops(tmp_path):
    # the HITs are made before any batch exists (issue 58): the run stops where it needs the batches, saying what to do
    publish = "publish: {name: mine, license: cc-by-4.0, citation: '@misc{m}'}\n"
    res = dry_run(tmp_path, "judgments:\n  source: mturk\n" + publish)
    assert_one_clear_stop(res, "judgments.source is 'mturk' but judgments.batches is empty", "batches:", "hits_A.csv")
    tried("judgments.source: mturk without batches", "stopped with a message: both keys named, with an example")


def test_local_root_and_standard_data_that_do_not_exist_stop(tmp_path):
    res = dry_run(tmp_path, "sources:\n  - {type: local, root: videoz}\nstandard_data: {path: data/standrd}\n")
    assert_one_clear_stop(res, "sources[0].root = 'videoz': no such folder", "standard_data.path = 'data/standrd'")
    tried("missing local root and standard-data folder", "stopped with a message: every bad key named at once")


def test_empty_source_list_stops(tmp_path):
    res = dry_run(tmp_path, "sources: []\n")
    assert_one_clear_stop(res, "sources", "at least 1 items")
    tried("an empty source list", "stopped with a message: key named")


def test_duplicate_yaml_key_in_a_configfile_names_file_and_line(tmp_path):
    res = dry_run(tmp_path, "demo:\n  seed: 1\n  videos_per_event: 2\n  seed: 2\n")
    assert_one_clear_stop(res, "run.yaml line 4: key 'seed' is given twice (first on line 2)")
    tried("a YAML key given twice (--configfile)", "stopped with a message: file and both lines named")


def test_tab_in_the_default_config_names_file_and_line(tmp_path):
    """The demo config is the workflow's own config/config.yaml (read when no --configfile is given, whatever the
    folder): a tab typed into it in a checkout stops the run naming that file, the line and the fix."""
    checkout = copy_checkout(tmp_path / "checkout")
    (checkout / "config" / "config.yaml").write_text("stages: [videos]\ndemo:\n\tseed: 1\n")
    (tmp_path / "run").mkdir()
    res = run([SNAKEMAKE, "-n", "--snakefile", str(checkout / "Snakefile"), "--directory", str(tmp_path / "run"),
               "--cores", "1"])  # fmt: skip
    assert_one_clear_stop(res, "config/config.yaml line 3, column 1", "replace the tab with spaces")
    tried("a tab in the YAML of the workflow's config file", "stopped with a message: file, line and fix named")


def test_a_missing_configfile_stops_naming_it(tmp_path):
    """Issue 32: Snakemake 9 opens --configfile before any workflow code runs and shows a missing one as a traceback
    whose last line names the file. squidflow's profile no longer re-parses Snakemake's command line to say it in one
    line (issue 46: the engine through its public interfaces; the upstream report is in docs/upstream.md): the run
    stops before any job, naming the file, and `squidflow check-config` names it in one line."""
    res = run([*snakemake_args(tmp_path, tmp_path / "confg.yaml"), "-n"], timeout=300)
    assert res.returncode != 0 and str(tmp_path / "confg.yaml") in res.stdout.strip().splitlines()[-1], res.stdout
    assert "Building DAG" not in res.stdout
    cli = str(Path(sys.executable).with_name("squidflow"))
    res = run([cli, "check-config", str(tmp_path / "confg.yaml")])
    assert res.returncode != 0 and "confg.yaml" in res.stdout and TRACEBACK not in res.stdout, res.stdout
    tried("a --configfile that does not exist", "stopped by Snakemake before any job, the file named on its last line")


def test_tab_and_duplicate_key_in_check_config(tmp_path):
    tab = write_config(tmp_path, "demo:\n\tseed: 1\n", "tab.yaml")
    dup = write_config(tmp_path, "stages: [videos]\nstages: [frames]\n", "dup.yaml")
    cli = str(Path(sys.executable).with_name("squidflow"))
    for path, needle in [(tab, "tab.yaml line 2, column 1"), (dup, "dup.yaml line 2: key 'stages' is given twice")]:
        res = run([cli, "check-config", str(ROOT / "config" / "config.yaml"), str(path)])
        assert res.returncode == 2 and needle in res.stdout and TRACEBACK not in res.stdout, res.stdout
    tried("a tab and a duplicate key given to `squidflow check-config`", "stopped with a message: file and line named")


@pytest.mark.skipif(not IS_ROOT, reason="a read-only mount needs root (as a user, chmod makes the folder read-only)")
def test_read_only_results_folder_stops_before_the_first_job(tmp_path):
    results = tmp_path / "results"
    (results / "videos").mkdir(parents=True)
    if subprocess.run(["mount", "--bind", str(results), str(results)], capture_output=True).returncode != 0:
        pytest.skip("mount --bind is not permitted here")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(results)], check=True, capture_output=True)
        conf = write_config(tmp_path, TINY)
        res = run(snakemake_args(tmp_path, conf), timeout=300)
        assert_one_clear_stop(res, f"{tmp_path}/results is not writable (read-only file system)", "--directory")
    finally:
        subprocess.run(["umount", str(results)], capture_output=True)
    tried("a read-only results folder", "stopped with a message: before the first job, folder, reason and fix named")


# ====================================== 2. ids never merge two videos; lists conformed ================================
def url_list(tmp_path: Path, name: str, content: str | bytes) -> list[dict]:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return [{"type": "urls", "path": str(path)}]


def test_ids_that_differ_only_in_non_ascii_characters_stay_two_videos(tmp_path):
    sources = url_list(
        tmp_path, "u.csv", "video_id,url,event\nä1,https://a.example/1.mp4,parade\nö1,https://a.example/2.mp4,parade\n"
    )
    cands, notes = list_candidates(sources)
    ids = cands["video_id"].to_list()
    assert len(ids) == 2 and len(set(ids)) == 2 and all(i.startswith("1-") for i in ids)
    assert sum("made job-safe" in n for n in notes) == 2
    tried("ids ä1 and ö1 cleaned", "kept apart: a hash of the original id as suffix")


def test_one_id_for_two_different_videos_names_both_rows(tmp_path):
    sources = url_list(
        tmp_path,
        "u.csv",
        "video_id,url,event\nabc,https://a.example/1.mp4,parade\n\nabc,https://a.example/2.mp4,parade\n",
    )
    with pytest.raises(InputError) as err:
        list_candidates(sources)
    assert "u.csv line 2" in str(err.value) and "u.csv line 4" in str(err.value) and "own video_id" in str(err.value)
    tried("one id given to two different videos", "stopped with a message: both rows named")


def test_the_same_video_listed_twice_is_kept_once(tmp_path):
    sources = url_list(
        tmp_path,
        "u.csv",
        "url,event\nhttps://youtu.be/HpLQCPkGLhs,parade\nhttps://www.youtube.com/watch?v=HpLQCPkGLhs,parade\n",
    )
    cands, notes = list_candidates(sources)
    assert cands["video_id"].to_list() == ["HpLQCPkGLhs"] and any("already listed" in n for n in notes)
    tried("the same video listed twice", "kept apart: the same video kept once, reported")


def test_parquet_url_list_with_integer_ids_reads_them_as_strings(tmp_path):
    path = tmp_path / "u.parquet"
    pl.DataFrame({"video_id": [1, 2], "url": ["https://a.example/1.mp4", "https://a.example/2.mp4"],
                  "event": ["parade", "protest"]}).write_parquet(path)  # fmt: skip
    cands, _ = list_candidates([{"type": "urls", "path": str(path)}])
    assert cands["video_id"].to_list() == ["1", "2"]
    tried("a Parquet URL list with integer video_id", "read correctly: ids conformed to strings")


@pytest.mark.parametrize(
    ("name", "content", "needles"),
    [
        ("empty.csv", b"", ["empty.csv: the URL list is empty", "url,event"]),
        (
            "ragged.csv",
            b"url,event\nhttps://a.example/1.mp4,parade\nhttps://a.example/2.mp4,parade,extra\n",
            ["ragged.csv line 3: 3 fields, but the header has 2"],
        ),
        (
            "latin1.csv",
            "url,event,title\nhttps://a.example/1.mp4,parade,Fête\n".encode("latin-1"),
            ["latin1.csv line 2: byte 0xea is not UTF-8", "iconv"],
        ),
        (
            "nocolumn.csv",
            b"link,event\nhttps://a.example/1.mp4,parade\n",
            ["nocolumn.csv", "missing required column(s) ['url']"],
        ),
    ],
    ids=["empty", "ragged", "latin-1", "wrong-header"],
)
def test_unreadable_url_lists_name_the_file_and_the_line(tmp_path, name, content, needles):
    with pytest.raises((InputError, SchemaError)) as err:
        list_candidates(url_list(tmp_path, name, content))
    for needle in needles:
        assert needle in str(err.value), str(err.value)
    tried(f"a URL list that is {name.split('.')[0]}", "stopped with a message: file and line named, with the fix")


def test_header_only_url_list_is_no_video_said_at_listing(tmp_path):
    with pytest.raises(EmptyError, match=r"no video to acquire.*header only"):
        list_candidates(url_list(tmp_path, "h.csv", "url,event\n"))
    tried("a header-only URL list (library)", "stopped with a message: at listing, no video and which list")


# ====================================== 3. judgments: duplicates, nothing read, everyone excluded =====================
BATCH_HEADER = "HITId,WorkerId,AssignmentStatus,Input.event_prompt,Input.variant,Input.image_1_id,Input.image_2_id,Answer.rating_1,Answer.rating_2\n"


def test_same_image_twice_in_one_assignment_names_the_line_and_skip_skips_it(tmp_path):
    path = tmp_path / "batch.csv"
    path.write_text(
        BATCH_HEADER + "H1,W1,Approved,parade,A,vidA_10,vidB_20,40,90\nH1,W2,Approved,parade,A,vidA_10,vidA_10,35,36\n"
    )
    with pytest.raises(JudgmentError) as err:
        read_mturk_batch(path)
    assert f"{path}:3:" in str(err.value) and "Input.image_2_id repeats image vidA_10 of Input.image_1_id" in str(
        err.value
    )
    df, problems, _ = read_mturk_batch(path, on_error="skip")
    assert len(df) == 2 and [p.row for p in problems] == [3]
    tried(
        "the same image twice in one MTurk assignment",
        "stopped with a message: the line named; skipped and listed under on_error: skip",
    )


def test_an_assignment_in_two_batch_files_names_both_places_and_skip_skips_it(tmp_path):
    rows = "H1,W1,Approved,parade,A,vidA_10,vidB_20,40,90\n"
    (tmp_path / "a.csv").write_text(BATCH_HEADER + rows)
    (tmp_path / "b.csv").write_text(BATCH_HEADER + rows)
    batches = [(tmp_path / "a.csv", 1), (tmp_path / "b.csv", 1)]
    with pytest.raises(JudgmentError) as err:
        ingest(source="mturk", batches=batches)
    assert f"{tmp_path / 'b.csv'}:2:" in str(err.value) and f"{tmp_path / 'a.csv'}:2" in str(err.value)
    assert "round: 2" in str(err.value)
    df, report = ingest(source="mturk", batches=batches, on_error="skip")
    assert len(df) == 2 and "b.csv" in report
    tried(
        "the same assignment in two batch files",
        "stopped with a message: both files and lines named; skipped under on_error: skip",
    )


def test_latin1_batch_file_names_file_and_line(tmp_path):
    path = tmp_path / "batch.csv"
    path.write_bytes((BATCH_HEADER + "H1,Wé,Approved,parade,A,vidA_10,vidB_20,40,90\n").encode("latin-1"))
    with pytest.raises(JudgmentError, match=r"batch\.csv line 2: byte 0xe9 is not UTF-8"):
        read_mturk_batch(path)
    tried("a Latin-1 MTurk batch file", "stopped with a message: file and line named")


def test_zero_judgments_is_an_error_said_at_ingestion(tmp_path):
    path = tmp_path / "batch.csv"
    path.write_text(BATCH_HEADER + "H1,W1,Approved,parade,A,vidA_10,vidB_20,abc,90\n")
    with pytest.raises(EmptyError) as err:
        ingest(source="mturk", batches=[(path, 1)], on_error="skip")
    assert "no judgment was read from" in str(err.value) and "1 row(s) skipped" in str(err.value)
    assert f"{path}:2" in str(err.value) and "on_empty: skip" in str(err.value)
    df, _ = ingest(source="mturk", batches=[(path, 1)], on_error="skip", on_empty="skip")
    assert df.is_empty()
    tried("zero judgments", "stopped with a message: at ingestion, files, skipped rows and the first problem named")


def judgments_frame() -> pl.DataFrame:
    rows = []
    for variant, workers in (("A", ["a1", "a2", "a3"]), ("B", ["b1", "b2", "b3"])):
        for img in range(6):
            for pos, w in enumerate(workers):
                rows.append({"video_id": f"v{img}", "frame_index": 0, "event_prompt": "parade", "variant": variant,
                             "annotator": w, "position": pos, "hit": f"{variant}{img}", "rating": (img * 17 + pos * 5) % 101,
                             "round": 1, "source": "mturk"})  # fmt: skip
    return pl.DataFrame(rows)


def test_a_variant_whose_every_rater_is_excluded_stops_or_is_a_note(tmp_path):
    j = judgments_frame()
    report = pl.DataFrame({"annotator": ["a1", "a2", "a3", "b1", "b2", "b3"], "n_judgments": [6] * 6,
                           "flags": [[]] * 3 + [["control: x"]] * 3, "excluded": [False] * 3 + [True] * 3})  # fmt: skip
    share = pl.DataFrame(
        schema={"variant": pl.Utf8, "n_images": pl.Int64, "n_high_certainty": pl.Int64, "share": pl.Float64}
    )
    where = "results/judgments/annotator_report.parquet"
    with pytest.raises(EmptyError) as err:
        table7(j, report, share, report_name=where)
    assert "variant B" in str(err.value) and "3 annotator(s) is excluded" in str(err.value)
    assert where in str(err.value)
    _, md = table7(j, report, share, report_name=where, on_empty="skip")
    assert "Variant B skipped" in md
    tried(
        "quality checks exclude every rater of a variant",
        "stopped with a message: annotator_report.parquet named; a note under skip",
    )


def test_a_pool_too_small_for_one_comparison_set_stops(tmp_path):
    from squidflow.comparison.plausibility import DualEmbeddings
    from squidflow.comparison.sets import ComparisonConfig, build_sets

    rng = np.random.default_rng(0)
    n = 6
    corpus = pl.DataFrame({"instance_id": [f"i{k}" for k in range(n)], "inference": [f"text {k}" for k in range(n)],
                           "split": ["val"] * n})  # fmt: skip
    unit = lambda m: m / np.linalg.norm(m, axis=1, keepdims=True)  # noqa: E731
    emb = DualEmbeddings(corpus["instance_id"].to_list(), unit(rng.normal(size=(n, 8))).astype(np.float32),
                         unit(rng.normal(size=(n, 8))).astype(np.float32))  # fmt: skip
    pool = corpus.select("instance_id", "inference")
    with pytest.raises(EmptyError) as err:
        build_sets(corpus, pool, emb, unit(rng.normal(size=(n, 8))), ComparisonConfig(), progress=False)
    assert "no comparison set" in str(err.value) and "comparison.min_candidates = 20" in str(err.value)
    assert build_sets(corpus, pool, emb, unit(rng.normal(size=(n, 8))), ComparisonConfig(), progress=False,
                      on_empty="skip").is_empty()  # fmt: skip
    tried("a comparison pool too small for one set", "stopped with a message: how far from a set, which keys to change")


def test_no_ok_video_stops_at_the_first_step_after_acquisition():
    from squidflow.frames.extract import shard_videos

    manifest = pl.DataFrame({"video_id": ["a", "b", "c"], "status": ["failed", "failed", "unavailable"]})
    with pytest.raises(EmptyError) as err:
        shard_videos(manifest, 0, 2)
    assert "no video is ok (3 listed: 2 failed, 1 unavailable)" in str(err.value)
    assert "results/videos/download_report.md" in str(err.value)
    tried("every download failed (library)", "stopped with a message: at frame extraction, download_report.md named")


# ====================================== 4. files people open =========================================================
def test_the_one_csv_writer_neutralises_formulas_and_keeps_numbers(tmp_path):
    df = pl.DataFrame({"text": [hostile("c", s) for s in STARTS], "x": [-0.5, 1.0, -2.0, 3.0, 4.0, -1e-3]})
    write_csv(df, tmp_path / "h.csv")
    assert raw_payloads(tmp_path / "h.csv") == []
    back = read_csv_strings(tmp_path / "h.csv")
    assert back["x"].to_list()[0] == "-0.5" and back["text"].to_list()[0].startswith("'=HYPERLINK")
    tried("formula cells in a CSV for a spreadsheet", "neutralised: numbers kept as numbers")


def test_markdown_escapes_annotator_ids_and_report_text(tmp_path):
    bad = hostile("md", "@")
    table = pl.DataFrame({"variant": ["A"], "spearman": [0.5], "alpha": [0.5], "kappa_3": [0.4], "kappa_4": [0.3],
                          "kappa_5": [0.2], "n_items": [3]})  # fmt: skip
    md = table7_markdown(table, source="mturk", pooling="wide", excluded=[bad, "ok_worker"])
    (tmp_path / "t.md").write_text(md)
    assert raw_payloads(tmp_path / "t.md") == [] and "ok_worker" in md and md_escape(bad) in md
    from squidflow.videos.manifest import download_report

    manifest = pl.DataFrame({"video_id": ["v1"], "event": [bad], "source": ["urls"], "status": ["failed"],
                             "error": [bad + "\n# heading"], "attempts": [1], "reason": ["http"],
                             "notes": [[bad]]})  # fmt: skip
    (tmp_path / "d.md").write_text(download_report(manifest, [bad]))
    assert raw_payloads(tmp_path / "d.md") == []
    tried("hostile annotator ids, events, errors and notes in Markdown", "escaped: every cell and list item")


# ====================================== 5. errors a person can act on ================================================
HOOK_SCRIPT = """
import errno, sys
from types import SimpleNamespace
from squidflow.runtime.logs import setup
setup(SimpleNamespace(log=[sys.argv[1]], rule="demo_rule", output=["results/frames/shard0.parquet"]))
kind = sys.argv[2]
if kind == "permission":
    raise PermissionError(errno.EACCES, "Permission denied", "results/videos/videos.parquet")
if kind == "full":
    raise OSError(errno.ENOSPC, "No space left on device")  # as from write(): no file name, the job's output named
raise ZeroDivisionError("a bug")
"""


@pytest.mark.parametrize(
    ("kind", "needles"),
    [
        ("permission", ["rule demo_rule: cannot write results/videos/videos.parquet: permission denied", "chmod"]),
        ("full", ["cannot write results/frames/shard0.parquet: no space left on device", "rerun the same command"]),
        ("bug", ["rule demo_rule failed with a bug, ZeroDivisionError: a bug (traceback in"]),
    ],
)
def test_a_failing_job_shows_one_line_and_keeps_the_traceback_in_its_log(tmp_path, kind, needles):
    log = tmp_path / "logs" / "demo_rule.log"
    res = subprocess.run([sys.executable, "-c", HOOK_SCRIPT, str(log), kind], capture_output=True, text=True)
    assert res.returncode == 1
    shown = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(shown) == 1 and TRACEBACK not in res.stderr, res.stderr
    for needle in needles:
        assert needle in shown[0], shown[0]
    assert TRACEBACK in log.read_text()
    tried(
        f"a job that fails with {kind}",
        "stopped with a message: one line on the console, the traceback in the job's log",
    )


FULL_LOG_SCRIPT = """
import logging, sys
from types import SimpleNamespace
from squidflow.runtime.logs import setup
log = setup(SimpleNamespace(log=[sys.argv[1]], rule="demo_rule", output=[sys.argv[2]]))
log.info("starting the job")
print("a progress line", file=sys.stderr)
log.warning("half way")
open(sys.argv[2], "w").write("done")
if sys.argv[3:] == ["bug"]:
    raise ZeroDivisionError("a bug")
"""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full to stand for a full disk")
def test_a_log_that_cannot_be_written_is_said_once_and_the_job_goes_on(tmp_path):
    """Issue 31: a full disk under logs/ left an empty log and no word of it. Here the log is /dev/full (every write
    fails with ENOSPC): one warning names the log and the error, the log's lines reach the console, the job's output
    is written."""
    log = tmp_path / "logs" / "demo_rule.log"
    log.parent.mkdir(parents=True)
    log.symlink_to("/dev/full")
    output = tmp_path / "out.txt"
    res = subprocess.run([sys.executable, "-c", FULL_LOG_SCRIPT, str(log), str(output)], capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert output.read_text() == "done"
    warnings = [line for line in res.stderr.splitlines() if "cannot write the log" in line]
    assert warnings == [f"squidflow warning: cannot write the log {log} (No space left on device); this job's log "
                        "goes to the console from here"], res.stderr  # fmt: skip
    assert "starting the job" in res.stderr and "a progress line" in res.stderr and "half way" in res.stderr
    assert "Logging error" not in res.stderr and TRACEBACK not in res.stderr, res.stderr
    res = subprocess.run([sys.executable, "-c", FULL_LOG_SCRIPT, str(log), str(output), "bug"], capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert res.returncode == 1 and TRACEBACK in res.stderr  # the traceback has nowhere else to go
    errors = [line for line in res.stderr.splitlines() if "failed with a bug" in line]
    assert errors == ["squidflow error: rule demo_rule failed with a bug, ZeroDivisionError: a bug (traceback above: "
                      "its log could not be written). Please report it with that traceback."], res.stderr  # fmt: skip
    tried(
        "a job whose log is on a full disk", "warned: one line naming the log and the error; the job's outputs written"
    )
