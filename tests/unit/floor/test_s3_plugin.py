"""squidflow.runtime.s3_plugin on a real S3 API (moto's server on 127.0.0.1, tests/helpers/moto_s3.py): the S3
storage plugin as it ships keeps a folder's first "missing" on its storage object, so a folder uploaded after that
first question stays missing; patched, it is found. The same failure in a whole run, a rerun after a kill:
tests/e2e/test_s3.py. docs/upstream.md, section 3."""

from __future__ import annotations

import tempfile
import uuid

import pytest
from helpers import moto_s3

from squidflow.runtime import s3_plugin, upstream

BUCKET = "squidflow-is-dir"

plugin = pytest.importorskip("snakemake_storage_plugin_s3")
# the plugin's own checks, as this module first sees them (no test process runs an S3 workflow in-process)
SHIPPED_EXISTS = plugin.StorageObject.exists
SHIPPED_CHECKS = {name: getattr(plugin.StorageObject, name)
                  for name in ("exists", "bucket_exists", "remove", "store_object", "mtime", "size")}  # fmt: skip


def _as_shipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plugin's existence check, bucket check and removal as it ships, for this test (and back after it)."""
    for name, method in SHIPPED_CHECKS.items():
        monkeypatch.setattr(plugin.StorageObject, name, method)


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch, tmp_path):
    moto_s3.moto_or_skip()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the storage objects' local copies: this test's own
    with moto_s3.s3_server() as server:
        for key, value in server.env.items():
            monkeypatch.setenv(key, value)
        server.client().create_bucket(Bucket=BUCKET)
        yield server


def _asked_then_uploaded(server: moto_s3.S3, wait=lambda: None) -> tuple[bool, bool, bool]:
    """A folder's storage object asked before its first key exists, then (after `wait()`) again after another
    process uploaded it: (before, after on the same object, after on a new object), as Snakemake asks while building
    the DAG and after a remote job."""
    from squidflow.videos.storage import provider

    # moto keeps its buckets for the life of the process (its servers share one backend): a folder of this test's own
    folder_name = f"run/{uuid.uuid4().hex}/results/frames/shard0"
    prov = provider(f"s3://{BUCKET}/run")
    folder = prov.object(f"s3://{BUCKET}/{folder_name}")
    before = folder.exists()
    server.client().put_object(Bucket=BUCKET, Key=f"{folder_name}/.squidflow-frames", Body=b"")
    wait()
    return before, folder.exists(), prov.object(f"s3://{BUCKET}/{folder_name}").exists()


def test_the_plugin_as_it_ships_keeps_a_folders_first_missing(s3, monkeypatch: pytest.MonkeyPatch) -> None:
    assert not getattr(SHIPPED_EXISTS, "squidflow_uncached", False)
    _as_shipped(monkeypatch)
    before, same, new = _asked_then_uploaded(s3)
    assert before is False and new is True
    if same:
        pytest.fail(
            "the S3 plugin looks a folder up again itself now: drop squidflow.runtime.s3_plugin (docs/upstream.md)"
        )


def test_patched_a_folder_uploaded_after_the_first_question_is_found(s3, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found once HEAD_TTL_S has passed since the "missing" (the questions Snakemake asks while it prepares a job
    share one answer): what a remote job uploads is seen within Snakemake's --latency-wait (5 s by default)."""
    _as_shipped(monkeypatch)
    now = [0.0]
    assert s3_plugin.patch_directory_check(clock=lambda: now[0]) is True
    assert s3_plugin.patch_directory_check() is False  # once per module
    assert _asked_then_uploaded(s3) == (False, False, False)  # within HEAD_TTL_S: the "missing" of a moment ago

    def wait() -> None:
        now[0] += s3_plugin.HEAD_TTL_S + 0.1

    assert _asked_then_uploaded(s3, wait) == (False, True, True)


def test_patched_a_file_found_is_not_listed_as_a_folder_and_a_bucket_found_is_not_asked_again(
    s3, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 61: as it ships, each question about a file's modification time or size is a HEAD request and lists
    `<key>/` (is it a folder?), and each missing object asks for its bucket; patched, an object found by `exists()`
    is a file whose HEAD answers its modification time and size for HEAD_TTL_S, and the bucket is asked once until
    an object of it is removed; a "missing" answers the same question for HEAD_TTL_S. The answers stay the plugin's
    own."""
    from squidflow.videos.storage import provider

    now = [0.0]
    kinds = ("HEAD object", "GET list", "HEAD bucket")

    def ask(run: str) -> tuple[tuple, dict[str, int], dict[str, int], dict[str, int]]:
        """The answers, then the requests of the file's questions, of the missing ones, and of the file's again
        after HEAD_TTL_S and after an upload."""
        key = f"{run}/results/videos/videos.parquet"
        s3.client().put_object(Bucket=BUCKET, Key=key, Body=b"x")
        prov, answers, counts = provider(f"s3://{BUCKET}/{run}"), [], []
        file = prov.object(f"s3://{BUCKET}/{key}")

        def later(obj):
            now[0] += s3_plugin.HEAD_TTL_S + 1
            first = obj.mtime() > 0  # the last HEAD is too old: asked again
            obj.local_path().parent.mkdir(parents=True, exist_ok=True)
            obj.local_path().write_bytes(b"xyz")
            obj.store_object()
            return first, obj.size()  # the upload's size, not the HEAD's before it

        for obj, questions in (
            (file, lambda obj: (obj.exists(), obj.size(), obj.mtime() > 0, obj.mtime() > 0, obj.exists())),
            (prov.object(f"s3://{BUCKET}/{run}/results/a.parquet"), lambda obj: (
                obj.exists(), obj.exists(), prov.object(f"s3://{BUCKET}/{run}/results/b.parquet").exists())),
            (file, later),
        ):  # fmt: skip
            before = dict(s3.requests)
            answers += questions(obj)
            counts.append({kind: s3.requests[kind] - before.get(kind, 0) for kind in kinds})
        return tuple(answers), *counts

    _as_shipped(monkeypatch)
    shipped, *shipped_counts = ask(f"run/{uuid.uuid4().hex}")
    assert s3_plugin.patch_directory_check(clock=lambda: now[0]) is True
    patched, *patched_counts = ask(f"run/{uuid.uuid4().hex}")
    assert shipped == patched == (True, 1, True, True, True, False, False, False, True, 3)
    as_counts = [dict(zip(kinds, c, strict=True)) for c in ((5, 1, 0), (3, 2, 3), (2, 0, 1))]
    # as shipped, a missing object's second question is not listed (the first "no" kept: change 3 lists it again)
    assert shipped_counts == as_counts, shipped_counts
    # patched: the file's HEAD answers its size and time; a missing object asked twice within HEAD_TTL_S is asked
    # once; the bucket asked once; after HEAD_TTL_S the time and after an upload the size are asked again
    assert patched_counts == [dict(zip(kinds, c, strict=True)) for c in ((2, 0, 0), (2, 2, 1), (2, 0, 0))], (
        patched_counts
    )


def test_outside_the_tested_versions_the_plugin_runs_as_it_ships_and_a_warning_says_so_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _as_shipped(monkeypatch)
    monkeypatch.setattr(upstream, "_warned", set())
    said: list[str] = []
    low, high = upstream.TESTED[s3_plugin.PLUGIN]
    assert not s3_plugin.patch_directory_check(version="0.4.0", warn=said.append)
    assert not s3_plugin.patch_directory_check(version="0.4.1", warn=said.append)
    assert not getattr(plugin.StorageObject.exists, "squidflow_uncached", False)
    assert len(said) == 1 and f"{s3_plugin.PLUGIN} 0.4.0 is outside" in said[0] and high in said[0], said


SHIPPED_INVENTORY = (plugin.StorageObject.inventory, plugin.StorageObject.get_inventory_parent)
FOLDERS = {"results/videos": ["a.parquet", "b.parquet"], "results/frames": ["shard0.parquet", "shard1.parquet"],
           "results/frames/shard0": [".squidflow-frames", "v_0.jpg"], "results/dataset": ["frames.parquet"]}  # fmt: skip
ASKED = [f"{folder}/{name}" for folder, names in FOLDERS.items() for name in names] + [
    "results/frames/shard0",  # a directory() output: a prefix, no object
    "results/frames/shard2.parquet",  # missing, in a folder that exists
    "results/report/summary.html",  # missing, in a folder that does not
]


def _plan_like_snakemake(server: moto_s3.S3) -> tuple[dict[str, bool], int]:
    """Every ASKED file's existence as Snakemake learns it while it builds the DAG (snakemake.io: the inventory of
    the file first, then the cache's answer, else the plugin's own `exists`), and the requests that took."""
    import asyncio

    from snakemake.io import IOCache

    from squidflow.videos.storage import provider

    run = f"run/{uuid.uuid4().hex}"
    for folder, names in FOLDERS.items():
        for name in names:
            server.client().put_object(Bucket=BUCKET, Key=f"{run}/{folder}/{name}", Body=b"x")
    prov, cache = provider(f"s3://{BUCKET}/{run}"), IOCache(max_wait_time=20)
    before = server.requests.total()
    found = {}
    for path in ASKED:
        obj = prov.object(f"s3://{BUCKET}/{run}/{path}")
        key, parent = obj.cache_key(), obj.get_inventory_parent()
        if key not in cache.exists_in_storage and parent not in cache.exists_in_storage.has_inventory:
            asyncio.run(obj.inventory(cache))
        known = key in cache.exists_in_storage or parent in cache.exists_in_storage.has_inventory
        found[path] = cache.exists_in_storage[key] if known else obj.exists()
    return found, server.requests.total() - before


def test_the_inventory_lists_each_folder_once_and_answers_as_the_plugin_does(
    s3, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 61: the plugin as it ships lists the first file's prefix and asks every other file with its own
    requests (a missing one: HEAD key, HEAD bucket, LIST); patched, each folder is one LIST and the answers are the
    same."""
    truth = {path: not path.endswith(("shard2.parquet", "summary.html")) for path in ASKED}
    monkeypatch.setattr(plugin.StorageObject, "inventory", SHIPPED_INVENTORY[0])
    monkeypatch.setattr(plugin.StorageObject, "get_inventory_parent", SHIPPED_INVENTORY[1])
    shipped, shipped_requests = _plan_like_snakemake(s3)
    assert s3_plugin.patch_inventory() is True
    assert s3_plugin.patch_inventory() is False  # once per module
    patched, patched_requests = _plan_like_snakemake(s3)
    assert shipped == truth and patched == truth
    assert patched_requests == 5  # one listing per folder: videos, frames, frames/shard0, dataset, report
    assert shipped_requests > 2 * patched_requests, (shipped_requests, patched_requests)


def test_patched_a_folder_and_a_file_are_stored_as_the_plugin_stores_them(s3, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 61: patched, each file below SINGLE_PUT_MAX is one PUT request (the plugin's `upload_file` starts a
    transfer manager per file); a folder's files land under `<folder>/`, as the plugin puts them, and a larger file
    is stored as the plugin stores it. The keys and bytes in the bucket are the same either way."""
    from squidflow.videos.storage import provider

    def store(run: str) -> dict[str, bytes]:
        prov = provider(f"s3://{BUCKET}/{run}")
        folder, big = (
            prov.object(f"s3://{BUCKET}/{run}/results/frames/shard0"),
            prov.object(f"s3://{BUCKET}/{run}/v.mp4"),
        )
        for name, data in (("a.jpg", b"a"), ("sub/b.jpg", b"bb"), (".squidflow-frames", b"")):
            (folder.local_path() / name).parent.mkdir(parents=True, exist_ok=True)
            (folder.local_path() / name).write_bytes(data)
        big.local_path().parent.mkdir(parents=True, exist_ok=True)
        big.local_path().write_bytes(b"v" * (s3_plugin.SINGLE_PUT_MAX + 1))
        folder.store_object()
        big.store_object()
        assert folder.exists() and folder.is_dir() and big.exists() and big.size() == s3_plugin.SINGLE_PUT_MAX + 1
        listed = s3.client().list_objects_v2(Bucket=BUCKET, Prefix=f"{run}/")["Contents"]
        return {o["Key"].removeprefix(f"{run}/"): s3.client().get_object(Bucket=BUCKET, Key=o["Key"])["Body"].read()
                for o in listed}  # fmt: skip

    _as_shipped(monkeypatch)
    shipped = store(f"run/{uuid.uuid4().hex}")
    assert s3_plugin.patch_directory_check() is True
    puts = s3.requests["PUT object"]
    patched = store(f"run/{uuid.uuid4().hex}")
    assert patched == shipped and set(shipped) == {"results/frames/shard0/a.jpg", "results/frames/shard0/sub/b.jpg",
                                                   "results/frames/shard0/.squidflow-frames", "v.mp4"}  # fmt: skip
    assert s3.requests["PUT object"] - puts >= 4  # three PUTs for the folder's files, one or more for the large file
