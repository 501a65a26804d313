"""The behaviours squidflow changes in Snakemake's S3 storage plugin (snakemake-storage-plugin-s3), and only on the
versions it was tested on (docs/upstream.md, changes 3 and 3a, with their upstream reports).

A folder on S3 is no object but a prefix: the plugin answers "does `results/frames/shard0` exist?" by listing the
keys under `results/frames/shard0/`, and keeps the answer on its storage object (`is_dir`) for as long as the
object lives. The submitting Snakemake asks about each output while it builds the DAG, and again after the job
has run and uploaded it, on the same object. A folder that was not there at the first question is therefore
still "missing in storage" after its job uploaded it, and the job is reported failed. A clean run does not show
it (Snakemake does not ask about the outputs of a job whose inputs are still to be made); a rerun after a kill
does, for every directory output the killed run had not reached (tests/e2e/test_s3.py). That is a wrong
answer, not a slow one, so `patch_directory_check` makes the plugin forget a "no" whenever it is asked whether
the object exists: one LIST request where a HEAD request has already found no object of that name. It stays until
the plugin asks again itself. With it, answers the plugin asks again are kept (issue 61): an object that HEAD finds
is a file (no listing for its modification time and size), that HEAD's time and size serve the questions that
follow it for HEAD_TTL_S, and a bucket found is not asked for again.

While Snakemake builds the DAG it asks a storage object for an inventory: what one request can tell about it and
its neighbours. The plugin (0.3.6) keys its inventory by the bucket, so it lists the prefix of the first file asked
about and nothing after: every other file costs a HEAD request, and a missing one (every output of a fresh run) a
HEAD of the key, a HEAD of the bucket and a LIST of `<key>/`. `patch_inventory` keys it by the file's folder: each
folder is listed once (its keys with their sizes and times, its sub-folders), and a file the listing does not hold
is known missing without a request (issue 61: the small DAG on S3 against local disk, benchmarks/storage.py). A
slow answer, not a wrong one: it goes when the plugin lists per folder itself.

Outside the tested versions (squidflow.runtime.upstream.TESTED, the same bound as pyproject.toml's) nothing is
patched: a warning says so once, and the plugin runs as it ships.
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import Callable
from typing import Any

from squidflow.runtime.upstream import within_tested

PLUGIN = "snakemake-storage-plugin-s3"
WHAT = (
    "a folder output on S3 is looked up again after its job uploaded it; without it a rerun after a kill can "
    "report a folder its job uploaded as `missing in storage`: run the same command again"
)
WHAT_INVENTORY = "one listing per folder while the DAG is built; without it a request per file, slower, same answers"


HEAD_TTL_S = 2.0  # how long a file's HEAD answer serves its modification time and size (issue 61)
SINGLE_PUT_MAX = 8 * 1024**2  # boto3's multipart threshold: a file below it is one PUT request


def patch_directory_check(
    version: str | None = None, warn: Callable[[str], None] | None = None, clock: Callable[[], float] = time.monotonic
) -> bool:
    """Make the S3 plugin's storage objects forget a "not a folder" each time they are asked whether they exist and
    no object of their name is found, so that a folder uploaded after a first "no" is seen; a "yes" is kept, as the
    plugin keeps it. Fewer requests for the same answers (issue 61):
    - an object found by that question is a file: its modification time and size (which ask whether it is a folder
      first) need no listing;
    - the HEAD answer of that question serves the file's modification time and size asked within HEAD_TTL_S
      (Snakemake asks exists, then mtime or size, one after the other), unless this object was uploaded or removed
      since (`clock`: seconds, for the tests);
    - a "missing" (no object, no folder) answers the same question about the same key within HEAD_TTL_S, unless
      this process stored or removed the key since (Snakemake asks about a job's outputs two or three times while it
      prepares the job); a file another process (a remote job) uploads meanwhile is seen HEAD_TTL_S later at most,
      within Snakemake's `--latency-wait` (5 s by default);
    - the bucket, once found, is not asked for again until an object of it is removed (the plugin removes an
      emptied bucket).
    Only within squidflow.runtime.upstream.TESTED (else a warning, once, and no change); nothing where the plugin is
    not installed. Returns whether the check was replaced (once per process)."""
    try:
        import snakemake_storage_plugin_s3 as plugin
    except ImportError:
        return False
    StorageObject = plugin.StorageObject
    if getattr(StorageObject.exists, "squidflow_uncached", False):
        return False
    if not within_tested(PLUGIN, WHAT, version, warn):
        return False
    shipped = {name: getattr(StorageObject, name) for name in ("exists", "bucket_exists", "remove", "store_object",
                                                                "mtime", "size")}  # fmt: skip
    methods = {**_file_answers(plugin, shipped, clock), **_bucket_answers(shipped)}
    methods["exists"].squidflow_uncached = True  # type: ignore[attr-defined]
    for name, method in methods.items():
        setattr(StorageObject, name, method)
    return True


def _file_answers(plugin: Any, shipped: dict[str, Any], clock: Callable[[], float]) -> dict[str, Any]:
    """patch_directory_check's `exists`, `mtime` and `size`: a folder looked up again after a "no", a file's HEAD
    answer kept for HEAD_TTL_S; `store_object` forgets it."""

    def exists(self: Any) -> bool:
        missing = _missing(self)
        if clock() - missing.get((self.bucket, self.key), -HEAD_TTL_S - 1) <= HEAD_TTL_S:
            return False  # found missing a moment ago, and not stored or removed by this process since
        try:  # the client's HEAD, not a boto3 resource made per question (a fifth of the main process's S3 time)
            head = self.provider.s3c.meta.client.head_object(Bucket=self.bucket, Key=self.key)
        except plugin.botocore.exceptions.ClientError as exc:
            self.__dict__.pop("squidflow_head", None)
            if exc.response["Error"]["Code"] != "404":
                return shipped["exists"](self)  # the plugin's own message for a bad request, its error otherwise
            self._is_dir = None  # a folder may have been uploaded since the last "no": list it again
            found = self.bucket_exists() and self.is_dir()
            if not found:
                missing[(self.bucket, self.key)] = clock()
            return found
        missing.pop((self.bucket, self.key), None)
        if self._is_dir is None:  # an object of this name: a file (a folder on S3 is a prefix, not an object)
            self._is_dir = False
        self.__dict__["squidflow_head"] = (clock(), head["LastModified"].timestamp(), head["ContentLength"])
        return True

    def head(self: Any) -> tuple[float, int] | None:
        """The last exists() answer's (modification time, size), if a file's and younger than HEAD_TTL_S."""
        kept = self.__dict__.get("squidflow_head")
        if kept is None or self._is_dir is not False or clock() - kept[0] > HEAD_TTL_S:
            return None
        return kept[1], kept[2]

    def mtime(self: Any) -> float:
        kept = head(self)
        return kept[0] if kept is not None else shipped["mtime"](self)

    def size(self: Any) -> int:
        kept = head(self)
        return kept[1] if kept is not None else shipped["size"](self)

    def store_object(self: Any) -> None:
        """The file, or each file of the folder, in one PUT request each where all are below SINGLE_PUT_MAX (the
        plugin's `upload_file` starts a transfer manager and its threads per file); else as the plugin stores it."""
        _forget(self)
        local = self.local_path()
        files = sorted(f for f in local.rglob("*") if f.is_file()) if local.is_dir() else [local]
        if not self.bucket_exists() or any(f.stat().st_size >= SINGLE_PUT_MAX for f in files):
            return shipped["store_object"](self)  # creates the bucket, uploads in parts, as it ships
        if local.is_dir():
            self._is_dir = True
        client = self.provider.s3c.meta.client
        for f in files:
            key = self.key if f == local else f"{self.key}/{f.relative_to(local).as_posix()}"
            with open(f, "rb") as body:
                client.put_object(Bucket=self.bucket, Key=key, Body=body)
        return None

    return {"exists": exists, "mtime": mtime, "size": size, "store_object": store_object}


def _missing(obj: Any) -> dict[tuple[str, str], float]:
    """The provider's (bucket, key) -> when this process last found it missing (neither an object nor a folder),
    shared by every storage object of the key (Snakemake makes one per job that names the file)."""
    return obj.provider.__dict__.setdefault("squidflow_missing", {})


def _buckets(obj: Any) -> set[str]:
    """The provider's buckets this process found (asked for again once an object of one is removed)."""
    return obj.provider.__dict__.setdefault("squidflow_buckets", set())


def _forget(obj: Any) -> None:
    """What this process kept about the object's key (its HEAD answer, a "missing"): it stores or removes it now."""
    obj.__dict__.pop("squidflow_head", None)
    _missing(obj).pop((obj.bucket, obj.key), None)


def _bucket_answers(shipped: dict[str, Any]) -> dict[str, Any]:
    """patch_directory_check's `bucket_exists` (a bucket found, kept per provider) and `remove` (which forgets it,
    and the object's HEAD answer)."""

    def bucket_exists(self: Any) -> bool:
        known = _buckets(self)
        if self.bucket in known:
            return True
        found = shipped["bucket_exists"](self)
        if found:
            known.add(self.bucket)
        return found

    def remove(self: Any) -> None:
        _forget(self)
        _buckets(self).discard(self.bucket)
        shipped["remove"](self)

    return {"bucket_exists": bucket_exists, "remove": remove}


def patch_inventory(version: str | None = None, warn: Callable[[str], None] | None = None) -> bool:
    """Make the S3 plugin's inventory list each folder once (the direct keys with their sizes and modification times,
    and the sub-folders, which exist) and tell Snakemake that the folder is inventoried, so that a file it does not
    hold is missing without a request. Only within squidflow.runtime.upstream.TESTED (else a warning, once, and no
    change); nothing where the plugin is not installed. Returns whether the inventory was replaced (once per
    process)."""
    try:
        import snakemake_storage_plugin_s3 as plugin
    except ImportError:
        return False
    if getattr(plugin.StorageObject.inventory, "squidflow_per_folder", False):
        return False
    if not within_tested(PLUGIN, WHAT_INVENTORY, version, warn):
        return False

    def get_inventory_parent(self: Any) -> str:
        # the folder's cache key and a slash: a name no file has (a `directory()` output may be that folder)
        return self.cache_key(posixpath.dirname(self.local_suffix())) + "/"

    async def inventory(self: Any, cache: Any) -> None:
        marker = self.get_inventory_parent()
        if marker in cache.exists_in_storage:
            return
        cache.exists_in_storage[marker] = True
        folder = posixpath.dirname(self.key)
        prefix = f"{folder}/" if folder else ""
        pages = self.provider.s3c.meta.client.get_paginator("list_objects_v2")
        try:
            for page in pages.paginate(Bucket=self.bucket, Prefix=prefix, Delimiter="/"):
                for obj in page.get("Contents", []):
                    if obj["Key"].endswith("/"):
                        continue
                    key = self.cache_key(self._local_suffix_from_key(obj["Key"]))
                    cache.mtime[key] = plugin.Mtime(storage=obj["LastModified"].timestamp())
                    cache.size[key] = obj["Size"]
                    cache.exists_in_storage[key] = True
                for sub in page.get("CommonPrefixes", []):  # a folder (a directory() output): it exists
                    cache.exists_in_storage[self.cache_key(self._local_suffix_from_key(sub["Prefix"].rstrip("/")))] = (
                        True
                    )
        except plugin.botocore.exceptions.ClientError:  # no such bucket, no permission: each file is asked as shipped
            return
        inventoried = getattr(cache.exists_in_storage, "has_inventory", None)
        if inventoried is not None:  # snakemake.io.ExistsDict: a file of this folder not listed above is missing
            inventoried.add(marker)

    inventory.squidflow_per_folder = True  # type: ignore[attr-defined]
    plugin.StorageObject.get_inventory_parent = get_inventory_parent  # type: ignore[method-assign]
    plugin.StorageObject.inventory = inventory  # type: ignore[method-assign]
    return True
