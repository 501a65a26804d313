"""A config for your own videos and raters (issue 47): check-config and the run stop before any job, naming every key
that the demo's defaults would otherwise fill (judgments.source, training's standard data and events, the publish
keys, a licence that is not a Hub id), instead of a job "failing with a bug" later."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from squidflow.config.validation import ConfigError, load_config
from squidflow.vocabulary import licenses

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "config" / "config.yaml"
PUBLISH = {"name": "my-events", "license": "cc-by-4.0", "citation": "@misc{mine, title={Mine}}"}


def _videos(tmp: Path) -> Path:
    for event in ("concert", "market"):
        (tmp / "videos" / event).mkdir(parents=True)
    return tmp / "videos"


def _check(tmp: Path, overlay: dict) -> str:
    """squidflow check-config on the demo config with `overlay` on top (as `snakemake --configfile` stacks them)."""
    path = tmp / "mine.yaml"
    path.write_text(yaml.safe_dump(overlay), encoding="utf-8")
    res = subprocess.run(
        [sys.executable, "-m", "squidflow.cli", "check-config", str(DEMO), str(path), "--directory", str(tmp)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    return f"{res.returncode}\n{res.stdout}{res.stderr}"


def test_local_sources_without_a_judgment_source_stop_naming_the_sources_to_set(tmp_path):
    _videos(tmp_path)
    out = _check(
        tmp_path, {"sources": [{"type": "local", "root": "videos"}], "stages": ["videos", "frames", "judgments"]}
    )
    assert out.startswith("2\n")
    # the demo config states no default (issue 56): judgments.source stays the schema's, which the user did not set
    assert "judgments.source is not set" in out and "label_studio" in out and "squidflow label-studio pull" in out
    # and without the demo config underneath: named the same way
    with pytest.raises(ConfigError, match="judgments.source is not set"):
        load_config(
            _write(tmp_path, {"sources": [{"type": "local", "root": "videos"}], "stages": ["judgments"]}),
            base_dir=tmp_path,
        )


def _write(tmp: Path, config: dict) -> Path:
    path = tmp / "alone.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_videos_and_frames_alone_need_no_judgment_source(tmp_path):
    _videos(tmp_path)
    out = _check(tmp_path, {"sources": [{"type": "local", "root": "videos"}], "stages": ["videos", "frames"]})
    assert out.startswith("0\n"), out


def test_the_simulated_panel_on_own_videos_needs_their_truth_named(tmp_path):
    """`judgments.source: simulated` on a local source stops (the panel knows only the demo's videos), unless
    judgments.panel.truth names a truth table of those videos (issue 61: the scale benchmark's own clips)."""
    _videos(tmp_path)
    base = {"sources": [{"type": "local", "root": "videos"}], "stages": ["videos", "frames", "judgments"]}
    simulated = {**base, "judgments": {"source": "simulated"}}
    out = _check(tmp_path, simulated)
    assert out.startswith("2\n") and "judgments.source is 'simulated'" in out and "judgments.panel.truth" in out
    given = {**base, "judgments": {"source": "simulated", "panel": {"truth": "truth.parquet"}}}
    out = _check(tmp_path, given)
    assert out.startswith("2\n") and "judgments.panel.truth = 'truth.parquet': no such file" in out, out
    assert "judgments.source is 'simulated'" not in out
    (tmp_path / "truth.parquet").write_bytes(b"")
    out = _check(tmp_path, given)
    assert out.startswith("0\n"), out


def test_the_readmes_publish_example_names_what_training_needs(tmp_path):
    """`stages: [videos, frames, judgments, training, publish]` with local videos: today training_sets failed with a
    bug on the demo's calibration target; now check-config names the keys, every one at once."""
    _videos(tmp_path)
    out = _check(
        tmp_path,
        {
            "sources": [{"type": "local", "root": "videos"}],
            "stages": ["videos", "frames", "judgments", "training", "publish"],
            "judgments": {"source": "label_studio"},
            "publish": {"name": "", "license": ""},
        },
    )
    assert out.startswith("2\n")
    assert "standard_data.path" in out
    assert "training.classification.events" in out and "birthday_party" in out and "'concert', 'market'" in out
    assert "training.calibration.target_event = 'birthday_party'" in out
    assert "publish.name, publish.license, publish.citation are empty" in out  # every missing key at once


@pytest.mark.parametrize(
    ("given", "closest"),
    [
        ("CC BY 4.0", "cc-by-4.0"),
        ("MIT", "mit"),
        ("Apache-2.0", "apache-2.0"),
        ("cc-by-nc-4", "cc-by-nc-4.0"),
        ("CC-BY-SA-4.0", "cc-by-sa-4.0"),
    ],
)
def test_a_licence_that_is_not_a_hub_id_stops_with_the_closest_one(tmp_path, given, closest):
    out = _check(tmp_path, {"stages": ["publish"], "publish": {**PUBLISH, "license": given}})
    assert out.startswith("2\n")
    assert f"publish.license = {given!r} is not a Hugging Face Hub licence id. Did you mean '{closest}'?" in out


def test_other_needs_its_name_and_link_and_hub_ids_pass(tmp_path):
    out = _check(tmp_path, {"stages": ["publish"], "publish": {**PUBLISH, "license": "other"}})
    assert "publish.license_name and publish.license_link are empty" in out
    ok = _check(
        tmp_path,
        {
            "stages": ["publish"],
            "publish": {
                **PUBLISH,
                "license": "other",
                "license_name": "mine-1.0",
                "license_link": "https://example.org/licence",
            },
        },
    )
    assert ok.startswith("0\n"), ok
    assert licenses.spdx_url("cc-by-4.0") == "https://spdx.org/licenses/CC-BY-4.0.html"
    assert licenses.spdx_url("other", "https://example.org/licence") == "https://example.org/licence"


def test_the_shipped_configs_still_pass(tmp_path):
    for config in ("config.yaml", "squid-e-release.yaml", "guesswhat.yaml", "sherlock.yaml"):
        load_config(ROOT / "config" / config, check_paths=False)
