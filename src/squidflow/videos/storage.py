"""Videos in object storage (`sources: [{type: local, root: s3://bucket/prefix}]`), listed and read through the
Snakemake storage plugin of the URL's scheme (snakemake-storage-plugin-s3), configured as Snakemake configures it.

A bucket's videos are laid out like a local folder, `<root>/<event>/<video>.<ext>`, and listed by the same rules
(squidflow.videos.sources): the event from the folder, the id from the file's stem, every other object named in a
note. They are then acquired like downloads, not read in place: each object is a download candidate (`url` the
object's `s3://` URL, `path` results/videos/storage/<id>.mp4) fetched by the sharded acquire_videos jobs, so the
journal records it, a kill loses no finished video, failures get a reason (a 404 is `http_4xx`, a 5xx or a lost
connection is retried), and every later stage reads a file under results/ as it does for a download.

Why the jobs open the plugin themselves rather than naming each object as a rule's `storage(...)` input: the bucket's
contents are unknown when the DAG is built (like a URL list's), and one job per video is what the sharded
acquisition replaced (squidflow.videos.download_shards). The listing and the fetch happen in the localrules video_candidates
and acquire_videos, on the machine that runs Snakemake, as downloads do.

Settings: the plugin's own settings class, filled from the environment variables Snakemake reads for it
(SNAKEMAKE_STORAGE_S3_ENDPOINT_URL, ..._REGION, ..._ACCESS_KEY, ..._SECRET_KEY; without keys boto3's usual chain:
AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, ~/.aws). A `--storage-s3-*` command-line flag configures Snakemake's own
transfers only, not these jobs: set the environment variable. Neither the endpoint nor a key is written to a file or
a log: error messages name the object's URL with the endpoint replaced by `<endpoint>`.

Listing: the storage-plugin interface lists objects with `list_candidate_matches` (what `glob_wildcards` on a
storage object calls), but snakemake-storage-plugin-s3 0.3.6 compares the query's constant prefix
(`s3://bucket/...`) with the bare bucket name and always raises; its directory listing (`get_subkeys`, what its
`retrieve_object` uses for a folder object) lists the same keys through the plugin's configured client, so that is
used. Reading: the interface's `retrieve_object` into the path `set_local_path` names.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlparse

from squidflow.errors import InputError

log = logging.getLogger(__name__)

# URL scheme -> the Snakemake storage plugin that reads it (package snakemake-storage-plugin-<name>). Only s3 is
# tested (a moto S3 server, tests/e2e/test_storage_source.py).
PLUGINS = {"s3": "s3"}
STORAGE_URL = re.compile(r"^(?P<scheme>[a-z0-9]+)://(?P<bucket>[^/]+)(?P<prefix>/.*)?$")


def is_storage_url(value: Any) -> bool:
    """Is `value` an object-storage URL squidflow reads (`s3://bucket[/prefix]`)?"""
    m = STORAGE_URL.match(str(value or ""))
    return bool(m and m["scheme"] in PLUGINS)


@dataclass(frozen=True)
class StoredObject:
    """One object under a root: its key relative to the root (`<event>/<file>`), its URL, size and modification time
    (seconds, as the storage states it)."""

    relative: str
    url: str
    size: int
    mtime: float


def plugin_missing(url: str) -> str | None:
    """Why `url` cannot be read here (its storage plugin is not installed), or None."""
    import importlib.util

    scheme = urlparse(url).scheme
    name = PLUGINS.get(scheme)
    if name is None:
        return f"{url}: no storage plugin reads {scheme}:// URLs (squidflow reads {', '.join(PLUGINS)}://)"
    if importlib.util.find_spec(f"snakemake_storage_plugin_{name}") is None:
        return f"{url}: install snakemake-storage-plugin-{name} (pip install snakemake-storage-plugin-{name})"
    return None


def settings_from_environment(plugin: Any) -> Any:
    """The plugin's settings as Snakemake fills them from the environment (each field marked `env_var`), else their
    defaults."""
    given = {}
    for info in plugin.get_settings_info():
        value = os.environ.get(info["env_var"] or "") if info["env_var"] else None
        if value:
            given[info["name"]] = value
    return plugin.settings_cls(**given)


def provider(url: str) -> Any:
    """The storage plugin's provider for `url`'s scheme, with the environment's settings. Its local folder (a
    provider must have one) stays empty: a fetch names its own file (`set_local_path`)."""
    why = plugin_missing(url)
    if why:
        raise InputError(f"sources: {why}")
    from snakemake_interface_storage_plugins.registry import StoragePluginRegistry

    plugin = StoragePluginRegistry().get_plugin(PLUGINS[urlparse(url).scheme])
    return plugin.storage_provider(
        local_prefix=Path(tempfile.gettempdir()) / "squidflow-storage",
        logger=log,
        settings=settings_from_environment(plugin),
    )


def endpoint_hidden(text: str, prov: Any) -> str:
    """`text` with the provider's endpoint URL (and its host) replaced by `<endpoint>`: never into a file or a log."""
    endpoint = getattr(getattr(prov, "settings", None), "endpoint_url", None)
    if not endpoint:
        return text
    host = urlparse(endpoint).netloc
    for secret in sorted({endpoint.rstrip("/"), endpoint, host} - {""}, key=len, reverse=True):
        text = text.replace(secret, "<endpoint>")
    return text


def list_objects(root: str) -> list[StoredObject]:
    """Every object under `root` (`s3://bucket/prefix`), sorted by key. An InputError names the root when the
    storage cannot be listed (no such bucket, no access, no connection)."""
    prov = provider(root)
    base = root.rstrip("/")
    obj = prov.object(base)
    whole = obj.key in ("", ".")  # the bucket itself
    try:  # see the module's docstring: list_candidate_matches raises in 0.3.6
        items = list(obj.s3bucket().objects.all() if whole else obj.get_subkeys())
    except Exception as exc:  # botocore's errors: NoSuchBucket, AccessDenied, EndpointConnectionError
        raise InputError(
            f"sources: cannot list {base}/ ({endpoint_hidden(f'{type(exc).__name__}: {exc}', prov)}). Check the "
            "bucket and prefix in sources[].root, the endpoint (SNAKEMAKE_STORAGE_S3_ENDPOINT_URL) and the "
            "credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY) in the environment."
        ) from None
    prefix = "" if whole else obj.key + "/"
    bucket = urlparse(base).netloc
    out = [
        StoredObject(
            relative=item.key[len(prefix) :],
            url=f"{urlparse(base).scheme}://{bucket}/{item.key}",
            size=int(item.size),
            mtime=item.last_modified.timestamp(),
        )
        for item in items
        if item.key.startswith(prefix) and not item.key.endswith("/")  # a "folder" marker object holds nothing
    ]
    return sorted(out, key=lambda o: o.relative)


def tree_layout(
    objects: list[StoredObject], exts: set[str]
) -> tuple[list[tuple[str, StoredObject]], list[tuple[str, str]]]:
    """([(event, object)], [(skipped key, why)]) of a bucket laid out `<root>/<event>/<file>`, by the rules of a local
    tree (squidflow.videos.sources.walk_local): a folder inside an event folder is named once, not searched."""
    videos, skipped, deeper = [], [], set()
    for o in objects:
        parts = PurePosixPath(o.relative).parts
        if len(parts) == 1:
            skipped.append((o.url, "not in an event folder (expected <root>/<event>/<video>)"))
        elif len(parts) > 2:
            folder = o.url.rsplit("/", len(parts) - 2)[0]
            if folder not in deeper:
                deeper.add(folder)
                skipped.append((folder, "a folder inside an event folder (not searched)"))
        elif PurePosixPath(parts[1]).suffix.lower().lstrip(".") not in exts:
            skipped.append((o.url, f"not a video (extensions: {', '.join(sorted(exts))})"))
        else:
            videos.append((parts[0], o))
    return videos, skipped


class StorageFetchError(RuntimeError):
    """A failed fetch; the message has the words squidflow.videos.failures classifies (yt-dlp's, as direct.py's)."""


def fetch(url: str, filename: Path, prov: Any) -> dict[str, Any]:
    """Retrieve the object `url` into `filename` (via `<filename>.part`); an info dict as a download's (title)."""
    obj = prov.object(url)
    part = filename.with_name(filename.name + ".part")
    obj.set_local_path(part)
    try:
        obj.retrieve_object()
    except Exception as exc:
        part.unlink(missing_ok=True)
        raise StorageFetchError(endpoint_hidden(_words(exc), prov)) from None
    part.replace(filename)
    stem = PurePosixPath(urlparse(url).path).stem
    return {"id": stem, "title": stem, "ext": filename.suffix[1:]}


def _words(exc: BaseException) -> str:
    """A botocore error in the words squidflow.videos.failures knows: `HTTP Error <status>: <code>` for the storage's
    answer, connection refused/timed out for none."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode") or (response.get("Error") or {}).get(
            "Code"
        )
        code = (response.get("Error") or {}).get("Code") or ""
        message = (response.get("Error") or {}).get("Message") or ""
        return f"unable to download video data: HTTP Error {status}: {code} {message}".strip()
    name = type(exc).__name__
    if "Timeout" in name:
        return f"Got error: The read operation timed out ({name})"
    if "Connection" in name or isinstance(exc, OSError):
        return f"Unable to download video data: connection refused or lost ({name}: {exc})"
    return f"{name}: {exc}"
