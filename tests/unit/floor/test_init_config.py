"""`squidflow init FOLDER` (issue 47): a config for a folder of event sub-folders that check-config accepts, with the
events from the folder names, a local source, Label Studio, the publish keys, and nothing of the demo's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]


def _cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "squidflow.cli", *map(str, args)], capture_output=True, text=True, cwd=cwd
    )


def test_init_writes_a_config_check_config_accepts(tmp_path):
    for event in ("concert", "street_market"):
        (tmp_path / "my videos" / event).mkdir(parents=True)
        for k in range(3):
            (tmp_path / "my videos" / event / f"clip {k}.mp4").write_bytes(b"")
    (tmp_path / "my videos" / "empty").mkdir()
    res = _cli(
        "init", "my videos", "--output", "mine.yaml", "--license", "cc-by-4.0", "--citation", "@misc{m}", cwd=tmp_path
    )
    assert res.returncode == 0, res.stderr
    config = yaml.safe_load((tmp_path / "mine.yaml").read_text())
    assert list(config["events"]) == ["concert", "street_market"]
    assert config["events"]["street_market"]["prompt"] == "street market"
    assert config["sources"] == [{"type": "local", "root": "my videos", "license": None}]
    assert config["judgments"]["source"] == "label_studio" and config["annotation"]["platform"] == "label_studio"
    # issue 58: what the README's Label Studio steps assume; the videos' licence marked unknown; images_per_hit
    # changed only where the folder forces it, and said so (three videos per event: four images per HIT, not six)
    assert config["annotation"]["label_studio"] == {"images": "local_files"}
    text = (tmp_path / "mine.yaml").read_text()
    assert "The videos' licence is unknown (sources[0].license: null" in text
    assert config["annotation"]["images_per_hit"] == 2 and "annotation.images_per_hit: 2, not 6" in text
    assert "note: annotation.images_per_hit: 2, not 6" in res.stdout
    header = [ln[len("#   ") :] for ln in text.splitlines() if ln.startswith("#   .venv/bin/")]
    assert header[0] == ".venv/bin/squidflow check-config --configfile mine.yaml"  # issue 56: as snakemake takes it
    assert "results/annotation/label_studio/A/tasks.json" in header[1]
    assert config["publish"]["license"] == "cc-by-4.0" and config["publish"]["name"] == "my-videos"
    assert "simulated" not in (tmp_path / "mine.yaml").read_text().split("\n", 3)[3]
    ok = _cli("check-config", "--configfile", "mine.yaml", cwd=tmp_path)  # the header's command, as written
    assert ok.returncode == 0, ok.stdout + ok.stderr
    again = _cli("init", "my videos", "--output", "mine.yaml", cwd=tmp_path)
    assert again.returncode == 2 and "exists" in again.stderr


def test_init_without_licence_names_the_keys_to_fill(tmp_path):
    for event in ("a", "b"):
        (tmp_path / "v" / event).mkdir(parents=True)
        (tmp_path / "v" / event / "x.webm").write_bytes(b"")
    assert _cli("init", "v", cwd=tmp_path).returncode == 0
    assert "# To fill before publishing: publish.license, publish.citation" in (tmp_path / "mine.yaml").read_text()
    res = _cli("check-config", ROOT / "config" / "config.yaml", "mine.yaml", cwd=tmp_path)
    assert res.returncode == 2 and "publish.license, publish.citation are empty" in res.stderr
    one = tmp_path / "one"
    (one / "only").mkdir(parents=True)
    (one / "only" / "x.mp4").write_bytes(b"")
    bad = _cli("init", "one", "--output", "o.yaml", cwd=tmp_path)
    assert bad.returncode == 2 and "at least two events" in bad.stderr


def test_init_keeps_the_papers_images_per_hit_when_every_event_has_enough_videos(tmp_path):
    for event in ("a", "b"):
        (tmp_path / "v" / event).mkdir(parents=True)
        for k in range(6):
            (tmp_path / "v" / event / f"x{k}.mp4").write_bytes(b"")
    res = _cli("init", "v", "--platform", "mturk", "--video-license", "cc-by-4.0", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    config = yaml.safe_load((tmp_path / "mine.yaml").read_text())
    assert "images_per_hit" not in config["annotation"] and "label_studio" not in config["annotation"]
    assert config["sources"][0]["license"] == "cc-by-4.0" and "not 6" not in res.stdout
    assert "next: .venv/bin/snakemake --configfile mine.yaml --cores 2 results/annotation/hits_A.csv" in res.stdout
