"""One configuration, whatever the folder (issue 56): `snakemake` plans the same jobs with or without `--directory`,
and `squidflow config` prints the configuration a run records in results/run_config.yaml, for the demo,
tests/configs/small.yaml and a config written by `squidflow init`, each with and without `--directory`."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from helpers.runs import SMALL_CONFIG, clone_like, planned_jobs, snakemake, squidflow
from helpers.videotools import make_clip

from squidflow.runtime import run_record

# The jobs each configuration plans in a fresh folder (a dry run, the checkpoints' jobs not yet known): the same with
# `--directory D` as in the clone itself.
PLANNED = {"small": 63, "init": 12}  # small: 62 before issue 58 (its method record)


@pytest.fixture(scope="module")
def place(tmp_path_factory) -> dict[str, Path]:
    """A folder like a fresh clone, deep enough that `squidflow init` writes its videos' folder as an absolute path
    (one config for both working folders), the init config beside it, and a working folder elsewhere."""
    tmp = tmp_path_factory.mktemp("one-config")
    videos = tmp / "videos"
    for event in ("concert", "market"):
        for k in range(2):
            make_clip(videos / event / f"clip{k}.mp4", size="64x48", rate=6, seconds=1)
    deep = tmp / "a" / "b" / "c"
    deep.mkdir(parents=True)
    clone = clone_like(deep)
    res = squidflow("init", videos, "--output", tmp / "mine.yaml", "--license", "cc-by-4.0", "--citation", "@misc{m}",
                    cwd=clone)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert yaml.safe_load((tmp / "mine.yaml").read_text())["sources"][0]["root"] == str(videos)
    return {"clone": clone, "init": tmp / "mine.yaml", "elsewhere": tmp / "elsewhere"}


CONFIGS = {"demo": None, "small": SMALL_CONFIG, "init": "init"}
# An init config's annotators are on Label Studio: until their answers are pulled, a run makes the tasks (README,
# "Build your own dataset")
TARGETS = {"init": ["results/annotation/label_studio/A/tasks.json", "results/annotation/label_studio/B/tasks.json"]}


def _configfile(name: str, place: dict[str, Path]) -> list[str]:
    config = CONFIGS[name]
    return [] if config is None else ["--configfile", str(place["init"] if config == "init" else config)]


@pytest.mark.parametrize("name", ["small", "init"])
def test_the_same_jobs_with_and_without_directory(place, name):
    """Acceptance of issue 56: before, `--directory` silently dropped config/config.yaml (62 jobs for small.yaml
    with --directory, 107 without)."""
    args = ["-n", *TARGETS.get(name, []), *_configfile(name, place)]
    here = snakemake(*args, cwd=place["clone"])
    there = snakemake(*args, "--directory", place["elsewhere"] / name, cwd=place["clone"])
    assert here.returncode == 0 and there.returncode == 0, here.stderr[-3000:] + there.stderr[-3000:]
    assert planned_jobs(here.stdout) == planned_jobs(there.stdout)
    assert sum(planned_jobs(here.stdout).values()) == PLANNED[name], planned_jobs(here.stdout)


@pytest.mark.parametrize("where", ["clone", "directory"])
@pytest.mark.parametrize("name", ["demo", "small", "init"])
def test_squidflow_config_is_what_the_run_records(place, name, where):
    """A run with --touch records its configuration before its first job (and touches nothing that is missing):
    the record's configuration is what `squidflow config` prints for the same arguments."""
    directory = ["--directory", str(place["elsewhere"] / f"{name}-record")] if where == "directory" else []
    folder = place["elsewhere"] / f"{name}-record" if directory else place["clone"]
    args = [*_configfile(name, place), *directory]
    record = folder / run_record.RECORD
    record.unlink(missing_ok=True)
    snakemake("--touch", "--cores", "1", *TARGETS.get(name, []), *args, "--config", "replace_other_config=true",
              cwd=place["clone"])  # fmt: skip
    assert record.is_file(), f"no {record}"
    recorded = yaml.safe_load(record.read_text())
    printed = squidflow("config", *args, "--config", "replace_other_config=true", cwd=place["clone"])
    assert printed.returncode == 0, printed.stderr
    assert yaml.safe_load(printed.stdout) == recorded["config"]
    demo_read = "config/config.yaml" in run_record.names(recorded)
    assert demo_read == (name == "demo"), run_record.names(recorded)
    assert ("# 2. the demo config: not read" in printed.stdout) == (name != "demo")
