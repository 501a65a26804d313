"""Shared fixtures: the project root and the real public data (its offline mirror: $SQUIDFLOW_DATA, else
../shared/data beside the clone)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest
from helpers.durations import per_file
from helpers.runs import SMALL_CONFIGS, WorkflowRun
from helpers.test_cache import CACHE, cached_run
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# The test session's own Hugging Face cache, set before anything imports `datasets` (which reads these at import):
# `datasets` keys a local folder's cache by the folder's name alone (huggingface/datasets#2956), so a machine whose
# ~/.cache/huggingface holds another `squidflow-demo` would serve its rows to these tests. Every pytest process (an
# xdist worker too) gets a fresh folder, removed when it ends; the Snakemake jobs the tests start inherit it.
_HF_HOME = Path(tempfile.mkdtemp(prefix="squidflow-tests-hf-"))
os.environ["HF_HOME"] = str(_HF_HOME)
(_HF_HOME / "datasets").mkdir()
os.environ["HF_DATASETS_CACHE"] = str(_HF_HOME / "datasets")

# Property-based fuzzing of the readers of user files (tests/robustness/test_fuzz_readers.py): `ci` bounds it for `make test`
# (well under 3 minutes on 2 cores), `nightly` tries 25x more inputs per reader: HYPOTHESIS_PROFILE=nightly.
_FUZZ = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.filter_too_much],
         "print_blob": True}  # fmt: skip
settings.register_profile("ci", max_examples=80, derandomize=True, **_FUZZ)  # the same inputs every CI run
settings.register_profile("nightly", max_examples=2000, **_FUZZ)
HYPOTHESIS_PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(HYPOTHESIS_PROFILE)
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _find_shared_data() -> Path | None:
    """The offline mirror of the public data (docs/paper.md, "Offline copies of the public data"): $SQUIDFLOW_DATA, else
    ../shared/data beside the clone; None where neither holds it."""
    env = os.environ.get("SQUIDFLOW_DATA") or os.environ.get("SQUIDFLOW_SHARED_DATA")  # the second: its old name
    candidates = [Path(env)] if env else [ROOT.parent / "shared" / "data"]
    return next((c for c in candidates if (c / "squid-e" / "dataset.csv").exists()), None)


SHARED_DATA = _find_shared_data()
if SHARED_DATA is not None:  # the workflow runs the tests start read the public files' local copies there
    os.environ["SQUIDFLOW_DATA"] = str(SHARED_DATA)
DATA_MISSING = (
    "the real public data (SQUID-E release, Sherlock, imSitu verbs) is not here: set SQUIDFLOW_DATA to "
    'a folder holding its local copies (docs/paper.md, "Offline copies of the public data"), or put it beside '
    "the clone as ../shared/data"
)


def _shared_data() -> Path:
    """The mirror's folder; where it is missing, the test asking for it is skipped saying so (and fails under
    CI=true, where a skipped data test would hide a broken setting)."""
    if SHARED_DATA is not None:
        return SHARED_DATA
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true: {DATA_MISSING}", pytrace=False)
    pytest.skip(DATA_MISSING)


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def shared_data() -> Path:
    return _shared_data()


def _common_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder every pytest-xdist worker of this pytest run shares (the run's own temporary folder alone)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _run_small_workflow(directory: Path) -> WorkflowRun:
    run = WorkflowRun(directory, SMALL_CONFIGS)
    old = os.umask(0o022)
    try:
        res = run.snakemake("--cores", str(os.cpu_count() or 1), timeout=2400, env={"PYTHONHASHSEED": "0"})
    finally:
        os.umask(old)
    assert res.returncode == 0, res.stdout[-5000:] + res.stderr[-5000:]
    return run


@pytest.fixture(scope="session")
def small_workflow() -> WorkflowRun:
    """Every stage of the demo on the small corpus (tests/configs/small.yaml), run ONCE under umask 022 and shared by
    every test that inspects a finished workflow, in both tiers and across test sessions: it is kept in
    .test-cache/small_workflow/<key>/ (helpers/test_cache.py), where the key is a digest of every input that can change
    it (the workflow, scripts, library, configs, environments and lock files). A change to any of them makes a new
    run; nothing else does. Tests may run `snakemake -n` against it; a test that changes its files works on a copy
    (helpers.runs.copy_run). It runs under PYTHONHASHSEED=0 so that tests/workflow/test_determinism.py can make its
    tables again under another hash seed. Workers and tiers that ask at once wait on one lock: the first makes the
    run, the others read it (a failed run fails them too, with its output)."""
    return cached_run("small_workflow", _run_small_workflow, lambda folder: WorkflowRun(folder, SMALL_CONFIGS))


@pytest.fixture(scope="session")
def label_studio(tmp_path_factory: pytest.TempPathFactory):
    """One real Label Studio server for the whole test session, shared by the pytest-xdist workers through a lock
    (tests/helpers/label_studio_server.py: the venv `make test-tools` installed; SQLite and media in the session's
    temporary folder; a free loopback port). Its LOCAL_FILES_DOCUMENT_ROOT is a folder of the session: a test works in
    a folder of its own under it (`lss.workdir`). Stopped when the session ends. Skipped, saying why, where the venv is
    missing or the server does not start."""
    from helpers import label_studio_server as lss

    srv, why, started_here = lss.shared_server(_common_tmp(tmp_path_factory))
    if srv is None:
        pytest.skip(why)
    yield srv
    if started_here and not os.environ.get("PYTEST_XDIST_WORKER"):
        srv.stop()  # under xdist, a watcher stops it when the whole run ends (lss.shared_server)


# Fixtures that run the whole workflow (or most of it): a test asking for one is `slow` whether or not it says so,
# so `make test-fast` (`-m "not slow"`) never waits for a whole-workflow run.
WHOLE_WORKFLOW_FIXTURES = frozenset({"small_workflow"})
_STARTED = time.monotonic()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--squidflow-tier",
        default=None,
        help="the tier this run is (test, e2e: the Makefile says it): its durations go to "
        ".test-cache/durations-<tier>.txt, and its next run starts the test files that took longest first",
    )


def _durations_file(config: pytest.Config) -> Path:
    return CACHE / f"durations-{config.getoption('--squidflow-tier')}.txt"


def _file_weights(config: pytest.Config) -> dict[str, float]:
    """Seconds each test file took in this tier's last run (the durations file), summed over its tests. A fresh clone
    has no such file: it reads tests/durations-<tier>.txt, the per-file sums of a whole run of the tier kept in the
    repository (`python -m tests.helpers.durations <tier>` copies them from the cache), so that CI too starts the
    heaviest files first instead of in the order of their names. Neither needs an edit for a new test: a file not
    listed counts as the heaviest."""
    tier = config.getoption("--squidflow-tier")
    path = _durations_file(config)
    if tier is not None and not path.exists():
        path = ROOT / "tests" / f"durations-{tier}.txt"
    if tier is None or not path.exists():
        return {}
    return dict(per_file(path.read_text()))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that ask for a whole-workflow fixture are slow; the files that took longest last time start first (a
    file not seen before counts as the heaviest: it may be), so no worker is left with a long tail. Every
    pytest-xdist worker reads the same file, so they agree on the order."""
    for item in items:
        if WHOLE_WORKFLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    weights = _file_weights(config)
    if weights:
        order = {id(item): k for k, item in enumerate(items)}
        items.sort(key=lambda it: (-weights.get(it.nodeid.split("::")[0], float("inf")), order[id(it)]))


_DURATIONS: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Setup, call and teardown of each test (pytest-xdist's controller sees every worker's reports)."""
    _DURATIONS[report.nodeid] = _DURATIONS.get(report.nodeid, 0.0) + report.duration


def _wall_time(terminalreporter) -> str:
    """This pytest run's wall time from the start of collection, and what it ran (the closing summary's last line)."""
    seconds = time.monotonic() - _STARTED
    ran = sum(len(terminalreporter.stats.get(k, [])) for k in ("passed", "failed", "skipped", "error", "xfailed",
                                                                 "xpassed"))  # fmt: skip
    marks = terminalreporter.config.getoption("markexpr", "") or "all tests"
    return (
        f"wall time of this test run: {int(seconds // 60)} min {seconds % 60:.0f} s ({ran} tests, {marks}, "
        f"{os.cpu_count()} cores)"
    )


# What the tests measured on the way (helpers/figures.py) and the faults they tried (helpers/faults.py), for the
# closing summary. Under pytest-xdist each worker hands its own to the controller, which prints the summary.
_WORKERS: dict[str, list] = {"figures": [], "cases": [], "fuzzed": []}


def _own_summary() -> dict:
    faults = sys.modules.get("helpers.faults")
    return {
        "figures": list(getattr(sys.modules.get("helpers.figures"), "FIGURES", [])),
        "cases": list(getattr(faults, "CASES", [])),
        "fuzzed": dict(getattr(faults, "FUZZED", {})),
    }


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_HF_HOME, ignore_errors=True)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if hasattr(session.config, "workeroutput"):  # a pytest-xdist worker
        session.config.workeroutput["squidflow_summary"] = json.dumps(_own_summary())


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """pytest-xdist's controller: a worker finished; keep what it measured for the closing summary."""
    summary = json.loads(getattr(node, "workeroutput", {}).get("squidflow_summary", "{}") or "{}")
    _WORKERS["figures"] += summary.get("figures", [])
    _WORKERS["cases"] += summary.get("cases", [])
    _WORKERS["fuzzed"].append(summary.get("fuzzed", {}))


def _write_durations(config: pytest.Config) -> None:
    """Every test's duration, longest first, to .test-cache/durations-<tier>.txt (`make test` prints its top)."""
    if hasattr(config, "workerinput") or not _DURATIONS or config.getoption("--squidflow-tier") is None:
        return
    CACHE.mkdir(exist_ok=True)
    lines = [f"{s:9.2f}s {nodeid}" for nodeid, s in sorted(_DURATIONS.items(), key=lambda kv: -kv[1])]
    _durations_file(config).write_text("\n".join(lines) + "\n")


def pytest_terminal_summary(terminalreporter) -> None:
    """Figures the tests measured (tests/helpers/figures.py) and the run's wall time; the fault-injection suite's count: faults and bad inputs tried (tests/helpers/faults.py: tried), the inputs
    generated per reader of user files (tests/helpers/faults.py: fuzzed), and test outcomes."""
    _write_durations(terminalreporter.config)
    own = _own_summary()
    figures = [*own["figures"], *_WORKERS["figures"], _wall_time(terminalreporter)]
    terminalreporter.write_line("")
    terminalreporter.write_line("figures measured by the tests (on this machine, this run):")
    for line in figures:
        terminalreporter.write_line(f"  {line}")
    suites = ("test_faults.py", "test_faults_hostile.py", "test_fuzz_readers.py")
    reports = {k: [r for r in terminalreporter.stats.get(k, []) if any(s in getattr(r, "nodeid", "") for s in suites)]
               for k in ("passed", "failed", "skipped", "error")}  # fmt: skip
    cases = [*map(tuple, own["cases"]), *map(tuple, _WORKERS["cases"])]
    if not cases and not any(reports.values()):
        return
    outcomes: dict[str, int] = {}
    for _, outcome in cases:
        kind = outcome.split(":")[0].split(";")[0].strip()
        outcomes[kind] = outcomes.get(kind, 0) + 1
    write = terminalreporter.write_line
    write("")
    write(
        f"fault-injection suite: {len(cases)} faults and bad inputs tried and handled as required "
        f"({len(reports['passed'])} tests passed, {len(reports['failed']) + len(reports['error'])} failed, "
        f"{len(reports['skipped'])} skipped)"
    )
    for kind, n in sorted(outcomes.items(), key=lambda kv: -kv[1]):
        write(f"  {n:3d} {kind}")
    fuzz: dict[str, dict[str, int]] = {}
    for part in (own["fuzzed"], *_WORKERS["fuzzed"]):
        for reader, counts in part.items():
            for outcome, n in counts.items():
                fuzz.setdefault(reader, {})[outcome] = fuzz.setdefault(reader, {}).get(outcome, 0) + n
    if fuzz:
        total = sum(sum(c.values()) for c in fuzz.values())
        write(f"  fuzzing (hypothesis profile {HYPOTHESIS_PROFILE}): {total} generated inputs to {len(fuzz)} readers")
        for reader, counts in sorted(fuzz.items()):
            write(f"  {sum(counts.values()):5d} {reader}: " + ", ".join(f"{n} {o}" for o, n in sorted(counts.items())))
    for r in reports["skipped"]:
        reason = r.longrepr[2] if isinstance(r.longrepr, tuple) else str(r.longrepr)
        write(f"  skipped: {r.nodeid.split('::')[-1]} ({reason})")


@pytest.fixture(autouse=True)
def _job_root_back_to_the_working_directory():
    """squidflow.runtime.logs.setup sets where the job sees the workflow's files (squidflow.contracts.paths) for the
    rest of its process: a job is one process. A test that runs a rule's script in-process must not hand that root on
    to the next test of its xdist worker."""
    yield
    from squidflow.contracts.paths import set_job_root

    set_job_root(".")
