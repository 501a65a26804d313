"""One way to turn "a public URL or a local copy" into a local file.

Public data (the SQUID-E release CSVs, the Sherlock annotations) defaults to its public URL, but machines without
internet point the same config key at an offline mirror. Downloads are cached, atomic and retried, so a flaky
connection never leaves a truncated CSV that parses as a shorter dataset.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

TRANSIENT_HTTP = {408, 425, 429, 500, 502, 503, 504}


# user:password@ in a URL (a proxy's credentials): never written to a file or a log squidflow writes
_URL_CREDENTIALS = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@'\"<>]*):(?P<secret>[^\s/@'\"<>]+)@")
# The download proxy with its password, for the download jobs: handed over in their environment (set when the workflow
# reads the config), never in download_settings.json, which keeps it as `user:***@host`
PROXY_ENV = "SQUIDFLOW_DOWNLOAD_PROXY"


def redact_url_credentials(text: str) -> str:
    """`text` with the password of every `scheme://user:password@host` replaced by `***`."""
    return _URL_CREDENTIALS.sub(lambda m: f"{m.group('head')}:***@", str(text))


def unredact_proxy(proxy: str | None) -> str | None:
    """The proxy as configured: a redacted `user:***@host` (download_settings.json) is restored from PROXY_ENV when
    that holds the same proxy with its password."""
    real = os.environ.get(PROXY_ENV)
    if proxy and "***" in proxy and real and redact_url_credentials(real) == proxy:
        return real
    return proxy


def is_url(source: str) -> bool:
    return urlparse(str(source)).scheme in {"http", "https", "ftp", "file"}


# An offline mirror of the public data: a folder holding local copies of the files the configs name by their public
# URLs, laid out as below (docs/paper.md, "Offline copies of the public data"). With SQUIDFLOW_DATA set, the workflow
# reads a URL's local copy there instead of downloading it; without it, or where the copy is missing, it downloads.
DATA_ENV = "SQUIDFLOW_DATA"
MIRROR_LAYOUT = {  # public home (a URL prefix) -> its place under $SQUIDFLOW_DATA
    "https://raw.githubusercontent.com/katesanders9/squid-e/main/dataset/data/": "squid-e/",
    "https://raw.githubusercontent.com/katesanders9/squid-e/main/experiments/indices": "squid-e/experiments",
    "https://storage.googleapis.com/ai2-mosaic-public/projects/sherlock/data/": "sherlock/",
    # the 504 imSitu verbs: the mirror keeps them as id<TAB>verb lines (the same list as the keys of `verbs`)
    "https://raw.githubusercontent.com/my89/imSitu/master/imsitu_space.json": "imsitu/verb_id.tab",
}


def local_copy(url: str, data_dir: str | Path | None = None) -> str | None:
    """The local copy of the public file or folder at `url` under the mirror `data_dir` (default: $SQUIDFLOW_DATA),
    or None: not a URL, no mirror set, a URL the mirror does not keep, or the copy is not there."""
    data_dir = data_dir if data_dir is not None else os.environ.get(DATA_ENV)
    if not data_dir or not is_url(url):
        return None
    for prefix, place in MIRROR_LAYOUT.items():
        if url == prefix or (url.startswith(prefix) and (prefix.endswith("/") or url[len(prefix)] == "/")):
            path = Path(data_dir, place, url[len(prefix) :].strip("/"))
            return str(path) if path.exists() else None
    return None


def fetch(
    source: str | Path, cache_dir: str | Path, *, retries: int = 3, backoff_s: float = 2.0, timeout_s: float = 60
) -> Path:
    """Return a local path for `source`: a local file as is, a URL downloaded once into `cache_dir`."""
    from squidflow.contracts.io import (
        atomic_path,  # here, not at the top: `is_url` serves `squidflow check-config`, which
    )

    # runs where only PyYAML and jsonschema are installed (squidflow.contracts.io needs polars)
    # runs where only PyYAML and jsonschema are installed (squidflow.contracts.io needs polars)
    from squidflow.contracts.paths import (
        job_file,  # a relative path, and the cache, where this job sees the workflow's files
    )

    cache_dir = job_file(cache_dir)
    if not is_url(str(source)):
        path = Path(job_file(Path(source).expanduser()))
        if not path.exists():
            raise FileNotFoundError(
                f"{path}: no such file. Point the config key at a local copy, or at its public URL when online."
            )
        return path
    url = str(source)
    name = Path(urlparse(url).path).name or "download"
    digest = hashlib.sha1(url.encode()).hexdigest()[:10]
    dest = Path(cache_dir) / f"{digest}-{name}"
    if dest.exists():
        return dest
    last: Exception | None = None
    for attempt in range(1, retries + 1):
        try:
            with urllib.request.urlopen(url, timeout=timeout_s) as resp, atomic_path(dest) as tmp:
                expected = resp.headers.get("Content-Length")
                data = resp.read()
                if expected is not None and len(data) != int(expected):
                    raise OSError(f"truncated download: {len(data)} of {expected} bytes")
                tmp.write_bytes(data)
            return dest
        except urllib.error.HTTPError as exc:
            last = exc
            if exc.code not in TRANSIENT_HTTP:
                break
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            last = exc
        if attempt < retries:
            time.sleep(backoff_s * 2 ** (attempt - 1))
    raise OSError(
        f"could not download {redact_url_credentials(url)} ({redact_url_credentials(str(last))}). Without internet, download it elsewhere and set the config key to the "
        "local copy's path."
    ) from last
