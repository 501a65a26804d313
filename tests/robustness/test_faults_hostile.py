"""Fault injection, part 2: hostile data stays inert (issue #31). Each case is an attacker's input that squidflow 0.3.0
let through — a payload live in the report, a file copied into it, a file written outside the run folder, a secret
echoed, the machine exhausted, a reader's traceback — and what must hold now: the input refused with its file and
row named, nothing written outside, no secret in any file or log. The session summary (tests/conftest.py) counts
these cases with the rest of the fault suite. Three probes so far: issue 31 (sections 1-7), issue 44 (section 8) and
issue 57 (section 9: no rater identity in anything published, `init`, a licence link, Parquet and config bombs,
links out of a local root, MTurk's escaping, formulas: 11 cases in 15 tests, 18 inputs tried).
"""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest
from helpers.faults import ROOT, TRACEBACK, tried, write_config

from squidflow.errors import EmptyError, InputError, UserError

CLI = str(Path(sys.executable).with_name("squidflow"))
SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- sqf-secret-material"


def files_under(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*")} if folder.exists() else set()


# Every path an attack below aims at outside its run folder is named sqf-* (or outside/x.png, y.png): after the
# module, `find` looks for any such name made since it started, over the folders those paths would reach (/tmp,
# pytest's temporary folders, the clone's parent, the home folder). Acceptance of issue 31.
ATTACK_NAMES = ["sqf-*", "outside", "x.png", "y.png"]


def written_since(marker: Path, roots: list[Path], depth: int = 4) -> list[str]:
    """Paths named like an attack's target, made after `marker`, under `roots` (`find -newer`)."""
    names = [arg for name in ATTACK_NAMES for arg in ("-o", "-name", name)][1:]
    found = []
    for root in dict.fromkeys(r.resolve() for r in roots if r.exists()):
        res = subprocess.run(["find", str(root), "-xdev", "-maxdepth", str(depth), "-newer", str(marker), "(", *names,
                              ")", "-print"], capture_output=True, text=True, timeout=300)  # fmt: skip
        found += res.stdout.split()
    return sorted(set(found))


@pytest.fixture(scope="module", autouse=True)
def nothing_written_outside(tmp_path_factory):
    marker = tmp_path_factory.mktemp("find_marker") / "started"
    marker.touch()
    time.sleep(0.05)  # a file made in the same clock tick as the marker is not -newer than it
    yield
    base = tmp_path_factory.getbasetemp()
    new = written_since(marker, [Path("/tmp"), base.parent, ROOT.parent, Path.home()])
    assert not new, f"written outside the run folders by the hostile cases: {new}"
    tried(
        "every hostile case above (find over /tmp, the temporary folders, the clone's parent, home)",
        "nothing written outside: no attack's target made since the module started",
    )


# ====================================== 1. names checked where they enter ============================================
HOSTILE_EVENTS = {
    "script": "<script>alert(1)</script>",
    "absolute": "/tmp/sqf-hostile-abs/x",
    "parent": "../../../../sqf-hostile-up/x",
    "nul": "par\x00ade",
    "newline": "par\nade",
    "long": "e" * 300,
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_EVENTS))
def test_a_hostile_event_in_a_url_list_is_refused_naming_file_and_line(tmp_path, kind):
    from squidflow.videos.sources import list_candidates

    event = HOSTILE_EVENTS[kind]
    path = tmp_path / "urls.jsonl"  # JSON Lines carries a NUL and a newline as they are
    rows = [{"url": "https://a.example/1.mp4", "event": "parade"}, {"url": "https://a.example/2.mp4", "event": event}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InputError) as err:
        list_candidates([{"type": "urls", "path": str(path)}])
    msg = str(err.value)
    assert f"{path} line 2" in msg and "event" in msg and len(msg) < 600, msg
    tried(f"an event id that is {kind} in a URL list", "stopped with a message: file and line named, before any job")


def test_a_hostile_event_folder_is_refused_naming_the_folder(tmp_path):
    from squidflow.videos.sources import list_candidates

    (tmp_path / "videos" / "<img src=x onerror=alert(1)>").mkdir(parents=True)
    (tmp_path / "videos" / "<img src=x onerror=alert(1)>" / "a.mp4").write_bytes(b"\0")
    with pytest.raises(InputError, match=r"local file .*a\.mp4: event '<img src=x"):
        list_candidates([{"type": "local", "root": str(tmp_path / "videos")}])
    tried("an event folder named with markup", "stopped with a message: the file named")


@pytest.mark.parametrize("key", ["'<script>alert(1)</script>'", "'../../x'", "'" + "e" * 300 + "'"])
def test_a_hostile_event_key_in_the_config_is_refused_by_check_config(tmp_path, key):
    conf = write_config(tmp_path, f"events:\n  {key}: {{prompt: a parade}}\n")
    res = subprocess.run([CLI, "check-config", str(ROOT / "config" / "config.yaml"), str(conf)], capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    out = res.stdout + res.stderr
    assert res.returncode == 2 and "events" in out and TRACEBACK not in out and len(out) < 2000, out
    tried("a hostile event id as a config key", "stopped with a message: key named, value cut short")


def test_contact_sheets_never_write_outside_their_folder(tmp_path):
    from squidflow.frames.figures import contact_sheets

    folder, outside = tmp_path / "results" / "figures" / "sheets", tmp_path / "outside"
    for event in ["../../../outside/x", str(outside / "y")]:
        before = files_under(tmp_path)
        with pytest.raises(InputError, match="outside"):
            contact_sheets(pl.DataFrame({"event": [event]}), folder)
        new = files_under(tmp_path) - before
        assert all(p.is_relative_to(tmp_path / "results") and p.is_dir() for p in new), new
        assert not outside.exists()
    tried("an event that is a path (../.., absolute) reaching the contact sheets", "refused: nothing written outside")


def test_a_long_video_id_is_shortened_not_failed():
    from squidflow.videos.sources import MAX_ID, safe_video_id

    vid = safe_video_id("v" * 300)
    assert len(vid) <= MAX_ID and vid != safe_video_id("v" * 299)
    tried("a 300-character video id", "kept apart: shortened to a slug and a hash")


@pytest.mark.parametrize("name", ["../x", "/etc/passwd", "a/../../b", "", "a\x00b", "..", "."])
def test_the_floor_helper_keeps_paths_inside(tmp_path, name):
    from squidflow.contracts.io import inside

    with pytest.raises(InputError):
        inside(tmp_path / "f", name)
    assert inside(tmp_path / "f", "ok.png") == (tmp_path / "f" / "ok.png").resolve()
    tried(f"a data-built path {name!r}", "refused: the helper names the folder")


# ====================================== 2. the report inlines only the run's files ===================================
def test_the_reports_script_data_cannot_close_its_tag():
    """Issue 31: `snakemake --report` embeds the jobs' params (an event's prompt from the config) as JSON in <script>
    tags with `</` as it is. The workflow wraps Snakemake's renderers (squidflow.report.script_data): every `<` is
    written `\\u003c`, the same JSON to the page. tests/e2e/test_report_browser.py opens such a report in Chromium."""
    from snakemake.report.html_reporter import data

    from squidflow.report.script_data import RENDERERS, escape_report_scripts

    payload = "</script><script>alert(1)</script>"
    assert escape_report_scripts() == list(RENDERERS) and escape_report_scripts() == list(RENDERERS)  # idempotent
    out = data.render_runtimes([{"rule": payload, "runtime": 1.0}])
    assert "<" not in out and json.loads(out)["data"]["values"][0]["rule"] == payload
    tried("markup in a job's params, embedded by the Snakemake report", "inert: the JSON written with `<` escaped")


@pytest.mark.parametrize("where", ["absolute", "parent", "file-url"])
def test_a_task_page_inlines_no_file_from_outside_results(tmp_path, where):
    from squidflow.report.pages import self_contained

    key = tmp_path / "home" / "id_ed25519"
    key.parent.mkdir()
    key.write_text(SECRET)
    results = tmp_path / "work" / "results"
    (results / "annotation").mkdir(parents=True)
    src = {"absolute": str(key), "parent": "../../../home/id_ed25519", "file-url": f"file://{key}"}[where]
    page = f'<img src="{src}" alt="sherlock image">'
    out, missing, refused = self_contained(page, results / "annotation", root=results)
    import base64

    assert SECRET not in out and base64.b64encode(SECRET.encode()).decode()[:20] not in out
    assert (
        refused == [src]
        and missing == []
        and "not inlined" in base64.b64decode(out.split("base64,")[1].split('"')[0]).decode()
    )
    tried(f"a Sherlock image url that is a local file ({where})", "refused: not inlined, named in the log")


def test_the_task_page_rule_logs_what_it_refused(tmp_path):
    script = ROOT / "scripts" / "report_task_page.py"
    (tmp_path / "results" / "annotation").mkdir(parents=True)
    page = tmp_path / "results" / "annotation" / "comparison_hits.html"
    page.write_text('<img src="/etc/hostname">')
    out, log = tmp_path / "results" / "report" / "page.html", tmp_path / "logs" / "report_task_page.log"
    code = ("from types import SimpleNamespace as S; "
            f"snakemake = S(input=S(page={str(page)!r}), output=[{str(out)!r}], log=[{str(log)!r}], rule='report_task_page');"
            f"exec(open({str(script)!r}).read())")  # fmt: skip
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "outside results/; not inlined" in log.read_text() and "/etc/hostname" in log.read_text()
    tried(
        "a task page naming /etc/hostname, through the rule's script", "refused: a tile in the page, the log names it"
    )


def test_report_labels_and_captions_take_only_constrained_wildcards():
    """What reaches the Snakemake report's embedded results JSON (labels, file names) from data is a wildcard; each
    such wildcard is constrained to characters that cannot close a <script> tag or start markup."""
    import re

    rules = "\n".join(p.read_text() for p in (ROOT / "workflow" / "rules").glob("*.smk"))
    used = set(re.findall(r'labels=\{[^}]*?"\{(\w+)\}"', rules, re.S))
    captions = "\n".join(p.read_text() for p in (ROOT / "workflow" / "report").rglob("*.rst"))
    used |= set(re.findall(r"snakemake\.wildcards\.(\w+)", captions))
    constraints = dict(
        re.findall(r'^\s+(\w+)=r?"([^"]+)",', rules + (ROOT / "workflow/rules/common.smk").read_text(), re.M)
    )
    assert "event" in used
    for name in used:
        assert name in constraints, f"wildcard {name} reaches the report without a constraint"
        for bad in ("</script>", "<img", "a/b", "a\nb", "&lt;"):
            assert not re.fullmatch(constraints[name], bad), (name, constraints[name], bad)
    tried("markup in a report label or caption (via a wildcard)", "refused: every such wildcard constrained")


# ====================================== 3. commands write only under their folder; secrets redacted ==================
def _pull(tmp_path: Path, record: dict, sdk: str | None = None):
    from squidflow.judgments.label_studio.server import pull

    out = tmp_path / "ls"
    out.mkdir(exist_ok=True)
    (out / "projects.json").write_text(json.dumps(record))
    return pull(out, out / "exports", {"url": "http://127.0.0.1:9", "sdk_python": sdk or sys.executable})


@pytest.mark.parametrize("projects", [{"../../../sqf-pulled": 1}, {"/tmp/sqf-pulled-abs": 1}, {"A": "1; rm -rf /"},
                                      {"A": [1]}], ids=["parent", "absolute", "string-id", "list-id"])  # fmt: skip
def test_label_studio_pull_takes_only_known_tasks_and_integer_ids(tmp_path, monkeypatch, projects):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "sqf-token-123456")
    before = files_under(tmp_path.parent)
    with pytest.raises(UserError) as err:
        _pull(tmp_path, {"url": "http://127.0.0.1:9", "projects": projects})
    assert "projects.json" in str(err.value) and TRACEBACK not in str(err.value)
    assert not Path("/tmp/sqf-pulled-abs.json").exists()
    assert {p for p in files_under(tmp_path.parent) - before if not p.is_relative_to(tmp_path)} == set()
    tried(
        f"a projects.json key or id that is {list(projects.items())[0]!r}",
        "stopped with a message: file named, nothing written",
    )


def test_a_server_error_echoing_the_token_is_shown_redacted(tmp_path, monkeypatch):
    token = "sqf-token-abcdef123456"
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", token)
    fake = tmp_path / "fake-sdk-python"
    fake.write_text("#!/bin/sh\necho '{\"error\": \"401 Unauthorized: request headers {Authorization: Token '"
                    "\"$LABEL_STUDIO_API_KEY\"'} via http://bob:hunter2@proxy.example:3128\"}'\nexit 1\n")  # fmt: skip
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    from squidflow.judgments.label_studio.server import LabelStudioError

    with pytest.raises(LabelStudioError) as err:
        _pull(tmp_path, {"url": "http://127.0.0.1:9", "projects": {"A": 1}}, sdk=str(fake))
    msg = str(err.value)
    assert token not in msg and "hunter2" not in msg and "Token ***" in msg and "bob:***@proxy" in msg, msg
    tried("a Label Studio error body that echoes the API token and a proxy password", "redacted: *** in the message")


def test_a_proxy_password_reaches_no_file_and_no_log(tmp_path, monkeypatch):
    from squidflow.fetch import PROXY_ENV
    from squidflow.report.summary import write_run_summary
    from squidflow.runtime.logs import setup
    from squidflow.videos.download import DownloadOptions

    proxy = "http://sqfuser:sqf-proxy-pw@proxy.example:3128"
    monkeypatch.setenv(PROXY_ENV, proxy)
    settings = tmp_path / "results" / "videos" / "download_settings.json"
    log = tmp_path / "logs" / "download_settings" / "download_settings.log"
    code = ("from types import SimpleNamespace as S; "
            f"snakemake = S(output=[{str(settings)!r}], log=[{str(log)!r}], rule='download_settings', "
            f"params=S(download={{'proxy': {proxy!r}, 'retries': 1}})); "
            f"exec(open({str(ROOT / 'scripts' / 'download_settings.py')!r}).read())")  # fmt: skip
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    written = json.loads(settings.read_text())
    assert written["proxy"] == "http://sqfuser:***@proxy.example:3128" and "sqf-proxy-pw" not in log.read_text()
    assert DownloadOptions.from_config(written).proxy == proxy  # the download job gets it back from its environment
    summary = tmp_path / "results" / "report" / "run_summary.html"
    write_run_summary(summary, configfiles=[proxy], stages=["videos"], metadata_dir=tmp_path / "none")
    assert "sqf-proxy-pw" not in summary.read_text() and "sqfuser:***@" in summary.read_text()
    job_log = tmp_path / "logs" / "any.log"
    logger = setup(SimpleNamespace(log=[str(job_log)], rule="any", output=[]))
    logger.warning("retrying through %s", proxy)
    sys.stderr = sys.__stderr__
    assert "sqf-proxy-pw" not in job_log.read_text() and "sqfuser:***@" in job_log.read_text()
    tried("a proxy password in download.proxy", "redacted: download_settings.json, the logs and the run summary")


@pytest.mark.slow  # runs Snakemake jobs
def test_a_proxy_password_reaches_no_snakemake_record(tmp_path):
    """Snakemake records a job's params in .snakemake/metadata (and a params change in its log): the workflow passes
    the proxy redacted and the password in the jobs' environment; the run's config record is redacted too."""
    from helpers.faults import TINY, run, snakemake_args

    conf = write_config(tmp_path, TINY + 'download:\n  proxy: "http://sqfuser:sqf-proxy-pw@proxy.example:3128"\n')
    res = run([*snakemake_args(tmp_path, conf), "results/videos/download_settings.json"], timeout=300)
    assert res.returncode == 0, res.stdout[-3000:]
    leaked = [p for p in tmp_path.rglob("*") if p.is_file() and p != conf and b"sqf-proxy-pw" in p.read_bytes()]
    assert not leaked and "sqf-proxy-pw" not in res.stdout, leaked
    assert any(p.is_file() for p in (tmp_path / ".snakemake" / "metadata").iterdir())  # the params were recorded
    assert "sqfuser:***@proxy.example" in (tmp_path / "results" / "run_config.yaml").read_text()
    tried(
        "a proxy password in download.proxy (workflow run)",
        "redacted: .snakemake/metadata, Snakemake's log and the run's config record",
    )


# ====================================== 4. a bounded config =========================================================
def alias_bomb(levels: int = 9) -> str:
    lines = ["x0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "events:\n  parade:\n    description:\n      " + "\n      ".join(lines) + "\n"


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("bomb", alias_bomb(), "aliases *name expanded"),
        ("huge-count", "demo:\n  videos_per_event: 99999999999999999999999999\n", "demo.videos_per_event"),
        ("nan", "demo:\n  seconds: .nan\n", "demo.seconds = nan is not allowed: it must be a finite number"),
        ("inf", "demo:\n  seconds: .inf\n", "demo.seconds = inf is not allowed"),
        ("long-value", "stages: ['" + "x" * 100000 + "']\n", "characters)"),
    ],
)
def test_a_config_that_would_exhaust_the_machine_stops_at_once(tmp_path, name, text, needle):
    conf = write_config(tmp_path, text)
    t0 = time.monotonic()
    res = subprocess.run([CLI, "check-config", str(ROOT / "config" / "config.yaml"), str(conf)], capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    out = res.stdout + res.stderr
    assert res.returncode == 2 and needle in out and TRACEBACK not in out, out[:3000]
    assert time.monotonic() - t0 < 30 and len(out) < 3000, (time.monotonic() - t0, len(out))
    tried(f"a config with {name}", "stopped with a message: at once, key named, value cut short")


def test_an_alias_bomb_in_a_configfile_stops_snakemake_before_validation(tmp_path):
    conf = write_config(tmp_path, alias_bomb())
    t0 = time.monotonic()
    res = subprocess.run([str(Path(sys.executable).with_name("snakemake")), "-n", "--directory", str(tmp_path),
                          "--configfile", str(ROOT / "config" / "config.yaml"), str(conf), "--cores", "1"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert res.returncode != 0 and "aliases *name expanded" in res.stdout + res.stderr, (res.stdout + res.stderr)[
        -2000:
    ]
    assert time.monotonic() - t0 < 120
    tried("a YAML alias bomb given to snakemake --configfile", "stopped with a message: before validation")


# ====================================== 5. named failures and bounded reads =========================================
def test_a_list_typed_label_column_names_the_predictions_file(tmp_path):
    from squidflow.evaluation.predictions import PredictionsError, read_predictions

    path = tmp_path / "preds.parquet"
    pl.DataFrame(
        {"video_id": ["v"], "frame_index": [1], "rank": [1], "label": [["a", "b"]], "score": [0.5]}
    ).write_parquet(path)
    with pytest.raises(PredictionsError, match=r"preds\.parquet: column\(s\) label \(List"):
        read_predictions(path, cache_dir=tmp_path)
    tried("a predictions file whose label column holds lists", "stopped with a message: file and column named")


@pytest.mark.parametrize("content", ["video_id,frame_index,rank,label,score\n", ""], ids=["header-only", "empty"])
def test_an_empty_predictions_file_is_an_error_naming_it(tmp_path, content):
    from squidflow.evaluation.predictions import PredictionsError, read_predictions

    path = tmp_path / "preds.csv"
    path.write_text(content)
    with pytest.raises(PredictionsError, match=r"preds\.csv: the predictions (file has no rows|CSV is empty)"):
        read_predictions(path, cache_dir=tmp_path)
    tried(
        f"a predictions file that is {'empty' if not content else 'a header only'}",
        "stopped with a message: file named",
    )


def test_a_deeply_nested_label_studio_export_names_the_file(tmp_path):
    from squidflow.judgments.ingest import JudgmentError
    from squidflow.judgments.label_studio.export import read_keyword_export

    path = tmp_path / "export.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(JudgmentError, match=r"export\.json: not a Label Studio JSON export \(nested too deeply\)"):
        read_keyword_export(path)
    tried("a Label Studio export nested 100,000 deep", "stopped with a message: file named")


def test_a_sherlock_zip_bomb_is_refused_fast_and_an_empty_file_says_so(tmp_path):
    from squidflow.comparison.corpus import read_sherlock_json

    bomb = tmp_path / "sherlock_bomb.json.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("sherlock.json", "[" + " " * 200_000_000 + "]")
    assert bomb.stat().st_size < 1_000_000
    t0 = time.monotonic()
    with pytest.raises(InputError, match=r"sherlock_bomb\.json\.zip: member sherlock\.json unpacks to 200,000,002"):
        read_sherlock_json(bomb)
    assert time.monotonic() - t0 < 5
    empty = tmp_path / "empty.json.zip"
    with zipfile.ZipFile(empty, "w") as zf:
        zf.writestr("sherlock.json", "[]")
    with pytest.raises(EmptyError, match=r"empty\.json\.zip: the Sherlock annotation file holds no instance"):
        read_sherlock_json(empty)
    tried(
        "a Sherlock zip that unpacks 1,000:1, and one with no instance", "stopped with a message: file and member named"
    )


def test_a_video_over_the_resolution_cap_is_refused_with_its_reason(tmp_path):
    import numpy as np

    from squidflow.frames.decode import MAX_PIXELS, decode_ranks
    from squidflow.frames.frame_table import ExtractionError, FrameTable
    from squidflow.videos.failures import classify

    table = FrameTable(path=str(tmp_path / "huge.mp4"), pts=np.arange(3), is_key=np.array([True, False, False]),
                       time_base=1, width=8192, height=8192, keyframe_ranks=np.array([0]))  # fmt: skip
    assert 8192 * 8192 > MAX_PIXELS
    with pytest.raises(ExtractionError) as err:
        decode_ranks(table, [0, 1])
    assert "huge.mp4: resolution 8192x8192 is above the decoding cap" in str(err.value)
    assert classify(str(err.value)) == "too_large"
    tried("an 8192x8192 video", "stopped with a message: before decoding, reason too_large")


def test_the_polars_batch_reader_gives_the_row_readers_judgments_and_problems(tmp_path):
    """Duplicates within a file and across files, a bad row sharing a judgment with a later good one, rejected
    assignments, formula-neutralised ids, Unicode digits: both readers agree on every judgment and every message."""
    from helpers.benchmarks import read_mturk_batch_rows

    from squidflow.judgments.ingest import read_mturk_batch

    head = ("HITId,WorkerId,AssignmentStatus,Input.event_prompt,Input.variant,Input.image_1_id,Input.image_2_id,"
            "Answer.rating_1,Answer.rating_2\n")  # fmt: skip
    a = head + ("H1,W1,Approved,parade,A,vidA_10,vidB_20,40,90\nH1,W2,Approved,parade,A,vidA_10,vidB_20,41,x\n"
                "H1,W2,Approved,parade,A,vidA_10,vidB_20,42,91\nH1,W1,Approved,parade,A,vidA_10,vidC_5,43,92\n"
                "H2,W3,Rejected,parade,B,vidA_10,vidB_20,1,2\nH2,W3,Approved,'=parade,b,'-vid_1,vid_\u0661,7,\u0662\n"
                "H2, W4 ,Approved,parade,C,vidA_10,vidB_20,1,2\nH2,W5,Approved,parade,B,vidQ_1,vidQ_01,1,2\n")  # fmt: skip
    b = head + "H1,W1,Approved,parade,A,vidA_10,vidD_1,50,60\nH9,W9,Approved,parade,A,vidE_1,,100,\n"
    (tmp_path / "a.csv").write_text(a)
    (tmp_path / "b.csv").write_text(b)
    results = []
    for read in (read_mturk_batch, read_mturk_batch_rows):
        seen: dict = {}
        results.append([read(tmp_path / f, on_error="skip", seen=seen) for f in ("a.csv", "b.csv")])
    for (df1, p1, r1), (df2, p2, r2) in zip(*results, strict=True):
        assert df1.equals(df2), (df1, df2)
        assert p1 == p2 and r1 == r2
    assert len(results[0][0][1]) >= 4 and len(results[0][1][1]) == 1
    tried(
        "the polars MTurk reader against the row reader (duplicates, bad rows, rejects)",
        "read correctly: the same judgments and messages",
    )


# ====================================== 6. the workflow, end to end ================================================
@pytest.mark.slow
def test_a_run_with_hostile_events_stops_at_listing_and_writes_nothing_outside(tmp_path):
    from helpers.faults import run, snakemake_args

    work = tmp_path / "run"
    work.mkdir()
    up = tmp_path / "sqf-up"  # where ../../../x from results/figures/frames_contact_sheets/ would land
    absolute = tmp_path / "sqf-abs"
    (work / "urls.csv").write_text(
        "url,event\nfile:///nonexistent/a.mp4,parade\n"
        f"file:///nonexistent/b.mp4,../../../../sqf-up/x\nfile:///nonexistent/c.mp4,{absolute}/x\n"
        'file:///nonexistent/d.mp4,"<script>alert(1)</script>"\n'
    )
    conf = write_config(work, "stages: [videos, frames]\nsources:\n  - {type: urls, path: urls.csv}\n")
    marker = tmp_path / "run" / "started"
    marker.touch()
    time.sleep(0.05)
    res = run(snakemake_args(work, conf), timeout=600)
    out = res.stdout
    assert res.returncode != 0 and "urls.csv line 3: event '../../../../sqf-up/x'" in out, out[-3000:]
    assert TRACEBACK not in out, out[-3000:]
    assert not up.exists() and not absolute.exists()
    assert {p.name for p in tmp_path.iterdir()} == {"run"}, list(tmp_path.iterdir())
    outside = subprocess.run(["find", str(tmp_path.parent), "-maxdepth", "3", "-newer", str(marker), "-not", "-path",
                              f"{work}*", "-not", "-path", str(tmp_path)], capture_output=True, text=True).stdout.split()  # fmt: skip
    assert not [p for p in outside if Path(p).name.startswith("sqf-") or "/sqf-" in p], outside
    tried(
        "a run whose URL list has path and markup events (workflow)",
        "stopped with a message: at listing, nothing written outside",
    )


# ====================================== 7. the suite itself =========================================================
def test_the_hostile_cases_are_counted_in_the_summary_and_none_can_be_skipped(tmp_path):
    """Acceptance of issue 31: the fault suite's summary line (tests/conftest.py) counts these cases, and no case here
    can be skipped (no skip, skipif, importorskip or xfail: a hostile case that cannot run fails)."""
    import ast

    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    skips = [node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
             and node.attr in {"skip", "skipif", "importorskip", "xfail"}]  # fmt: skip
    assert not skips, skips
    res = subprocess.run([sys.executable, "-m", "pytest", str(Path(__file__)), "-k", "floor_helper", "-q",
                          "-p", "no:cacheprovider", "--basetemp", str(tmp_path / "inner")],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert res.returncode == 0, res.stdout[-3000:]
    # 7 parametrized cases, and the module's find over the folders the attacks aim at
    assert (
        "fault-injection suite: 8 faults and bad inputs tried and handled as required (7 tests passed, 0 failed, "
        "0 skipped)" in res.stdout
    ), res.stdout[-3000:]


# ====================================== 8. the second pass (issue 44) ==============================================
# A probe of 0.4.0 as an attacker found these; each case rebuilds the probe's input in the test's own folder.
def _solid_png(path: Path, rgb: tuple[int, int, int]) -> Path:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (64, 48), rgb).save(path)
    return path


def _pixels_like(png: Path, rgb: tuple[int, int, int]) -> int:
    import numpy as np
    from PIL import Image

    with Image.open(png) as im:
        arr = np.asarray(im.convert("RGB")).astype(int)
    return int((np.abs(arr - np.array(rgb)).max(axis=2) < 40).sum())


@pytest.mark.parametrize("where", ["absolute", "parent", "file-url"])
def test_a_sherlock_image_that_is_a_local_file_is_not_drawn_into_the_comparison_figure(tmp_path, monkeypatch, where):
    """Issue 44 case 1: a Sherlock annotations file naming a local image (absolute, ../.., file://) drew the private
    image into results/figures/comparison_sets.png (and the report zip); a file:// URL was copied into downloads/.
    Only an http(s) URL is fetched, and a local image is drawn only from under the run's results/."""
    from squidflow.comparison.figures import sets_figure
    from squidflow.contracts import schemas

    secret = _solid_png(tmp_path / "home" / "u" / "private" / "secret.png", (255, 0, 255))
    run_dir = tmp_path / "run"
    _solid_png(run_dir / "results" / "frames" / "images" / "own.png", (0, 200, 200))
    monkeypatch.chdir(run_dir)
    src = {"absolute": str(secret), "parent": "../home/u/private/secret.png", "file-url": secret.as_uri()}[where]
    corpus, sets = [], []
    for q, image in enumerate([src, "results/frames/images/own.png"]):
        for j in range(2):
            corpus.append({"instance_id": f"q{q}-{j}", "image_id": f"q{q}", "image": image, "width": 64, "height": 48,
                           "bboxes": [], "clue": "c", "inference": f"i {q}-{j}", "split": "val", "confidence": None,
                           "chunk": 0})  # fmt: skip
        sets += [{"query_id": f"q{q}-0", "split": "val", "rank": r, "candidate_id": f"q{q}-{r - 1}", "inference": "i",
                  "plausibility": 0.5, "set_rank": 1} for r in (1, 2)]  # fmt: skip
    corpus_df = pl.DataFrame(corpus, schema=schemas.COMPARISON_CORPUS.columns)
    png, downloads = run_dir / "results" / "figures" / "comparison_sets.png", run_dir / "results" / "downloads"
    sets_figure(pl.DataFrame(sets), corpus_df, png, n_sets=2, cache_dir=downloads)
    assert _pixels_like(png, (255, 0, 255)) == 0, "the private image was drawn into the figure"
    assert _pixels_like(png, (0, 200, 200)) > 100, "the run's own image (under results/) is still drawn"
    assert not files_under(downloads), files_under(downloads)
    tried(
        f"a Sherlock image url that is a local file outside the run ({where})",
        "inert: not drawn into the comparison figure, not copied into downloads/",
    )


MTURK_PROMPT = "</script><script>alert(1)</script><img src=x onerror=alert(11)>"
MTURK_BASE = 'https://bucket.example/img" onerror="alert(12)" data-x="'


def test_a_prompt_with_markup_runs_no_script_on_the_mturk_workers_page(tmp_path):
    """Issue 44 case 2: MTurk fills each ${column} of hit_template.html with the batch CSV's value verbatim, so a
    prompt (or annotation.image_base_url) holding markup ran script on the page a worker opens (squidflow's own
    preview escapes, which hid it). Filled here exactly as MTurk does and opened in headless Chromium: no dialog."""
    import csv
    import re

    from helpers.browser import CHROMIUM, CHROMIUM_ARGS
    from playwright.sync_api import sync_playwright

    from squidflow.contracts import io
    from squidflow.judgments.annotation import annotation_tasks

    frames = pl.DataFrame({"event": ["parade"] * 6, "video_id": [f"v{i}" for i in range(6)], "frame_index": [1] * 6,
                           "image_id": [f"v{i}_1" for i in range(6)]})  # fmt: skip
    annotation = {"pairs": [], "images_per_hit": 6, "image_base_url": MTURK_BASE, "seed": 0}
    hits, template, _ = annotation_tasks(frames, annotation, {"parade": {"prompt": MTURK_PROMPT}}, variants=("A",))
    batch = tmp_path / "results" / "annotation" / "hits_A.csv"
    io.write_csv(hits["A"], batch)
    with open(batch, newline="", encoding="utf-8") as fh:
        row = next(csv.DictReader(fh))
    page = tmp_path / "results" / "annotation" / "mturk_page.html"
    page.write_text(re.sub(r"\$\{([A-Za-z0-9_]+)\}", lambda m: row.get(m.group(1), ""), template), encoding="utf-8")
    dialogs: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            tab = browser.new_page()
            tab.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            tab.goto(page.as_uri())
            tab.wait_for_timeout(1500)  # the images' onerror fires once their load fails
            shown_prompt = tab.inner_text("#event-prompt")
        finally:
            browser.close()
    assert not dialogs, dialogs
    assert shown_prompt == MTURK_PROMPT  # the worker reads the prompt as text
    tried(
        "a prompt and an image base URL with markup, filled into the MTurk page as MTurk does (Chromium)",
        "inert: no dialog, the prompt shown as text",
    )


@pytest.mark.parametrize(("text", "key"), [
    (f"annotation:\n  image_base_url: {json.dumps(MTURK_BASE)}\n", "annotation.image_base_url"),
], ids=["image_base_url"])  # fmt: skip
def test_markup_in_the_image_base_url_is_refused_by_check_config(tmp_path, text, key):
    """A prompt may hold markup (it is a display string, escaped wherever squidflow shows it, and written to the MTurk
    CSV as character references: the test above); a URL prefix never needs it."""
    conf = write_config(tmp_path, text)
    res = subprocess.run([CLI, "check-config", str(ROOT / "config" / "config.yaml"), str(conf)], capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    out = res.stdout + res.stderr
    assert res.returncode == 2 and f"{key} = " in out and "MTurk" in out and TRACEBACK not in out, out[-2000:]
    tried(f"markup in {key} (check-config)", "stopped with a message: key named, the fix said")


@pytest.fixture(scope="module")
def published_folder(tmp_path_factory) -> Path:
    """A small dataset published by squidflow (helpers.publish_run): the folder each publish-check case edits a copy of."""
    from helpers.publish_run import settings, small_run

    from squidflow.publish.dataset import publish

    tmp = tmp_path_factory.mktemp("hostile_publish")
    publish(tmp / "out" / "seed", small_run(tmp / "run"), settings())
    return tmp / "out" / "seed"


def _publish_check_env(home: Path) -> dict[str, str]:
    """Its own HOME (a ~/.cache/croissant download would show there) and the `datasets` cache in the test's folder,
    offline."""
    import os

    home.mkdir(parents=True, exist_ok=True)
    return {**os.environ, "HOME": str(home), "HF_DATASETS_CACHE": str(home / "hf"), "HF_HUB_OFFLINE": "1"}


def _publish_check(folder: Path, home: Path, *extra: str) -> subprocess.CompletedProcess:
    """`squidflow publish check FOLDER`, offline, with its own HOME."""
    return subprocess.run([CLI, "publish", "check", str(folder), *extra], capture_output=True, text=True, timeout=300,
                          env=_publish_check_env(home))  # fmt: skip


# Runs the command given after the file name as its own child and writes that child's peak RSS (kB) to the file. The
# measured process must not be a direct child of the pytest worker: Linux carries the forking process's peak RSS into
# the child's ru_maxrss (a worker at 2 GB reads 2 GB for /bin/true), so a small interpreter forks it.
_PEAK_OF_CHILD = (
    "import os, sys\n"
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    os.execv(sys.argv[2], sys.argv[2:])\n"
    "_, status, usage = os.wait4(pid, 0)\n"
    "open(sys.argv[1], 'w').write(str(usage.ru_maxrss))\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


def _publish_check_peak(folder: Path, home: Path, *extra: str) -> tuple[int, str, int]:
    """`squidflow publish check FOLDER`, its exit code, output and peak memory (kB) of that one process."""
    import sys

    peak = home / "publish_check.peak"
    home.mkdir(parents=True, exist_ok=True)
    res = subprocess.run([sys.executable, "-c", _PEAK_OF_CHILD, str(peak), CLI, "publish", "check", str(folder),
                          *extra], capture_output=True, text=True, timeout=300, env=_publish_check_env(home))  # fmt: skip
    return res.returncode, res.stdout + res.stderr, int(peak.read_text())


@pytest.mark.parametrize("where", ["loopback-url", "absolute", "parent"])
def test_publish_check_fetches_no_url_and_reads_no_file_outside_the_folder(tmp_path, published_folder, where):
    """Issue 44 case 3: on a folder someone hands you, a Croissant FileObject whose contentUrl was a loopback URL was
    fetched by mlcroissant (and cached under ~/.cache/croissant/); /etc/passwd or ../../../etc/passwd was opened and
    hashed. publish check names the field and follows none of them: the test's server counts zero requests."""
    import hashlib
    import shutil
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    requests: list[str] = []

    class Counting(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            requests.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"a\nsqf-remote\n")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Counting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    folder = tmp_path / "handed" / "seed"
    shutil.copytree(published_folder, folder)
    outside = tmp_path / "private" / "private.csv"
    outside.parent.mkdir()
    outside.write_text("a\nsqf-private\n")
    url = {"loopback-url": f"http://127.0.0.1:{server.server_port}/remote.csv", "absolute": str(outside),
           "parent": "../../private/private.csv"}[where]  # fmt: skip
    meta = json.loads((folder / "croissant.json").read_text())
    meta["distribution"].append({"@type": "cr:FileObject", "@id": "remote", "name": "remote", "contentUrl": url,
                                 "encodingFormat": "text/csv",
                                 "sha256": hashlib.sha256(outside.read_bytes()).hexdigest()})  # fmt: skip
    meta["recordSet"].append({"@type": "cr:RecordSet", "@id": "remote_rs", "name": "remote_rs", "field": [
        {"@type": "cr:Field", "@id": "remote_rs/a", "name": "a", "dataType": "sc:Text",
         "source": {"fileObject": {"@id": "remote"}, "extract": {"column": "a"}}}]})  # fmt: skip
    (folder / "croissant.json").write_text(json.dumps(meta))
    try:
        res = _publish_check(folder, tmp_path / "home")
    finally:
        server.shutdown()
    out = res.stdout + res.stderr
    assert requests == [], requests
    assert res.returncode == 1 and f"FileObject remote: contentUrl {url!r} is not a path inside the folder" in out, out
    assert "records and datasets loading not run" in out and TRACEBACK not in out, out
    assert not files_under(tmp_path / "home" / ".cache"), files_under(tmp_path / "home" / ".cache")
    tried(
        f"a Croissant contentUrl that is {where} (publish check)",
        "refused: the field named, nothing fetched or read outside the folder",
    )


def test_publish_check_refuses_a_shard_that_links_outside_the_folder(tmp_path, published_folder):
    """Issue 44 case 3: a listed shard that is a symbolic link to a file outside the folder (same bytes, same sha256)
    passed publish check, which then read it through the link."""
    import shutil

    folder = tmp_path / "handed" / "seed"
    shutil.copytree(published_folder, folder)
    shard = sorted((folder / "data").glob("*/*.parquet"))[0]
    moved = tmp_path / "elsewhere" / "shard.parquet"
    moved.parent.mkdir()
    shutil.move(shard, moved)
    shard.symlink_to(moved)
    res = _publish_check(folder, tmp_path / "home")
    out = res.stdout + res.stderr
    assert res.returncode == 1 and f"{shard}: a symbolic link to" in out and "outside the folder" in out, out
    assert "records and datasets loading not run" in out and TRACEBACK not in out, out
    tried(
        "a published shard that is a symbolic link out of the folder (publish check)",
        "refused: the link named, nothing read through it",
    )


def test_publish_check_says_in_its_help_that_it_never_fetches():
    res = subprocess.run([CLI, "publish", "check", "--help"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and "never fetches" in " ".join(res.stdout.split()), res.stdout
    assert "reads only files inside FOLDER" in " ".join(res.stdout.split()), res.stdout


@pytest.mark.parametrize(("meta", "key"), [
    ({"W1": {"Annotator_id": "W1-real-id", "WorkerId": "W1", "Age": "34"}}, "publish.annotators.meta.W1.Annotator_id"),
    ({"W2": {"Age": "34", "worker id": "A3XYZ"}}, "publish.annotators.meta.W2.worker id"),
    ({"W2": {"Age": "34", "Nickname": "W2"}}, "publish.annotators.meta.W2.Nickname"),
], ids=["probe", "worker-id-field", "id-as-value"])  # fmt: skip
def test_annotator_meta_that_names_the_person_is_refused_before_publishing(tmp_path, meta, key):
    """Issue 44 case 4: publish.annotators.meta {H-A-01: {Annotator_id: H-A-01-real-id, WorkerId: H-A-01, ...}} ended in
    lewidi/<name>_annotators_meta.json under the pseudonym, overwriting it, every field verbatim."""
    from helpers.publish_run import settings, small_run

    from squidflow.publish.dataset import publish

    target = tmp_path / "out" / "squidflow-demo"
    with pytest.raises(UserError) as err:
        publish(target, small_run(tmp_path / "run"), settings(annotators={"demographics": "", "meta": meta}))
    msg = str(err.value)
    assert msg.startswith(key + ":") and "pseudonym" in msg and "\n" not in msg, msg
    assert not target.exists() and [p.name for p in target.parent.iterdir()] == [], list(target.parent.iterdir())
    tried(
        f"publish.annotators.meta naming the annotator ({next(iter(meta.values()))})",
        "refused: before publishing, the key named, nothing written",
    )


def test_an_alias_bomb_in_a_card_header_stops_publish_check_at_once(tmp_path, published_folder):
    """Issue 44 case 5: a card whose YAML header is an alias bomb (9 levels of 9) took publish check --no-load 107 s
    and 4.3 GB, then MemoryError: card.read_header used yaml.safe_load unbounded."""
    import shutil

    folder = tmp_path / "handed" / "seed"
    shutil.copytree(published_folder, folder)
    bomb = alias_bomb().replace("events:\n  parade:\n    description:\n      ", "").replace("\n      ", "\n")
    (folder / "README.md").write_text(f"---\n{bomb}configs: *a8\n---\n# card\n", encoding="utf-8")
    t0 = time.monotonic()
    res = _publish_check(folder, tmp_path / "home", "--no-load")
    out = res.stdout + res.stderr
    assert res.returncode == 1 and "README.md: the YAML header does not parse" in out and "aliases" in out, out[-2000:]
    assert time.monotonic() - t0 < 60 and TRACEBACK not in out and len(out) < 5000, (time.monotonic() - t0, out[-2000:])
    tried("a YAML alias bomb in a dataset card's header (publish check)", "stopped with a message: at once, file named")


def _gzip_bomb(path: Path, line: bytes, size: int, head: bytes = b"") -> Path:
    import gzip

    block = line * (4 * 2**20 // len(line))
    with gzip.open(path, "wb", compresslevel=6) as fh:
        fh.write(head)
        for _ in range(size // len(block)):
            fh.write(block)
    return path


def test_a_gzip_bomb_of_predictions_stops_with_a_message(tmp_path):
    """Issue 44 case 5: a predictions .csv.gz of 18.7 MB unpacking to 4 GB ended `squidflow evaluate` in MemoryError;
    a gzip file now unpacks to at most squidflow.config.bounds.gzip_allowance bytes (50 times its size, at least 64 MB)."""
    from squidflow.evaluation.predictions import PredictionsError, read_predictions

    bomb = _gzip_bomb(tmp_path / "preds.csv.gz", b"vid_00,12,1,parading,0.5\n", 160 * 2**20,
                      head=b"video_id,frame_index,rank,label,score\n")  # fmt: skip
    assert bomb.stat().st_size * 50 < 64 * 2**20  # the allowance is the floor: 64 MB
    t0 = time.monotonic()
    with pytest.raises(PredictionsError, match=r"preds\.csv\.gz: unpacks to more than 67,108,864 bytes"):
        read_predictions(bomb, cache_dir=tmp_path)
    assert time.monotonic() - t0 < 60
    tried("a gzip bomb as a predictions .csv.gz", "stopped with a message: file named, unpacking bounded")


def test_a_gzip_bomb_of_guesswhat_games_stops_with_a_message(tmp_path):
    """Issue 44 case 5: a GuessWhat?! .jsonl.gz of 14 MB unpacking to 3 GB (one line without end) ended litmus.games
    in MemoryError."""
    from squidflow.litmus.games import GameFileError, read_games_file

    bomb = _gzip_bomb(tmp_path / "guesswhat.test.jsonl.gz", b" " * 64, 160 * 2**20)
    t0 = time.monotonic()
    with pytest.raises(GameFileError, match=r"guesswhat\.test\.jsonl\.gz: unpacks to more than 67,108,864 bytes"):
        read_games_file(bomb, "test")
    assert time.monotonic() - t0 < 60
    tried(
        "a gzip bomb as a GuessWhat?! .jsonl.gz (one endless line)",
        "stopped with a message: file named, unpacking bounded",
    )


def test_a_config_nested_100000_deep_stops_check_config_with_a_message(tmp_path):
    """Issue 44 case 8: a config nested 100,000 deep killed `squidflow check-config` with SIGSEGV (libyaml's composer
    recursed before the depth bound applied); the depth is now counted from the parser's events first."""
    conf = write_config(tmp_path, "demo: " + "[" * 100_000 + "]" * 100_000 + "\n")
    res = subprocess.run([CLI, "check-config", str(ROOT / "config" / "config.yaml"), str(conf)], capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    out = res.stdout + res.stderr
    assert res.returncode == 2 and f"{conf}: the YAML is nested deeper than 64 levels" in out, (
        res.returncode,
        out[-2000:],
    )
    assert TRACEBACK not in out and len(out) < 2000, out[-2000:]
    tried("a config nested 100,000 deep (check-config)", "stopped with a message: file named, no crash")


@pytest.mark.parametrize("part", ["croissant.json", "README.md"])
def test_a_published_file_nested_100000_deep_stops_publish_check_with_a_message(tmp_path, published_folder, part):
    """Issue 44 case 8: a croissant.json nested 100,000 deep gave a RecursionError traceback from publish check (a
    card header so nested would have crashed libyaml's composer)."""
    import shutil

    folder = tmp_path / "handed" / "seed"
    shutil.copytree(published_folder, folder)
    deep = "[" * 100_000 + "]" * 100_000
    (folder / part).write_text(deep if part == "croissant.json" else f"---\nconfigs: {deep}\n---\n# card\n")
    res = _publish_check(folder, tmp_path / "home", "--no-load")
    out = res.stdout + res.stderr
    needle = {
        "croissant.json": "croissant.json: JSON nested too deeply",
        "README.md": "README.md: the YAML header does not parse: the card's YAML header: the YAML stands for",
    }[part]
    assert res.returncode == 1 and needle in out and TRACEBACK not in out and len(out) < 5000, (
        res.returncode,
        out[-2000:],
    )
    tried(f"a published {part} nested 100,000 deep (publish check)", "stopped with a message: file named, no crash")


def test_a_shard_size_with_decimals_publishes_and_one_in_bytes_is_refused_by_check_config(tmp_path):
    """Issue 44 case 8: publish.shard_size "1.5GB" or "500B" passed check-config, then the publish job failed "with a
    bug" (ValueError: invalid literal for int()). Every size the schema lets through now parses; bytes are refused."""
    from helpers.publish_run import settings, small_run

    from squidflow.publish.dataset import publish
    from squidflow.publish.shards import shard_size

    assert shard_size("1.5GB") == 1_500_000_000 and shard_size("2 GiB") == 2 * 2**30
    publish(tmp_path / "out" / "squidflow-demo", small_run(tmp_path / "run"), settings(shard_size="1.5GB"))
    assert (tmp_path / "out" / "squidflow-demo" / "croissant.json").is_file()
    conf = write_config(tmp_path, 'publish:\n  shard_size: "500B"\n')
    res = subprocess.run([CLI, "check-config", str(ROOT / "config" / "config.yaml"), str(conf)], capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    out = res.stdout + res.stderr
    assert res.returncode == 2 and "publish.shard_size = '500B' is not allowed" in out and TRACEBACK not in out, out
    tried("publish.shard_size of 1.5GB and of 500B", "stopped with a message: 500B refused, key named; 1.5GB published")


def test_a_citation_and_a_description_stay_inert_in_the_card(tmp_path):
    """Issue 44 case 6: a publish.citation holding a closing ``` broke out of the card's code fence (a <script>, a
    `## Injected section` and a javascript: link live in README.md); a description starting with `#` became a
    heading. The card is rendered here as CommonMark with HTML on (markdown-it), as a Markdown viewer would."""
    from helpers.publish_run import settings, small_run
    from markdown_it import MarkdownIt

    from squidflow.publish.dataset import publish

    citation = ("@misc{x, title = {t}}\n```\n<script>alert(7)</script>\n\n## Injected section\n\n"
                "[click](javascript:alert(8))\n````\n```")  # fmt: skip
    description = "# Injected heading\n<script>alert(9)</script> [c](javascript:alert(8))"
    folder = tmp_path / "out" / "squidflow-demo"
    publish(folder, small_run(tmp_path / "run"), settings(citation=citation, description=description))
    text = (folder / "README.md").read_text(encoding="utf-8")
    page = MarkdownIt("commonmark").render(text.split("\n---\n", 1)[1])
    assert "<script>" not in page and 'href="javascript:' not in page, page
    assert "<h2>Injected section</h2>" not in page and "<h1>Injected heading</h1>" not in page, page
    assert "alert(7)" in page and "Injected heading" in page  # shown as text, not dropped
    tried(
        "a citation that closes the card's code fence and a description that starts with #",
        "inert: the card shows them as text (CommonMark rendering)",
    )


def test_a_javascript_url_for_the_dataset_is_refused(tmp_path):
    """Issue 44 case 6: publish.url: javascript:alert(10) was written to Croissant's `url` without a word."""
    from helpers.publish_run import settings, small_run

    from squidflow.config.validation import ConfigError
    from squidflow.publish.dataset import publish

    target = tmp_path / "out" / "squidflow-demo"
    with pytest.raises(ConfigError, match=r"^publish\.url = 'javascript:alert\(10\)' is not an http\(s\) address"):
        publish(target, small_run(tmp_path / "run"), settings(url="javascript:alert(10)"))
    assert not target.exists()
    conf = write_config(tmp_path, "publish:\n  url: 'javascript:alert(10)'\n")
    res = subprocess.run([CLI, "check-config", str(ROOT / "config" / "config.yaml"), str(conf)], capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    out = res.stdout + res.stderr
    assert res.returncode == 2 and "publish.url = 'javascript:alert(10)' is not allowed" in out, out
    tried(
        "publish.url that is a javascript: link", "stopped with a message: key named (check-config and the publish job)"
    )


def test_a_token_straddling_the_cut_of_a_server_error_is_not_shown_in_part(tmp_path, monkeypatch):
    """Issue 44 case 7: the Label Studio client cut a server's error body to 1,500 characters before the token was
    replaced, so a token straddling the cut was shown in part (20 of its 39 characters in the probe). The client
    runs here for real, with a stand-in label_studio_sdk whose server answers 401 echoing the token at the cut."""
    token = "sqf" + "0123456789abcdef" * 2 + "tokenend"  # 39 characters
    fake = tmp_path / "fake_sdk" / "label_studio_sdk"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "import os\n"
        "class ApiError(Exception):\n"
        "    def __init__(self, body):\n        super().__init__('401')\n        self.status_code, self.body = 401, body\n"
        "class LabelStudio:\n"
        "    def __init__(self, base_url, api_key, timeout):\n"
        "        raise ApiError({'detail': 'x' * 1468 + api_key + ' was refused'})\n")  # fmt: skip
    import os

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(fake.parent), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", token)
    from squidflow.judgments.label_studio.server import LabelStudioError

    with pytest.raises(LabelStudioError) as err:
        _pull(tmp_path, {"url": "http://127.0.0.1:9", "projects": {"A": 1}})
    msg = str(err.value)
    assert "HTTP 401" in msg and "xxxx" in msg, msg[:300]
    shown_parts = [token[i : i + 6] for i in range(len(token) - 5) if token[i : i + 6] in msg]
    assert not shown_parts, shown_parts
    tried(
        "a server error echoing the API token across the client's 1,500-character cut",
        "redacted: no part of the token in the message",
    )


@pytest.mark.parametrize("score", ["nan", "NaN", "inf", "-inf"])
def test_a_score_that_is_not_a_finite_number_stops_with_the_line_named(tmp_path, score):
    """Issue 44 case 10: a `NaN` score left the model out of `squidflow evaluate` with rc 0, while the README says a
    score that is not a number stops with the file and line."""
    from squidflow.evaluation.predictions import PredictionsError, read_predictions

    path = tmp_path / "preds.csv"
    path.write_text(f"video_id,frame_index,rank,label,score\nvid_a,1,1,parading,0.9\nvid_a,1,2,marching,{score}\n")
    with pytest.raises(PredictionsError, match=rf"preds\.csv: line 3: score '{score}' is not a finite number"):
        read_predictions(path, cache_dir=tmp_path)
    tried(f"a predictions score of {score}", "stopped with a message: file and line named")


def test_a_killed_publish_jobs_scratch_folder_is_removed_by_the_next_publish(tmp_path):
    """Issue 44 case 10: a publish job killed before its `finally` left its scratch folder `.<name>.<random>/` beside
    results/publish/<name>/ forever (a SIGKILL runs no cleanup); the next publish removes it."""
    import tempfile

    from helpers.publish_run import settings, small_run

    from squidflow.publish.dataset import publish

    target = tmp_path / "results" / "publish" / "squidflow-demo"
    target.parent.mkdir(parents=True)
    left = Path(tempfile.mkdtemp(prefix=".squidflow-demo.", dir=target.parent))  # as the killed job made it
    (left / "data").mkdir()
    (left / "data" / "part.parquet").write_bytes(b"PAR1")
    other = target.parent / ".other-dataset.abcd1234"  # another dataset's: not touched
    other.mkdir()
    publish(target, small_run(tmp_path / "run"), settings())
    assert sorted(p.name for p in target.parent.iterdir()) == sorted([".other-dataset.abcd1234", "squidflow-demo"])
    tried("the scratch folder of a killed publish job", "inert: removed by the next publish of that dataset")


def test_a_password_in_a_data_url_is_refused_by_check_config_and_redacted_in_a_download_error(tmp_path):
    """Issue 44 case 7: squid_e_release.dataset_csv: http://u:p@host/... reached an error message, .snakemake/metadata
    and run_config.yaml. Only download.proxy may carry a password (handed to the jobs in their environment); any
    other URL with one is refused when the config is read, and a failed download never quotes it."""
    from squidflow.fetch import fetch

    url = "http://sqfuser:sqf-url-pw@127.0.0.1:9/dataset.csv"
    conf = write_config(tmp_path, f"squid_e_release:\n  dataset_csv: '{url}'\n")
    res = subprocess.run([CLI, "check-config", str(ROOT / "config" / "config.yaml"), str(conf)], capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    out = res.stdout + res.stderr
    assert res.returncode == 2 and "squid_e_release.dataset_csv = 'http://sqfuser:***@127.0.0.1:9/dataset.csv' holds a " \
        "password" in out and "sqf-url-pw" not in out, out  # fmt: skip
    with pytest.raises(OSError) as err:
        fetch(url, tmp_path / "downloads", retries=1, timeout_s=5)
    assert "sqf-url-pw" not in str(err.value) and "sqfuser:***@127.0.0.1" in str(err.value), str(err.value)
    tried(
        "a password in squid_e_release.dataset_csv's URL", "stopped with a message: key named, the password never shown"
    )


@pytest.mark.slow  # runs a Snakemake job
def test_a_secret_on_the_command_line_reaches_no_snakemake_log(tmp_path):
    """Issue 44 case 7: `--config download='{"proxy": "http://u:p@..."}'` put the password into Snakemake's own log
    (.snakemake/log/*.log, the header's "Command:" line); issue 57 case 6: so did `--storage-s3-secret-key KEY`. The
    workflow redacts its command line once it is parsed (squidflow.runtime.command_line; docs/upstream.md, change 4)."""
    from helpers.faults import SNAKEMAKE, run

    res = run([SNAKEMAKE, "--directory", str(tmp_path), "--configfile", str(ROOT / "config" / "config.yaml"),
               "--config", 'download={"proxy": "http://sqfuser:sqf-cli-pw@proxy.example:3128"}',
               "--storage-s3-secret-key", "sqf-s3-secret-key", "--storage-s3-token=sqf-s3-token", "--cores", "1",
               "results/videos/download_settings.json"], timeout=600)  # fmt: skip
    assert res.returncode == 0, res.stdout[-3000:]
    logs = list((tmp_path / ".snakemake" / "log").glob("*.log"))
    header = logs[0].read_text() if logs else ""
    assert "Command:" in header and "sqfuser:***@proxy.example" in header, header[:2000]
    assert "--storage-s3-secret-key ***" in header and "--storage-s3-token=***" in header, header[:2000]
    for secret in ("sqf-cli-pw", "sqf-s3-secret-key", "sqf-s3-token"):
        leaked = [p for p in tmp_path.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
        assert not leaked and secret not in res.stdout, (secret, leaked)
    tried(
        "a proxy password (--config) and S3 storage secrets (--storage-s3-secret-key, --storage-s3-token) on the "
        "command line (workflow run)",
        "redacted: Snakemake's log header and every file of the run",
    )


# ====================================== 8. scale (issue 44, case 9) ==================================================
def _everyone_answers_every_hit(path: Path, *, hits: int, workers: int, slots: int = 6) -> None:
    """The probe's MTurk batch shape (1,000,000 assignments: 24 HITs, each answered by every one of 41,667 workers,
    at random), with `workers` workers."""
    import numpy as np

    rng = np.random.default_rng(9)
    cols = {"HITId": np.repeat([f"H{h:02d}" for h in range(hits)], workers),
            "WorkerId": np.tile([f"W{w:06d}" for w in range(workers)], hits),
            "AssignmentStatus": "Approved", "Input.event_prompt": "a parade", "Input.variant": "A"}  # fmt: skip
    for i in range(1, slots + 1):
        cols[f"Input.image_{i}_id"] = np.repeat([f"vid{h:02d}_{i}" for h in range(hits)], workers)
        cols[f"Answer.rating_{i}"] = rng.integers(0, 101, hits * workers)
    pl.DataFrame(cols).write_csv(path)


def test_a_crowd_batch_of_hundreds_of_answers_per_image_degrades_the_annotator_models_with_a_message(tmp_path):
    """Issue 44 case 9: 1,000,000 assignments (24 HITs x 41,667 workers) made rater_triage fail "with a bug" (crowd-kit
    MACE's `ValueError: Encountered all NA values`: its likelihood underflows with hundreds of answers per item) and
    crowd_aggregation run past 580 s (GLAD). 400 workers per HIT (57,600 answers) already trip MACE on 0.4.0's code;
    now both steps end in bounded time, the models skipped with the reason (judgments.crowd.max_answers)."""
    from squidflow.config.validation import fill_defaults, load_schema
    from squidflow.judgments.crowd import crowd_tables
    from squidflow.judgments.ingest import ingest
    from squidflow.judgments.quality import QualityConfig, annotator_report
    from squidflow.judgments.triage import TriageConfig, rater_triage
    from squidflow.statistics.intervals import IntervalConfig

    defaults = fill_defaults({}, load_schema(ROOT / "workflow/schemas/config.schema.yaml"))["judgments"]
    _everyone_answers_every_hit(tmp_path / "batch.csv", hits=24, workers=400)
    judgments, _ = ingest(source="mturk", batches=[(tmp_path / "batch.csv", 1)])
    assert judgments.height == 24 * 400 * 6
    report = annotator_report(judgments, QualityConfig())
    t0 = time.perf_counter()
    triage = rater_triage(judgments, report, TriageConfig.from_config(defaults["triage"]),
                          intervals=IntervalConfig(resamples=200), crowd=defaults["crowd"])  # fmt: skip
    seconds = time.perf_counter() - t0
    assert triage.height == 400 and set(triage["verdict"]) <= {"ok", "suspect", "careless"}
    skipped = " ".join(triage["skipped"][0])
    assert "57,600 answers are more than judgments.crowd.max_answers (50,000)" in skipped, skipped
    tables = crowd_tables(judgments, report, intervals=IntervalConfig(resamples=50), **defaults["crowd"])
    seconds_crowd = time.perf_counter() - t0 - seconds
    assert tables["table"]["aggregation"].to_list() == ["mean", "majority_vote"]
    assert "Not in the table: 57,600 answers are more than judgments.crowd.max_answers" in tables["markdown"]
    assert seconds + seconds_crowd < 120, (seconds, seconds_crowd)
    tried(
        "an MTurk batch of 24 HITs answered by 400 workers each (the 1,000,000-assignment shape)",
        f"degraded with a message: annotator models skipped (max_answers); triage {seconds:.0f} s, crowd "
        f"aggregation {seconds_crowd:.0f} s",
    )


@pytest.mark.slow  # ~9 s of Table 7 at thousands of workers: in `make test`, not in the `make test-fast` loop
def test_table7_of_hits_answered_by_thousands_of_workers_is_exact_and_bounded(tmp_path):
    """Issue 44 case 9, Table 7: the agreement rule's pairwise Spearman looped over every pair of annotator positions
    (one per assignment order of a HIT: 41,667 positions, 868 million pairs at the probe's shape), α built a
    ratings × ratings array per item, and the bootstrap a resamples × items × positions one. Now the point values
    come from sums over groups of positions (exact), and the intervals past a bound are left out with a sentence under
    the table, in bounded time. At 8,000 workers per HIT, 0.4.0's code makes 32 million spearmanr calls for the point value alone."""
    import numpy as np
    from helpers.ratings import rating_matrix

    from squidflow.judgments.agreement import krippendorff_alpha_interval
    from squidflow.judgments.ingest import ingest
    from squidflow.judgments.quality import QualityConfig, annotator_report
    from squidflow.judgments.tables import table7
    from squidflow.statistics.intervals import IntervalConfig

    _everyone_answers_every_hit(tmp_path / "batch.csv", hits=24, workers=8_000)
    judgments, _ = ingest(source="mturk", batches=[(tmp_path / "batch.csv", 1)])
    report = annotator_report(judgments, QualityConfig())
    t0 = time.perf_counter()
    table, md = table7(judgments, report, None, intervals=IntervalConfig(resamples=1000), on_empty="skip")
    seconds = time.perf_counter() - t0
    a = table.row(by_predicate=pl.col("variant") == "A", named=True)
    assert abs(a["spearman"]) < 0.01 and abs(a["alpha"]) < 0.01, a  # random answers: no agreement
    assert a["alpha"] == pytest.approx(krippendorff_alpha_interval(rating_matrix(judgments)), abs=1e-12)
    assert np.isnan(a["alpha_lo"]) and np.isnan(a["spearman_hi"])
    assert "Row(s) A have no intervals: ratings × resamples exceed 1,000,000,000" in md, md
    assert seconds < 300, seconds
    tried(
        "Table 7 of 24 HITs answered by 8,000 workers each (pairwise Spearman over 32 million position pairs)",
        f"exact values, intervals left out with a sentence under the table ({seconds:.0f} s)",
    )


def test_crowd_kit_mace_failing_on_many_answers_per_item_is_a_skipped_model_with_its_reason():
    """Issue 44 case 9, below max_answers: MACE's "Encountered all NA values" (400 answers per item) leaves MACE out
    with crowd-kit's words, and the triage's other signals and models stand."""
    import numpy as np
    import pandas as pd

    from squidflow.judgments.crowd import fit_or_skip

    rng = np.random.default_rng(0)
    answers = pd.DataFrame({"task": np.repeat(["t1", "t2"], 400), "worker": np.tile([f"w{i}" for i in range(400)], 2),
                            "label": rng.integers(0, 5, 800).astype(str)})  # fmt: skip
    fitted, why = fit_or_skip(answers, "mace", n_iter=5, mace_restarts=1)
    assert fitted is None and why.startswith("MACE: crowd-kit could not fit these answers (Encountered all NA values")
    assert "400 per item" in why
    tried("crowd-kit MACE on 400 answers per item", "degraded with a message: MACE skipped, naming crowd-kit's error")


def test_colluders_filling_hits_with_identical_random_answers_are_careless_not_ok(tmp_path):
    """Issue 44 case 10 (with issue 50): three accounts that take every assignment of the same HITs and give identical
    random answers agree perfectly with each other, so on 0.4.0's code each one's leave-one-out agreement was r = 1 and
    all three came out `ok` (only MACE saw them). Now the identical answers are a signal of their own: `careless`,
    with the partners named; the honest raters stay `ok`."""
    import numpy as np

    from squidflow.config.validation import fill_defaults, load_schema
    from squidflow.judgments.ingest import ingest
    from squidflow.judgments.quality import QualityConfig, annotator_report
    from squidflow.judgments.triage import TriageConfig, rater_triage
    from squidflow.statistics.intervals import IntervalConfig

    rng = np.random.default_rng(10)
    truth = rng.integers(0, 101, (24, 6))
    colluders, honest = ["C1", "C2", "C3"], [f"W{w}" for w in range(9)]
    rows = []
    for h in range(24):
        workers = colluders if h % 3 == 0 else [honest[(h + k) % 9] for k in range(3)]
        shared = rng.integers(0, 101, 6)  # the colluders' one random answer sheet for this HIT
        for w in workers:
            answers = shared if w in colluders else np.clip(truth[h] + rng.normal(0, 10, 6), 0, 100).round()
            rows.append({"HITId": f"H{h:02d}", "WorkerId": w, "AssignmentStatus": "Approved",
                         "Input.event_prompt": "a parade", "Input.variant": "A",
                         **{f"Input.image_{i + 1}_id": f"vid{h:02d}_{i}" for i in range(6)},
                         **{f"Answer.rating_{i + 1}": int(a) for i, a in enumerate(answers)}})  # fmt: skip
    pl.DataFrame(rows).write_csv(tmp_path / "batch.csv")
    judgments, _ = ingest(source="mturk", batches=[(tmp_path / "batch.csv", 1)])
    defaults = fill_defaults({}, load_schema(ROOT / "workflow/schemas/config.schema.yaml"))["judgments"]
    triage = rater_triage(judgments, annotator_report(judgments, QualityConfig()),
                          TriageConfig.from_config(defaults["triage"]), intervals=IntervalConfig(resamples=200),
                          crowd=defaults["crowd"])  # fmt: skip
    verdicts = dict(zip(triage["annotator"], triage["verdict"], strict=True))
    why = dict(zip(triage["annotator"], triage["reasons"].list.join("; "), strict=True))
    names = dict(zip(triage["annotator"], triage["pseudonym"], strict=True))
    for c in colluders:
        assert verdicts[c] == "careless" and "identical answers: 8 of their 8 HITs" in why[c], why[c]
        assert all(names[other] in why[c] for other in colluders if other != c), why[c]  # by pseudonym (issue 57)
    assert {verdicts[w] for w in honest} == {"ok"}, {w: why[w] for w in honest}
    tried(
        "three colluding accounts filling HITs with identical random answers",
        "flagged: careless, identical answers with the partners named; honest raters ok",
    )


# ====================================== issue 44 case 10: a licence that only mentions Creative Commons =============
@pytest.mark.parametrize(
    "stated",
    [
        "Standard YouTube License; NOT creative commons",
        "not cc-by",
        "Creative Commons? No: all rights reserved",
        "cc-by is what we do not grant",
    ],
)
def test_a_licence_that_only_mentions_creative_commons_is_not_one(tmp_path, stated):
    """A YouTube row whose licence text says "NOT creative commons" was read as Creative Commons by a substring match
    and its pixels embedded; the statement is now read as a whole (squidflow.vocabulary.licenses), so embed refuses it."""
    from helpers.publish_run import settings, small_run

    from squidflow.config.validation import ConfigError
    from squidflow.publish.dataset import publish
    from squidflow.vocabulary.licenses import cc_family

    assert cc_family(stated) is None
    run = small_run(tmp_path / "run")
    run.videos = run.videos.with_columns(pl.lit("youtube").alias("source"), pl.lit(stated).alias("license"))
    with pytest.raises(ConfigError, match="embed would copy the pixels of 2 videos that are not yours to share"):
        publish(tmp_path / "out" / "x", run, settings(images="embed"))
    assert not (tmp_path / "out" / "x").exists()
    # a whole Creative Commons statement still embeds
    run.videos = run.videos.with_columns(
        pl.lit("Creative Commons Attribution license (reuse allowed)").alias("license")
    )
    publish(tmp_path / "out" / "y", run, settings(images="embed"))
    assert (tmp_path / "out" / "y" / "croissant.json").exists()
    tried(
        f"a YouTube video whose licence reads {stated!r} (publish.images: embed)",
        "not Creative Commons: embed refuses its pixels, naming the video",
    )


# ====================================== 9. the third pass (issue 57) ================================================
# A probe of the main after 0.4 as an attacker found these; each case rebuilds the probe's input in the test's own folder.
PROBE_WORKER = "A9OTHERREALID88"  # an MTurk WorkerId
PROBE_EMAIL = "alice.realname@uni.example.edu"  # a Label Studio rater id


def _colluding_judgments(tmp_path: Path, colluders: list[str], honest: list[str]) -> pl.DataFrame:
    """An MTurk batch whose `colluders` take every assignment of a third of the HITs with one random answer sheet
    (the probe's shape), ingested."""
    import numpy as np

    from squidflow.judgments.ingest import ingest

    rng = np.random.default_rng(10)
    truth = rng.integers(0, 101, (24, 6))
    rows = []
    for h in range(24):
        workers = colluders if h % 3 == 0 else [honest[(h + k) % len(honest)] for k in range(3)]
        shared = rng.integers(0, 101, 6)
        for w in workers:
            answers = shared if w in colluders else np.clip(truth[h] + rng.normal(0, 10, 6), 0, 100).round()
            rows.append({"HITId": f"H{h:02d}", "WorkerId": w, "AssignmentStatus": "Approved",
                         "Input.event_prompt": "a parade", "Input.variant": "A",
                         **{f"Input.image_{i + 1}_id": f"vid{h:02d}_{i}" for i in range(6)},
                         **{f"Answer.rating_{i + 1}": int(a) for i, a in enumerate(answers)}})  # fmt: skip
    pl.DataFrame(rows).write_csv(tmp_path / "batch.csv")
    return ingest(source="mturk", batches=[(tmp_path / "batch.csv", 1)])[0]


def test_the_triage_names_partner_raters_by_pseudonym_in_every_table_people_read(tmp_path):
    """Issue 57 case 1: "identical answers: 12 of their 12 HITs answered image for image as A9OTHERREALID88 did" —
    the partner's raw id (an e-mail address with Label Studio) reached the published `excluded_because`, the card
    and the report's tables. The reasons now name partners Ann<k>; results/tables/ and the report show pseudonyms;
    results/judgments/rater_triage.parquet keeps the ids beside them, for the owner."""
    from squidflow.config.validation import fill_defaults, load_schema
    from squidflow.judgments.figures import annotator_figure
    from squidflow.judgments.pseudonyms import for_people, pseudonyms
    from squidflow.judgments.quality import QualityConfig, annotator_report
    from squidflow.judgments.triage import TriageConfig, exclusions, rater_triage, triage_markdown
    from squidflow.statistics.intervals import IntervalConfig

    colluders = [PROBE_WORKER, PROBE_EMAIL, "A1COLLUDERID042"]
    honest = [f"A{w}HONESTWORKER{w:02d}" for w in range(9)]
    judgments = _colluding_judgments(tmp_path, colluders, honest)
    defaults = fill_defaults({}, load_schema(ROOT / "workflow/schemas/config.schema.yaml"))["judgments"]
    report = annotator_report(judgments, QualityConfig())
    triage = rater_triage(judgments, report, TriageConfig.from_config(defaults["triage"]), policy="triage",
                          intervals=IntervalConfig(resamples=200), crowd=defaults["crowd"])  # fmt: skip
    names = pseudonyms(judgments["annotator"].to_list())
    raw = colluders + honest
    why = dict(zip(triage["annotator"], triage["reasons"].list.join("; "), strict=True))
    for c in colluders:
        partners = sorted(names[o] for o in colluders if o != c)
        assert f"image for image as {', '.join(partners)} did" in why[c] or all(p in why[c] for p in partners), why[c]
        assert not [r for r in raw if r in why[c]], why[c]
    assert set(triage["pseudonym"]) == set(names.values()) and set(triage["annotator"]) == set(raw)  # the owner's key
    shown = for_people(triage)
    people = [
        shown.with_columns(
            shown[c].list.join("; ") for c in ("rubric_flags", "reasons", "skipped", "rounds")
        ).write_csv(),
        triage_markdown(triage, policy="triage", source="mturk"),
        exclusions(triage, report).filter(pl.col("excluded"))["flags"].list.join("; ").str.join("\n").item(),
        " ".join(annotator_figure(judgments, report, tmp_path / "annotators.png")["annotator"].to_list()),
    ]
    leaks = [r for text in people for r in raw if r in text]
    assert not leaks, leaks
    assert "results/judgments/rater_triage.parquet" in people[1]  # says where the ids are
    tried(
        "colluding raters with an MTurk WorkerId and an e-mail address as ids (the probe's triage reasons)",
        "pseudonyms: reasons, results/tables/, the report's figure and exclusions name Ann<k>; ids kept locally",
    )


def _published_with(tmp_path: Path, flag: str, **rename) -> tuple[Path, object]:
    """The publish tests' small run, its raters renamed (W1 -> ...), W3 excluded with `flag` as its reason."""
    from helpers.publish_run import settings, small_run

    from squidflow.publish.dataset import publish

    run = small_run(tmp_path / "run")
    ids = {"W1": rename.get("W1", "W1"), "W2": rename.get("W2", "W2"), "W3": rename.get("W3", "W3")}
    run.judgments = run.judgments.with_columns(pl.col("annotator").replace(ids))
    run.annotator_report = run.annotator_report.with_columns(
        pl.col("annotator").replace(ids),
        pl.when(pl.col("excluded")).then(pl.lit([flag])).otherwise(pl.col("flags")).alias("flags"),
    )
    target = tmp_path / "results" / "publish" / "seed"
    return target, lambda: publish(target, run, settings())


def test_nothing_published_names_a_rater_and_publish_check_looks_for_ids(tmp_path):
    """Issue 57 case 1: the published judgments' `excluded_because` and the card's "Raters excluded" line carried the
    partner's raw id while Croissant said no worker id was published, and publish check passed. A reason naming a
    partner by pseudonym publishes; one naming the raw id (a triage made before) is refused by publish; publish check
    fails on a WorkerId- or e-mail-like string in any file, and on the run's own raw ids where they are at hand."""
    from squidflow.publish.dataset import PublishError

    rename = {"W1": PROBE_WORKER, "W2": PROBE_EMAIL, "W3": "A1COLLUDERID042"}
    target, publish = _published_with(tmp_path / "old", f"triage: identical answers: 2 of their 2 HITs answered "
                                      f"image for image as {PROBE_WORKER}, {PROBE_EMAIL} did", **rename)  # fmt: skip
    with pytest.raises(PublishError, match=rf"judgments\.excluded_because: {PROBE_WORKER}"):
        publish()
    assert not target.exists()

    target, publish = _published_with(tmp_path / "new", "triage: identical answers: 2 of their 2 HITs answered image "
                                      "for image as Ann2, Ann3 did", **rename)  # fmt: skip
    publish()
    every = b"".join(p.read_bytes() for p in target.rglob("*") if p.is_file())
    assert not [r for r in rename.values() if r.encode() in every]
    assert "as Ann2, Ann3 did" in (target / "README.md").read_text(encoding="utf-8")
    res = _publish_check(target, tmp_path / "home", "--no-load")
    assert "names a rater" not in res.stdout + res.stderr, (res.stdout + res.stderr)[-3000:]

    # a hand edit, or another tool's folder: a WorkerId, an e-mail, and (the run at hand) an id of neither shape
    edited = target / "lewidi" / "edited.json"
    for planted, kind in [(PROBE_WORKER, "WorkerId"), (PROBE_EMAIL, "e-mail"), ("rater-zed", "the run's raw id")]:
        if kind == "the run's raw id":
            judgments = tmp_path / "new" / "results" / "judgments" / "judgments.parquet"
            judgments.parent.mkdir(parents=True)
            pl.DataFrame({"annotator": ["rater-zed", "W9"]}).write_parquet(judgments)
        edited.write_text(json.dumps({"note": f"excluded: answered as {planted} did"}), encoding="utf-8")
        res = _publish_check(target, tmp_path / "home", "--no-load")
        out = res.stdout + res.stderr
        assert res.returncode == 1 and f"{edited}: names a rater by a platform id or an e-mail address ('{planted}')" \
            in out and TRACEBACK not in out, out[-3000:]  # fmt: skip
        tried(f"a published file naming a rater by {kind} (publish check)", "refused: the file and the id named")
    tried(
        "a triage reason naming the partner rater by raw id, to publish",
        "refused by publish (the column named); by pseudonym it publishes, and nothing published holds an id",
    )


PROBE_LICENSE_LINK = "https://ok.example/) <img src=x onerror=alert(26)> [l](javascript:alert(27)) (x"


def test_a_licence_link_with_markup_is_refused_and_a_good_one_is_escaped_in_the_card(tmp_path):
    """Issue 57 case 2: with `license: other`, publish.license_link reached the card's body raw (markdown-it rendered
    its `<img onerror>`) and Croissant's `license`. It must be an https address (check-config, and the publish job for
    a config that skipped it), and it is escaped wherever it is written."""
    from helpers.publish_run import settings, small_run
    from markdown_it import MarkdownIt

    from squidflow.config.validation import ConfigError
    from squidflow.publish.dataset import publish

    other = {"license": "other", "license_name": "my-licence-1.0"}
    run = small_run(tmp_path / "run")
    for link in (PROBE_LICENSE_LINK, "javascript:alert(27)", "http://plain.example/licence"):
        conf = write_config(tmp_path, "publish:\n  license: other\n  license_name: my-licence-1.0\n"
                            f"  license_link: {json.dumps(link)}\n")  # fmt: skip
        res = subprocess.run([CLI, "check-config", str(ROOT / "config" / "config.yaml"), str(conf)],
                             capture_output=True, text=True, timeout=120)  # fmt: skip
        out = res.stdout + res.stderr
        assert res.returncode == 2 and "publish.license_link" in out and TRACEBACK not in out, out[-2000:]
        target = tmp_path / "out" / "refused"
        with pytest.raises(ConfigError, match=r"^publish\.license_link = .* is not an https address"):
            publish(target, run, settings(**other, license_link=link))
        assert not target.exists()
    folder = tmp_path / "out" / "ok"  # a real address with Markdown's characters in it
    link = "https://licences.example/my_licence_(v1)*[draft]"
    publish(folder, run, settings(**other, license_link=link))
    text = (folder / "README.md").read_text(encoding="utf-8")
    page = MarkdownIt("commonmark").render(text.split("\n---\n", 1)[1])
    assert "<img" not in page and 'href="javascript:' not in page and "licences.example" in page, page
    assert json.loads((folder / "croissant.json").read_text())["license"] in (link, [link])
    tried("publish.license_link holding markup and a javascript: link (the probe's)", "refused: key named (check-config "
          "and the publish job); a good link escaped in the card")  # fmt: skip


@pytest.mark.parametrize("where", ["folder", "output"])
def test_squidflow_init_writes_no_key_from_a_folder_or_output_name(tmp_path, where):
    """Issue 57 case 3: a folder named `evil\\nreplace_other_config: true\\nretry_failed: true\\n#` put both keys into
    the config `squidflow init` wrote (its header comment quoted the folder raw) and check-config said it was valid.
    A name holding a line break is refused, naming it; nothing is written."""
    import yaml

    evil = "evil\nreplace_other_config: true\nretry_failed: true\n#"
    videos = tmp_path / (evil if where == "folder" else "videos")
    for event in ("parade", "wedding"):
        (videos / event).mkdir(parents=True)
        (videos / event / "a.mp4").write_bytes(b"\0")
    out = tmp_path / (evil + ".yaml" if where == "output" else "mine.yaml")
    res = subprocess.run([CLI, "init", str(videos), "--output", str(out), "--directory", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    msg = res.stdout + res.stderr
    assert res.returncode == 2 and "squidflow init: " in msg and repr(str(videos if where == "folder" else out))[
        :40] in msg and "rename it" in msg and TRACEBACK not in msg, msg  # fmt: skip
    assert not out.exists() and not list(tmp_path.glob("*.yaml")), list(tmp_path.iterdir())
    # an ordinary folder with a `#` and non-ASCII letters: written, and read back with only the keys init writes
    fine = tmp_path / "Konzert #2 – Übung"
    videos.rename(fine)
    res = subprocess.run([CLI, "init", str(fine), "--output", str(tmp_path / "fine.yaml"), "--directory",
                          str(tmp_path)], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    written = yaml.safe_load((tmp_path / "fine.yaml").read_text(encoding="utf-8"))
    assert "replace_other_config" not in written and "retry_failed" not in written
    assert written["sources"][0]["root"] == "Konzert #2 – Übung"
    tried(
        f"a {where} name with line breaks and config keys (squidflow init)", "refused: the name said, nothing written"
    )


@pytest.fixture(scope="module")
def parquet_bomb(tmp_path_factory) -> Path:
    """The probe's predictions Parquet: 400,000,000 dictionary-encoded rows in about 7 MB (100 row groups)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path_factory.mktemp("parquet_bomb") / "preds.parquet"
    n = 4_000_000
    zeros = pa.array(np.zeros(n, dtype=np.int32))
    values = {"video_id": pa.array(["vid_00"]), "frame_index": pa.array([12]), "rank": pa.array([1]),
              "label": pa.array(["parading"]), "score": pa.array([0.5])}  # fmt: skip
    table = pa.table({k: pa.DictionaryArray.from_arrays(zeros, v) for k, v in values.items()})
    with pq.ParquetWriter(path, table.schema) as writer:
        for _ in range(100):
            writer.write_table(table, row_group_size=n)
    assert pq.read_metadata(path).num_rows == 400_000_000 and path.stat().st_size < 10 * 2**20
    return path


@pytest.mark.slow  # its bomb takes ~16 s to write: in `make test`, not in the `make test-fast` loop
def test_a_parquet_decompression_bomb_of_predictions_stops_with_a_message(tmp_path, parquet_bomb):
    """Issue 57 case 4: `squidflow evaluate` on an 8.6 MB predictions Parquet of 400 M dictionary-encoded rows aborted
    ("memory allocation ... failed", SIGABRT) under a 4 GB cap. Its footer is checked before any row is read, with
    the gzip readers' ratio (squidflow.config.bounds.parquet_check); the command runs here under a 4 GB cap too."""
    import resource

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))

    from helpers.publish_run import small_run

    judgments = tmp_path / "judgments.parquet"
    small_run(tmp_path / "run").judgments.write_parquet(judgments)
    for given, named in [((str(parquet_bomb), "--judgments", str(judgments)), str(parquet_bomb)),
                         ((str(tmp_path / "ok.csv"), "--judgments", str(parquet_bomb)), str(parquet_bomb))]:  # fmt: skip
        t0 = time.monotonic()
        res = subprocess.run([CLI, "evaluate", *given, "--out", str(tmp_path / "eval")], capture_output=True,
                             text=True, timeout=300, preexec_fn=cap)  # fmt: skip
        out = res.stdout + res.stderr
        assert res.returncode == 2 and f"{named}: its 400,000,000 rows of 5 column(s)" in out, (
            res.returncode,
            out[-3000:],
        )
        assert "Parquet decompression bomb" in out and TRACEBACK not in out and time.monotonic() - t0 < 120, out[-3000:]
    tried("a Parquet decompression bomb as predictions and as judgments (squidflow evaluate, 4 GB cap)",
          "stopped with a message: file named, the bound said, before reading a row")  # fmt: skip


@pytest.mark.slow  # its bomb takes ~16 s to write: in `make test`, not in the `make test-fast` loop
def test_a_parquet_bomb_in_a_url_list_and_in_a_published_folder_is_named(tmp_path, published_folder, parquet_bomb):
    """Issue 57 case 4, the other Parquet files someone hands over: a URL list (sources[].path) and a published
    folder's shard (publish check reads every row, through mlcroissant and `datasets`)."""
    import shutil

    from squidflow.videos.sources import read_url_list

    urls = tmp_path / "urls.parquet"
    shutil.copy(parquet_bomb, urls)
    with pytest.raises(InputError, match=r"sources: url list .*urls\.parquet: its 400,000,000 rows"):
        read_url_list(urls)
    folder = tmp_path / "handed" / "seed"
    shutil.copytree(published_folder, folder)
    shard = sorted((folder / "data" / "judgments").glob("*.parquet"))[0]
    shutil.copy(parquet_bomb, shard)
    res = _publish_check(folder, tmp_path / "home")
    out = res.stdout + res.stderr
    assert res.returncode == 1 and f"{shard}: its 400,000,000 rows" in out, out[-3000:]
    assert "records and datasets loading not run" in out and TRACEBACK not in out, out[-3000:]
    tried("a Parquet decompression bomb as a URL list and as a published shard",
          "stopped with a message: the file named before reading its rows")  # fmt: skip


def test_a_deep_config_is_snakemakes_traceback_before_squidflow_runs_and_check_config_names_it(tmp_path):
    """Issue 57 case 5 (issue 44 case 8): `snakemake --configfile deep.yaml` (100,000 levels) prints a ~4,000-line
    RecursionError from its own config loading, before any workflow code runs: squidflow cannot stop it first
    (docs/upstream.md, "A config file nested 100,000 deep"). check-config names it in one line. When a Snakemake
    release stops it itself, this test fails: update docs/upstream.md."""
    from helpers.faults import SNAKEMAKE

    conf = write_config(tmp_path, "demo: " + "[" * 100_000 + "]" * 100_000 + "\n")
    res = subprocess.run([SNAKEMAKE, "-n", "--directory", str(tmp_path / "w"), "--configfile",
                          str(ROOT / "config" / "config.yaml"), str(conf), "--cores", "1"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    out = res.stdout + res.stderr
    assert res.returncode != 0 and "RecursionError" in out and "configfile.py" in out and "squidflow" not in \
        out.replace(str(ROOT), ""), out[-2000:]  # fmt: skip
    assert "deep" in (ROOT / "docs" / "upstream.md").read_text() and "RecursionError" in (
        ROOT / "docs" / "upstream.md").read_text()  # fmt: skip
    res = subprocess.run([CLI, "check-config", str(ROOT / "config" / "config.yaml"), str(conf)], capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert res.returncode == 2 and "nested deeper than 64 levels" in res.stdout + res.stderr
    tried("a config nested 100,000 deep under snakemake", "declared upstream (docs/upstream.md): Snakemake's own "
          "traceback before squidflow runs; check-config names it")  # fmt: skip


def mapping_bomb(levels: int) -> str:
    """The probe's 10-line alias bomb: mappings that name the one before nine times."""
    lines = ["x0: &a0 {" + ", ".join(f"k{j}: lol" for j in range(9)) + "}"]
    lines += [f"x{i}: &a{i} {{" + ", ".join(f"k{j}: *a{i - 1}" for j in range(9)) + "}" for i in range(1, levels + 1)]
    return "events:\n  parade:\n    description:\n      " + "\n      ".join(lines) + "\n"


def test_snakemakes_config_merge_expands_an_alias_bomb_that_check_config_refuses_at_once(tmp_path):
    """Issue 57 case 11: a 10-line YAML alias bomb took 64 s under `snakemake` before squidflow's message (0.4 s in
    check-config). The time is Snakemake's: `update_config` copies every aliased mapping of a --configfile before any
    workflow code runs (docs/upstream.md). Shown here on the probe's shape at four levels: Snakemake's merge makes
    one dict per alias, expanded; squidflow's reader refuses the file from its nodes, at once. When a Snakemake
    release shares or bounds them, this test fails: update docs/upstream.md."""
    import yaml
    from snakemake.utils import update_config

    from squidflow.config.bounds import load_bounded

    text = mapping_bomb(4)
    loaded = yaml.load(text, Loader=yaml.FullLoader)  # as Snakemake's configfile reader loads it (through yte)
    merged: dict = {}
    update_config(merged, loaded)
    described = merged["events"]["parade"]["description"]

    def dicts(node, seen):
        if isinstance(node, dict):
            seen.add(id(node))
            for v in node.values():
                dicts(v, seen)
        return seen

    assert len(dicts(described["x4"], set())) == 1 + 9 + 81 + 729 + 6561  # every alias copied: 9^4 at the bottom
    assert len(dicts(loaded["events"]["parade"]["description"]["x4"], set())) == 5  # PyYAML shares them
    t0 = time.monotonic()
    with pytest.raises(ValueError, match="aliases"):
        load_bounded(mapping_bomb(6), "bomb.yaml")
    assert time.monotonic() - t0 < 5
    assert "update_config" in (ROOT / "docs" / "upstream.md").read_text()
    tried("a 10-line YAML alias bomb of mappings under snakemake", "declared upstream (docs/upstream.md): Snakemake's "
          "merge expands it before squidflow runs; check-config refuses it at once")  # fmt: skip


@pytest.mark.parametrize("link", ["video", "event folder"])
def test_a_local_video_that_links_out_of_its_root_is_skipped_and_said(tmp_path, link):
    """Issue 57 case 7: `concert/innocent.mp4 -> ~/private/family.mp4` was taken silently (and in embed mode its
    frames published). A link leaving the root is skipped with its reason; `follow_links: true` takes it."""
    from squidflow.videos.sources import SKIPPED, list_candidates, local_files

    private = tmp_path / "home" / "private"
    private.mkdir(parents=True)
    (private / "family.mp4").write_bytes(b"\0private")
    root = tmp_path / "videos"
    (root / "parade").mkdir(parents=True)
    (root / "parade" / "march.mp4").write_bytes(b"\0")
    (root / "parade" / "inside.mp4").symlink_to(root / "parade" / "march.mp4")  # a link inside the root: fine
    if link == "video":
        (root / "concert").mkdir()
        (root / "concert" / "innocent.mp4").symlink_to(private / "family.mp4")
        linked = root / "concert" / "innocent.mp4"
    else:
        (root / "concert").symlink_to(private)
        linked = root / "concert"
    source = {"type": "local", "root": str(root)}
    candidates, notes = list_candidates([source])
    assert sorted(candidates["title"].to_list()) == ["inside", "march"], candidates
    said = [n for n in notes if SKIPPED in n]
    assert any(f"{linked}: a symbolic link to {private}" in n and "outside the root" in n and "follow_links: true"
               in n for n in said), said  # fmt: skip
    assert not [f for f in local_files([source]) if "family" in f or "innocent" in f]
    taken, _ = list_candidates([{**source, "follow_links": True}])
    assert len(taken) == 3
    tried(f"a local {link} that is a symbolic link out of the root", "skipped with its reason (follow_links: true "
          "takes it)")  # fmt: skip


def test_a_prompt_with_markup_characters_round_trips_through_mturk(tmp_path):
    """Issue 57 case 8: MTurk sends Input.event_prompt back as squidflow wrote it into the batch CSV, `rock & roll
    &lt;live&gt; concert`, and that became the published prompt. Ingestion undoes exactly squidflow's references;
    the round trip (HITs -> MTurk's results -> judgments -> the published table) keeps the prompt."""
    from helpers.publish_run import small_run

    from squidflow.judgments.annotation import make_hits
    from squidflow.judgments.ingest import ingest
    from squidflow.publish.tables import judgments_table

    prompt = 'rock & roll <live> "concert"'
    frames = small_run(tmp_path / "run").frames
    hits = make_hits(frames, "A", events_config={"wedding": {"prompt": prompt}}, images_per_hit=2)
    sent = hits.filter(pl.col("event") == "wedding").row(0, named=True)
    assert sent["event_prompt"] == "rock & roll &lt;live&gt; &quot;concert&quot;"  # as MTurk fills it into the page
    batch = pl.DataFrame([{"HITId": "H1", "WorkerId": w, "AssignmentStatus": "Approved",
                           "Input.event_prompt": sent["event_prompt"], "Input.variant": "A",
                           "Input.image_1_id": sent["image_1_id"], "Input.image_2_id": sent["image_2_id"],
                           "Answer.rating_1": "40", "Answer.rating_2": "60"} for w in ("W1", "W2")])  # fmt: skip
    batch.write_csv(tmp_path / "batch.csv")
    judgments, _ = ingest(source="mturk", batches=[(tmp_path / "batch.csv", 1)])
    assert set(judgments["event_prompt"]) == {prompt}
    published = judgments_table(judgments.with_columns(pl.lit("first").alias("wave")), {"W1": "Ann1", "W2": "Ann2"})
    assert set(published["prompt"]) == {prompt}
    conf = write_config(tmp_path, "events:\n  wedding: {prompt: 'a &lt;wedding&gt;'}\n")
    res = subprocess.run([CLI, "check-config", str(ROOT / "config" / "config.yaml"), str(conf)], capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert res.returncode == 2 and "events.wedding.prompt" in res.stdout + res.stderr, res.stdout + res.stderr
    tried("a prompt with <, > and \" through MTurk and back", "round trip: the prompt published as configured; a "
          "prompt holding the references themselves refused by check-config")  # fmt: skip


def test_a_huge_croissant_json_stops_publish_check_before_it_is_read(tmp_path, published_folder):
    """Issue 57 case 9: a 600 MB croissant.json cost publish check 4.9 GB before any message. It is bounded like the
    card (squidflow.config.bounds.MAX_TEXT_BYTES), from its size, before it is read; here a sparse file of 600 MB."""
    import shutil

    folder = tmp_path / "handed" / "seed"
    shutil.copytree(published_folder, folder)
    with open(folder / "croissant.json", "r+b") as fh:
        fh.truncate(600 * 10**6)
    t0 = time.monotonic()
    returncode, out, peak_kb = _publish_check_peak(folder, tmp_path / "home", "--no-load")
    assert returncode == 1 and f"{folder / 'croissant.json'}: 600,000,000 bytes, over the" in out, out[-2000:]
    assert time.monotonic() - t0 < 60 and TRACEBACK not in out
    assert peak_kb < 2 * 2**20, peak_kb  # kB: far below the probe's 4.9 GB
    tried("a 600 MB croissant.json (publish check)", "stopped with a message: file and bound named, nothing read")


def test_a_formula_in_a_hit_id_stays_data_and_the_card_says_text_columns_are_raw(tmp_path):
    """Issue 57 case 10: `=HYPERLINK(...)` in a HITId stays verbatim in the published `hit` column (the data is kept
    as it came). The card's "Using the data" says text columns are raw; every CSV squidflow writes from them
    neutralises formula cells (the rebuild list, the report's tables)."""
    import pyarrow.parquet as pq
    from helpers.faults import raw_payloads
    from helpers.publish_run import settings, small_run

    from squidflow.contracts.io import write_csv
    from squidflow.publish.dataset import publish

    formula = '=HYPERLINK("http://evil.example/x","click")'
    run = small_run(tmp_path / "run")
    run.judgments = run.judgments.with_columns(pl.lit(formula).alias("hit"))
    run.videos = run.videos.with_columns(pl.lit(f"{formula} title").alias("title")) if "title" in run.videos.columns \
        else run.videos  # fmt: skip
    folder = tmp_path / "out" / "seed"
    publish(folder, run, settings())
    hits = {h for shard in (folder / "data" / "judgments").glob("*.parquet") for h in pq.read_table(shard)["hit"]
            .to_pylist()}  # fmt: skip
    assert hits == {formula}
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "## Using the data" in card and "Text columns" in card and "apostrophe" in card
    table = tmp_path / "results" / "tables" / "hits.csv"  # a table written from the column, as the tables are
    table.parent.mkdir(parents=True)
    write_csv(run.judgments.select("hit", "annotator"), table)
    assert not raw_payloads(table) and "'=HYPERLINK" in table.read_text(encoding="utf-8")
    tried("a HITId that is a spreadsheet formula (=HYPERLINK)", "kept as data in the published hit column; the card "
          "says text columns are raw; squidflow's CSVs neutralise it")  # fmt: skip
