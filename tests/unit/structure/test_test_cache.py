"""The shared small run is kept between test sessions under a key of its inputs (tests/helpers/test_cache.py): a change
to any input misses the cache, and nothing else does (not a time, not a file outside the inputs)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import test_cache
from helpers.test_cache import RUN_INPUTS, cached_run, input_key

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A small git checkout with a file in each kind of input and one file that is none."""
    repo = tmp_path / "repo"
    for name, text in {
        "Snakefile": 'include: "workflow/rules/common.smk"\n',
        "workflow/rules/common.smk": "localrules: all\n",
        "scripts/make_table.py": '"""Rule make_table."""\n',
        "src/squidflow/judgments/scores.py": "def score(x):\n    return x + 1\n",
        "config/config.yaml": "events: {}\n",
        "requirements.lock": "polars==1.0\n",
        "README.md": "# a readme\n",
    }.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "c"], check=True)
    return repo


def test_one_line_of_a_library_module_changes_the_key(checkout: Path) -> None:
    before = input_key(checkout)
    module = checkout / "src/squidflow/judgments/scores.py"
    module.write_text(module.read_text().replace("x + 1", "x + 2"))
    assert input_key(checkout) != before


@pytest.mark.parametrize("name", ["Snakefile", "workflow/rules/common.smk", "scripts/make_table.py",
                                  "config/config.yaml", "requirements.lock"])  # fmt: skip
def test_every_kind_of_input_changes_the_key(checkout: Path, name: str) -> None:
    before = input_key(checkout)
    (checkout / name).write_text((checkout / name).read_text() + "# edited\n")
    assert input_key(checkout) != before


def test_an_untracked_library_module_changes_the_key(checkout: Path) -> None:
    before = input_key(checkout)
    (checkout / "src/squidflow/judgments/new.py").write_text("X = 1\n")
    assert input_key(checkout) != before


def test_time_and_files_that_are_no_input_leave_the_key(checkout: Path) -> None:
    before = input_key(checkout)
    module = checkout / "src/squidflow/judgments/scores.py"
    os.utime(module, (1, 1))  # a time is never part of the key
    (checkout / "README.md").write_text("# another readme\n")
    (checkout / "results").mkdir()
    (checkout / "results" / "x.parquet").write_text("not an input")
    assert input_key(checkout) == before
    assert input_key(checkout, recipe="--cores 2") != before


def test_the_key_covers_the_library_the_workflow_runs() -> None:
    assert {"src/squidflow", "workflow", "scripts", "config", "tests/configs", "requirements.lock"} <= set(RUN_INPUTS)


def test_a_build_is_made_once_and_read_back_until_an_input_changes(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cached_run on the small checkout: the second call reads what the first built; after one library line changes,
    the next call builds again, and the old build is gone."""
    monkeypatch.setattr(test_cache, "ROOT", checkout)
    monkeypatch.setattr(test_cache, "CACHE", tmp_path / "cache")
    monkeypatch.setenv("SQUIDFLOW_TEST_CACHE", "1")
    built: list[Path] = []

    def build(folder: Path) -> Path:
        built.append(folder)
        (folder / "made").write_text("x")
        return folder

    first = cached_run("run", build, lambda folder: folder)
    again = cached_run("run", build, lambda folder: folder)
    assert again == first and len(built) == 1
    module = checkout / "src/squidflow/judgments/scores.py"
    module.write_text(module.read_text() + "\n# one more line\n")
    third = cached_run("run", build, lambda folder: folder)
    assert len(built) == 2 and third != first and not first.exists() and (third / "made").exists()
    shutil.rmtree(tmp_path / "cache")


def test_a_fresh_clone_starts_the_heaviest_files_first_from_the_kept_durations(monkeypatch, tmp_path: Path) -> None:
    """Without .test-cache (a fresh clone, CI) the order comes from tests/durations-<tier>.txt: the e2e tier's two
    longest journeys first, not in the order of their names (where they came last)."""
    import conftest
    from helpers.durations import per_file

    class Config:
        def getoption(self, name: str) -> str:
            return "e2e"

    monkeypatch.setattr(conftest, "CACHE", tmp_path / "no-cache")
    weights = conftest._file_weights(Config())
    kept = per_file((ROOT / "tests" / "durations-e2e.txt").read_text())
    assert weights == dict(kept) and len(weights) >= 10
    assert set(sorted(weights, key=weights.get, reverse=True)[:2]) == {
        "tests/e2e/test_slurm.py",
        "tests/e2e/test_s3.py",
    }
    assert per_file("   2.50s a.py::t1\n   1.00s a.py::t2\n   0.50s b.py::t\nnot a line\n") == {
        "a.py": 3.5,
        "b.py": 0.5,
    }
