"""`make test-fast` deals the test files into one pytest process per core (tests/helpers/split_run.py): every file
runs once, the groups are about equal, and a failure in any group fails the run."""

from __future__ import annotations

from pathlib import Path

from helpers.split_run import ROOT, deal, files_under, worst


def test_every_test_file_is_in_exactly_one_group_of_about_equal_size() -> None:
    files = files_under([ROOT / "tests" / "unit", ROOT / "tests" / "robustness", ROOT / "tests" / "unit"])
    assert len(files) == len(set(files)) > 50 and all(f.name.startswith("test_") for f in files)
    groups = deal(files, 2)
    assert sorted(f for g in groups for f in g) == files
    sizes = [sum(f.stat().st_size for f in g) for g in groups]
    assert max(sizes) - min(sizes) <= max(f.stat().st_size for f in files)
    assert deal(files[:1], 4) == [files[:1]]  # no empty process


def test_the_run_fails_when_any_group_fails(tmp_path: Path) -> None:
    assert worst([0, 0]) == 0 and worst([0, 5]) == 0  # 5: every test of a group deselected
    assert worst([0, 1]) == 1 and worst([2, 0]) == 2
