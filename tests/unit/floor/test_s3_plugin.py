"""squidflow.runtime.s3_plugin on a real S3 API (moto's server on 127.0.0.1, tests/helpers/moto_s3.py): the S3
storage plugin as it ships keeps a folder's first "missing" on its storage object, so a folder uploaded after that
first question stays missing; patched, it is found. The same failure in a whole run, a rerun after a kill:
tests/e2e/test_s3.py. docs/upstream.md, section 3."""

from __future__ import annotations

import uuid

import pytest
from helpers import moto_s3

from squidflow.runtime import s3_plugin, upstream

BUCKET = "squidflow-is-dir"

plugin = pytest.importorskip("snakemake_storage_plugin_s3")
# the plugin's own check, as this module first sees it (no test process runs an S3 workflow in-process)
SHIPPED_IS_DIR = plugin.StorageObject.is_dir


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch):
    moto_s3.moto_or_skip()
    with moto_s3.s3_server() as server:
        for key, value in server.env.items():
            monkeypatch.setenv(key, value)
        server.client().create_bucket(Bucket=BUCKET)
        yield server


def _asked_then_uploaded(server: moto_s3.S3) -> tuple[bool, bool, bool]:
    """A folder's storage object asked before its first key exists, then again after: (before, after on the same
    object, after on a new object), as Snakemake asks while building the DAG and after the job."""
    from squidflow.videos.storage import provider

    # moto keeps its buckets for the life of the process (its servers share one backend): a folder of this test's own
    folder_name = f"run/{uuid.uuid4().hex}/results/frames/shard0"
    prov = provider(f"s3://{BUCKET}/run")
    folder = prov.object(f"s3://{BUCKET}/{folder_name}")
    before = folder.exists()
    server.client().put_object(Bucket=BUCKET, Key=f"{folder_name}/.squidflow-frames", Body=b"")
    return before, folder.exists(), prov.object(f"s3://{BUCKET}/{folder_name}").exists()


def test_the_plugin_as_it_ships_keeps_a_folders_first_missing(s3, monkeypatch: pytest.MonkeyPatch) -> None:
    assert not getattr(SHIPPED_IS_DIR, "squidflow_uncached", False)
    monkeypatch.setattr(plugin.StorageObject, "is_dir", SHIPPED_IS_DIR)
    before, same, new = _asked_then_uploaded(s3)
    assert before is False and new is True
    if same:
        pytest.fail(
            "the S3 plugin looks a folder up again itself now: drop squidflow.runtime.s3_plugin (docs/upstream.md)"
        )


def test_patched_a_folder_uploaded_after_the_first_question_is_found(s3, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugin.StorageObject, "is_dir", SHIPPED_IS_DIR)  # and back to it after the test
    assert s3_plugin.patch_directory_check() is True
    assert s3_plugin.patch_directory_check() is False  # once per module
    assert _asked_then_uploaded(s3) == (False, True, True)


def test_outside_the_tested_versions_the_plugin_runs_as_it_ships_and_a_warning_says_so_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(plugin.StorageObject, "is_dir", SHIPPED_IS_DIR)
    monkeypatch.setattr(upstream, "_warned", set())
    said: list[str] = []
    low, high = upstream.TESTED[s3_plugin.PLUGIN]
    assert not s3_plugin.patch_directory_check(version="0.4.0", warn=said.append)
    assert not s3_plugin.patch_directory_check(version="0.4.1", warn=said.append)
    assert not getattr(plugin.StorageObject.is_dir, "squidflow_uncached", False)
    assert len(said) == 1 and f"{s3_plugin.PLUGIN} 0.4.0 is outside" in said[0] and high in said[0], said
