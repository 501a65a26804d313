"""The README's journeys, every command as the README writes it (issues 47 and 56), read from README.md itself: the
demo, your own dataset, Label Studio, publishing, Slurm and S3. Where the README hands a journey on to a page of docs/
(issue 60), the test follows its link and reads the commands there, as a reader does. Each runs in a folder that looks like a fresh clone
(its files linked) with a folder of videos beside it: `init`, `check-config` and `config` for real, each `snakemake`
(and the snakemake line `make` runs) as a dry run (-n), the Label Studio, publish and S3 commands up to the message
that says what they lack (no server here; tests/integration/ walks them through real ones). For each journey, every
command that reads a configuration reads the one its `snakemake` commands read (squidflow.config.layers, through
each program's own argument parser), and for your own dataset, the one the run records."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from helpers.markdown import followed
from helpers.runs import ROOT, clone_like, snakemake, squidflow
from helpers.videotools import make_clip

from squidflow import cli
from squidflow.config import layers as config_layers
from squidflow.runtime import run_record

README = ROOT / "README.md"
BIN = Path(sys.executable).parent
MARK = "<!-- journey:"
CONFIG_COMMANDS = ("check-config", "config", "label-studio", "targets", "evaluate")


def section(heading: str) -> str:
    """The README's section `## heading`, up to the next one."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def page_section(heading: str, shown: str | None = None) -> str:
    """The section `heading` of the docs page the README links to for it. With `shown`, the README's own commands
    that start so (in "The cluster and the cloud", its short form of the journey) are commands of that section."""
    page, text = followed(README, heading)
    if shown:
        argv = [tuple(shlex.split(ln, comments=True)) for ln in commands(text)]
        short = [ln for ln in commands(section("The cluster and the cloud")) if ln.startswith(shown)]
        assert short, f"README.md, 'The cluster and the cloud', shows no {shown!r}"
        for ln in short:
            assert tuple(shlex.split(ln, comments=True)) in argv, (
                f"README.md: {ln!r} is not in {page.name}, {heading!r}"
            )
    return text


def commands(text: str) -> list[str]:
    """The command lines of every bash block in `text`: lines joined where they end in `\\`, comments dropped."""
    out = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            if shlex.split(line, comments=True):
                out.append(" ".join(line.split()))
    return out


@dataclass
class Said:
    line: str
    argv: list[str]
    returncode: int
    output: str


class Journey:
    """Runs README lines in `clone` as a user would, each `snakemake` as a dry run."""

    def __init__(self, clone: Path, **env: str):
        self.clone, self.env, self.said = clone, dict(env), []

    def walk(self, lines: list[str]) -> list[Said]:
        for line in lines:
            argv = shlex.split(line, comments=True)
            if argv[0] == "export":
                self.env.update(a.split("=", 1) for a in argv[1:])
            else:
                self.said.append(self.run(line, argv))
        return self.said

    def run(self, line: str, argv: list[str]) -> Said:
        program = Path(argv[0]).name
        assert argv[0] in (program, f".venv/bin/{program}"), line  # the venv's programs, on the PATH or by path
        if program == "snakemake":
            res = snakemake(*argv[1:], *([] if "-n" in argv else ["-n"]), cwd=self.clone, env=self.env, timeout=600)
        elif program == "squidflow":
            res = squidflow(*argv[1:], cwd=self.clone, env=self.env)
        elif program == "make":  # the snakemake line the target runs (`make -n` prints it), as a dry run
            printed = subprocess.run(["make", "-n", *argv[1:]], cwd=self.clone, capture_output=True, text=True)
            runs = [shlex.split(x) for x in printed.stdout.splitlines() if x.startswith(".venv/bin/snakemake")]
            assert len(runs) == 1, printed.stdout
            return self.run(line, runs[0])
        elif program == "hf":  # an upload needs the Hub and a token: not run here
            assert (BIN / "hf").exists() and argv[1] == "upload", line
            return Said(line, argv, 0, "")
        else:
            raise AssertionError(f"a README command this test does not know how to run: {line}")
        out = res.stdout + res.stderr
        assert "usage:" not in out and "Traceback (most recent call last)" not in out, f"{line}\n{out[-3000:]}"
        return Said(line, argv, res.returncode, out)


def configuration(argv: list[str], clone: Path, monkeypatch) -> dict | None:
    """The configuration a command line reads, parsed by its own program's argument parser (None: it reads none)."""
    monkeypatch.chdir(clone)
    program = Path(argv[0]).name
    if program == "snakemake":
        from snakemake.cli import get_argument_parser

        args = get_argument_parser().parse_args(argv[1:])
        chosen = config_layers.layers(args.configfile or [], args.config or [], root=clone)
        directory = args.directory or Path(".")
    elif program == "squidflow" and argv[1] in CONFIG_COMMANDS:
        args = cli.parser().parse_args(argv[1:])
        if argv[1] == "evaluate" and not args.configfile:
            return None
        chosen, directory = config_layers.from_arguments(args, root=clone), args.directory
    else:
        return None
    return config_layers.record_config(config_layers.resolve(chosen, directory=directory, check_paths=False))


def same_configuration(said: list[Said], clone: Path, monkeypatch) -> dict:
    """Every command of a journey that reads a configuration reads the one its snakemake commands read (those that
    add no --config of their own); that configuration."""
    runs = [s for s in said if Path(s.argv[0]).name == "snakemake" and "--config" not in s.argv]
    assert runs, [s.line for s in said]
    workflow = configuration(runs[0].argv, clone, monkeypatch)
    for s in said:
        config = configuration(s.argv, clone, monkeypatch)
        if config is not None and (s in runs or Path(s.argv[0]).name == "squidflow"):
            assert config == workflow, f"{s.line} reads another configuration than {runs[0].line}"
    return workflow


def videos(folder: Path) -> None:
    for event in ("concert", "market"):
        for k, ext in enumerate(("mp4", "mkv", "webm")):
            make_clip(folder / event / f"clip {k}.{ext}", size="64x48", rate=6, seconds=1)


@pytest.fixture
def clone(tmp_path) -> Path:
    """A folder like a fresh clone, whose config/ is a folder of its own (a journey writes its config there)."""
    clone = clone_like(tmp_path, leave_out=("config", "mine.yaml", "my.yaml", "data"))
    (clone / "config").mkdir()
    for entry in (ROOT / "config").iterdir():
        (clone / "config" / entry.name).symlink_to(entry)
    return clone


def test_the_own_dataset_journey_runs_as_printed(clone, monkeypatch):
    text = section("Build your own dataset")
    lines = commands(text[text.index(MARK) :])
    assert [ln.split()[0] for ln in lines if not ln.startswith("export ")] == [".venv/bin/squidflow"] * 2 + [
        ".venv/bin/snakemake"
    ] + [".venv/bin/squidflow"] * 2 + [".venv/bin/snakemake"] + [".venv/bin/squidflow"] * 2 + [
        ".venv/bin/snakemake",
        ".venv/bin/snakemake",
        ".venv/bin/squidflow",
        ".venv/bin/hf",
    ]
    videos(clone / "my-videos")
    # the README's takedown step: the list the reader writes (read only by the run that names it)
    (clone / "runs/mine").mkdir(parents=True, exist_ok=True)
    (clone / "runs/mine/takedown.csv").write_text("video_id,requested,reason\nsome_video,2026-11-20,privacy\n")
    said = Journey(clone).walk(lines)
    (init, check, tasks, push, pull, run, push2, pull2, run2, takedown, publish_check, _) = said
    assert init.returncode == 0 and check.returncode == 0 and "valid" in check.output, init.output + check.output
    assert "note:" not in check.output  # read on the schema's defaults, and written for them
    mine = yaml.safe_load((clone / "mine.yaml").read_text())
    assert mine["sources"] == [{"type": "local", "root": "../../my-videos", "license": None}] and list(
        mine["events"]
    ) == [
        "concert",
        "market",
    ]
    assert tasks.returncode == 0 and "label_studio_tasks" in tasks.output, tasks.output[-3000:]
    for cmd in (push, push2):  # no task folder yet (a dry run made none): the message says what to run first
        assert cmd.returncode == 2 and "no <task>/tasks.json to import" in cmd.output, cmd.output
    for cmd in (pull, pull2):
        assert cmd.returncode == 2 and "squidflow label-studio push" in cmd.output, cmd.output
    for cmd in (run, run2, takedown):  # nothing pulled: ingestion's files are named with the command that makes them
        assert cmd.returncode != 0, cmd.output[-3000:]
        assert re.search(r"its files are not there: results/annotation/answers/label_studio/A\.json", cmd.output)
        assert "squidflow label-studio pull" in cmd.output
    assert publish_check.returncode == 1 and "not a folder" in publish_check.output
    workflow = same_configuration(said, clone, monkeypatch)
    assert (
        workflow["annotation"]["label_studio"]
        == config_layers.resolve(config_layers.layers([clone / "mine.yaml"], root=clone), check_paths=False)[
            "annotation"
        ]["label_studio"]
    )  # push builds its tasks' image URLs from what the run wrote them with
    # the workflow's own record of the configuration it read (a run with --touch records it before its first job)
    snakemake(*tasks.argv[1:], "--touch", cwd=clone)
    recorded = yaml.safe_load((clone / "runs/mine" / run_record.RECORD).read_text())
    assert recorded["config"] == workflow
    assert [Path(name).name for name in run_record.names(recorded)] == ["mine.yaml"], run_record.names(recorded)


def test_the_demo_journey_runs_as_printed(clone, monkeypatch):
    lines = commands(section("Two commands")) + commands(section("The report"))
    assert [ln.split("#")[0].strip() for ln in lines] == ["make demo", "make test", "make report"]
    said = Journey(clone).walk([ln for ln in lines if not ln.startswith("make test")])  # the suite: not from here
    demo, report = said
    assert demo.returncode == 0 and "make_demo_videos" in demo.output, demo.output[-3000:]
    assert report.returncode != 0 and "marked for report but does not exist" in report.output, report.output[-3000:]
    workflow = same_configuration(said[:1], clone, monkeypatch)
    assert workflow == config_layers.record_config(
        config_layers.resolve(config_layers.layers([], root=ROOT), check_paths=False)
    )  # the demo config, read from the workflow's folder


def test_the_label_studio_journey_runs_as_printed(clone, monkeypatch):
    lines = commands(page_section("Your own annotators on Label Studio"))
    assert [Path(shlex.split(ln, comments=True)[0]).name for ln in lines] == [
        "snakemake",
        "export",
        "squidflow",
        "squidflow",
        "snakemake",
    ]
    videos(clone / "videos")
    assert squidflow("init", "videos", "--output", "my.yaml", "--license", "cc-by-4.0", "--citation", "@misc{m}",
                     cwd=clone).returncode == 0  # fmt: skip
    said = Journey(clone).walk(lines)
    tasks, push, pull, ingest = said
    assert tasks.returncode == 0 and "label_studio_tasks" in tasks.output, tasks.output[-3000:]
    assert push.returncode == 2 and "no <task>/tasks.json to import" in push.output, push.output
    assert pull.returncode == 2 and "squidflow label-studio push" in pull.output, pull.output
    assert ingest.returncode != 0 and "its files are not there" in ingest.output, ingest.output[-3000:]
    same_configuration(said, clone, monkeypatch)


def test_the_publish_journey_runs_as_printed(clone):
    lines = commands(page_section("Publish your dataset"))
    assert [shlex.split(ln, comments=True)[0] for ln in lines] == ["squidflow", "hf"]
    check, upload = Journey(clone).walk(lines)
    assert check.returncode == 1 and "not a folder" in check.output, check.output  # nothing published here yet
    assert upload.returncode == 0


def test_the_slurm_journey_runs_as_printed(clone, monkeypatch, shared_data):
    lines = commands(page_section("SLURM", "snakemake --profile profiles/slurm"))
    assert sum(ln.startswith("snakemake --profile profiles/slurm") for ln in lines) == 2, lines
    (clone / "data" / "standard").mkdir(parents=True)  # config/squid-e.yaml's standard images: the user's to supply
    said = Journey(clone, SQUIDFLOW_DATA=str(shared_data)).walk(lines)
    for s in said:
        assert s.returncode == 0 and "video_candidates" in s.output, s.output[-3000:]
        assert "slurm_account=mylab" in s.output, s.output[-3000:]  # what it will ask Slurm for, as exported
    same_configuration(said, clone, monkeypatch)


def test_the_s3_journey_runs_as_printed(clone, monkeypatch):
    lines = commands(page_section("Cloud and object storage", "snakemake --profile profiles/s3"))
    assert lines[-1].startswith("snakemake --profile profiles/s3 --configfile config/mine.yaml"), lines
    videos(clone / "videos")
    res = squidflow("init", "videos", "--output", "config/mine.yaml", "--license", "cc-by-4.0", "--citation",
                    "@misc{m}", cwd=clone)  # fmt: skip
    assert res.returncode == 0, res.stderr
    said = Journey(clone).walk(lines)
    (run,) = said  # no bucket here: the run stops at what it lacks (the annotators' answers), before any transfer
    assert run.returncode != 0 and "its files are not there" in run.output, run.output[-3000:]
    same_configuration(said, clone, monkeypatch)
