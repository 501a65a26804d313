"""The public data: shipped configs name its public URLs; one setting, SQUIDFLOW_DATA, names a folder of local
copies (an offline mirror); tests that need the data skip, naming the setting, where it is missing (and fail under
CI=true)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from squidflow.config.validation import load_config, schema_default
from squidflow.fetch import MIRROR_LAYOUT, local_copy

ROOT = Path(__file__).resolve().parents[3]
RELEASE_CSV = schema_default("squid_e_release.judgments_csv")


def test_a_public_url_is_read_from_its_local_copy_under_the_mirror(tmp_path: Path) -> None:
    (tmp_path / "squid-e" / "experiments").mkdir(parents=True)
    (tmp_path / "squid-e" / "huj_annotations.csv").write_text("vid_ID\n")
    assert local_copy(RELEASE_CSV, tmp_path) == str(tmp_path / "squid-e" / "huj_annotations.csv")
    experiments = schema_default("squid_e_release.experiments")
    assert local_copy(experiments, tmp_path) == str(tmp_path / "squid-e" / "experiments")
    # no copy there, a URL the mirror does not keep, a local path, no mirror at all: None (the URL is downloaded)
    assert local_copy(schema_default("squid_e_release.dataset_csv"), tmp_path) is None
    assert local_copy("https://example.org/squid-e/main/dataset/data/huj_annotations.csv", tmp_path) is None
    assert local_copy(experiments + "-v2", tmp_path) is None
    assert local_copy("data/huj_annotations.csv", tmp_path) is None
    assert local_copy(RELEASE_CSV, "") is None


def test_every_public_default_of_the_schema_has_a_place_in_the_mirror() -> None:
    for key in (
        "squid_e_release.dataset_csv",
        "squid_e_release.judgments_csv",
        "squid_e_release.experiments",
        "sherlock.annotations",
    ):
        assert any(schema_default(key).startswith(prefix) for prefix in MIRROR_LAYOUT), key


def test_shipped_configs_name_no_copy_beside_the_clone() -> None:
    """A shipped config works on any clone: public data by its URL, never a neighbour folder of this checkout."""
    offenders = [
        f"{p.name}: {line.strip()}"
        for p in sorted((ROOT / "config").glob("*.yaml"))
        for line in p.read_text().splitlines()
        if "../shared" in line.split("#", 1)[0]
    ]
    assert not offenders, offenders
    for name in ("squid-e-release.yaml", "sherlock.yaml"):
        load_config(ROOT / "config" / name, check_paths=True, base_dir=ROOT)  # no local path to miss


DATA_TEST = "tests/unit/videos/test_videos_release.py::test_release_through_candidates_manifest_and_report"


def _run_without_data(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    empty = tmp_path / "no-data"
    empty.mkdir(exist_ok=True)
    clean = {k: v for k, v in os.environ.items() if k not in ("CI", "SQUIDFLOW_SHARED_DATA")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q", "-rs", DATA_TEST],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**clean, "SQUIDFLOW_DATA": str(empty), **env},
    )


def test_a_data_test_without_the_data_is_skipped_naming_the_setting_and_fails_under_ci(tmp_path: Path) -> None:
    res = _run_without_data(tmp_path)
    assert res.returncode == 0 and "1 skipped" in res.stdout and "SQUIDFLOW_DATA" in res.stdout, res.stdout[-3000:]
    res = _run_without_data(tmp_path, CI="true")
    assert res.returncode == 1 and "1 error" in res.stdout, res.stdout[-3000:]
    assert "CI=true" in res.stdout and "SQUIDFLOW_DATA" in res.stdout, res.stdout[-3000:]


@pytest.mark.parametrize("name", ["squid-e-release.yaml", "sherlock.yaml"])
def test_the_workflow_reads_a_shipped_configs_public_urls_from_the_mirror(
    name: str, shared_data: Path, tmp_path: Path
) -> None:
    """A dry run of the shipped config with SQUIDFLOW_DATA set: its jobs read the public files' local copies."""
    res = subprocess.run(
        [
            str(Path(sys.executable).with_name("snakemake")),
            "--directory",
            str(tmp_path),
            "--configfile",
            str(ROOT / "config" / name),
            "-n",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "SQUIDFLOW_DATA": str(shared_data)},
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert f"input: {shared_data}/" in res.stdout, res.stdout[-3000:]
