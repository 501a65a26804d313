"""README "Build your own dataset": every command of the journey runs as printed (issue 47), in a folder that looks
like the clone (its files linked) with a folder of videos beside it: `init` and `check-config` for real, each
`snakemake` as a dry run (-n), the Label Studio and publish commands up to the message that says what they lack
(no server here; tests/integration/test_own_dataset.py walks the same journey through a real one)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import yaml
from helpers.videotools import make_clip

ROOT = Path(__file__).resolve().parents[2]
MARK = "<!-- journey:"


def journey() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text[text.index(MARK) :]
    block = block[block.index("```bash\n") + 8 :]
    return [ln for ln in block[: block.index("```")].splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def clone_like(tmp: Path) -> Path:
    """tmp/clone: every top-level entry of the checkout linked, but no results, runs or Snakemake state."""
    clone = tmp / "clone"
    clone.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in ("results", "runs", "logs", ".snakemake", ".git", "mine.yaml"):
            (clone / entry.name).symlink_to(entry)
    for event in ("concert", "market"):
        for k, ext in enumerate(("mp4", "mkv", "webm")):
            make_clip(clone / "my-videos" / event / f"clip {k}.{ext}", size="64x48", rate=6, seconds=1)
    return clone


def test_the_journey_runs_as_printed(tmp_path):
    lines = journey()
    assert [ln.split()[0] for ln in lines if not ln.startswith("export ")] == [".venv/bin/squidflow"] * 2 + [
        ".venv/bin/snakemake"
    ] + [".venv/bin/squidflow"] * 2 + [".venv/bin/snakemake"] + [".venv/bin/squidflow"] * 2 + [
        ".venv/bin/snakemake",
        ".venv/bin/snakemake",
        ".venv/bin/squidflow",
        ".venv/bin/hf",
    ]
    clone = clone_like(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    said = []
    for line in lines:
        if line.startswith("export "):
            name, value = line[len("export ") :].split("=", 1)
            env[name] = value
            continue
        argv = shlex.split(line)
        if argv[0].endswith("/hf"):
            assert (clone / argv[0]).exists() and argv[1] == "upload"  # uploads need the Hub: not run here
            continue
        if argv[0].endswith("/snakemake"):
            argv.append("-n")
        if "takedown=takedown.csv" in argv:  # the README's step 6: the list the reader writes
            (clone / "runs/mine").mkdir(parents=True, exist_ok=True)
            (clone / "runs/mine/takedown.csv").write_text("video_id,requested,reason\nsome_video,2026-11-20,privacy\n")
        res = subprocess.run(argv, cwd=clone, env=env, capture_output=True, text=True, timeout=600)
        out = res.stdout + res.stderr
        said.append((line, res.returncode, out))
        assert "usage:" not in out and "Traceback (most recent call last)" not in out, f"{line}\n{out[-3000:]}"
    (init, check, tasks, push, pull, run, push2, pull2, run2, takedown, publish_check) = said
    assert init[1] == 0 and check[1] == 0 and "valid" in check[2], init[2] + check[2]
    mine = yaml.safe_load((clone / "mine.yaml").read_text())
    assert mine["sources"] == [{"type": "local", "root": "../../my-videos", "license": None}] and list(
        mine["events"]
    ) == [
        "concert",
        "market",
    ]
    assert tasks[1] == 0 and "label_studio_tasks" in tasks[2], tasks[2][-3000:]
    for cmd in (push, push2):  # no task folder yet (a dry run made none): the message says what to run first
        assert cmd[1] == 2 and "no <task>/tasks.json to import" in cmd[2], cmd[2]
    for cmd in (pull, pull2):
        assert cmd[1] == 2 and "squidflow label-studio push" in cmd[2], cmd[2]
    for cmd in (run, run2, takedown):  # nothing pulled: ingestion's files are named with the command that makes them
        assert cmd[1] != 0 and re.search(r"its files are not there: results/judgments/label_studio/A\.json", cmd[2]), (
            cmd[2][-3000:]
        )
        assert "squidflow label-studio pull" in cmd[2]
    assert publish_check[1] == 1 and "not a folder" in publish_check[2]
