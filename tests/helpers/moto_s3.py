"""A real S3 API on 127.0.0.1 for tests and benchmarks: moto in server mode (its Flask app on a free port, in a thread
of this process), reached over HTTP by boto3 and by Snakemake's S3 storage plugin like any S3-compatible service.

`s3_server()` starts it and yields an `S3` whose `env` holds the endpoint and a pair of throw-away credentials for the
processes a test starts (never written to a file), and whose `requests` counts the requests the server answered, by
kind, from its request log. Where moto is missing the test is skipped saying so, and fails
under CI=true (make test-tools installs it)."""

from __future__ import annotations

import logging
import os
import re
import secrets
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .ports import free_port

MISSING = "moto[server] is not installed (make test-tools installs it; pip install 'moto[server]')"


def why_unavailable() -> str | None:
    try:
        import boto3  # noqa: F401
        from moto.server import ThreadedMotoServer  # noqa: F401
    except ImportError:
        return MISSING
    return None


def moto_or_skip() -> None:
    why = why_unavailable()
    if why is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true: {why}", pytrace=False)
    pytest.skip(why)


@dataclass
class S3:
    endpoint: str
    access_key: str = field(default_factory=lambda: "AKIA" + secrets.token_hex(8).upper())
    secret_key: str = field(default_factory=lambda: secrets.token_urlsafe(30))
    requests: Counter = field(default_factory=Counter)  # "HEAD object", "GET list", "PUT object", ... (RequestLog)

    @property
    def env(self) -> dict[str, str]:
        """What a process needs to reach this server through Snakemake's S3 plugin (or boto3)."""
        return {
            "SNAKEMAKE_STORAGE_S3_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_DEFAULT_REGION": "us-east-1",
        }

    def client(self):
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            region_name="us-east-1",
        )

    def upload(self, bucket: str, files: dict[str, Path]) -> None:
        """Create `bucket` (if needed) and put each `key: local file`."""
        c = self.client()
        if bucket not in {b["Name"] for b in c.list_buckets().get("Buckets", [])}:
            c.create_bucket(Bucket=bucket)
        for key, path in files.items():
            c.put_object(Bucket=bucket, Key=key, Body=Path(path).read_bytes())

    def secrets_in(self, folder: Path) -> list[str]:
        """Files under `folder` that hold the endpoint or a credential."""
        needles = [self.access_key.encode(), self.secret_key.encode(), self.endpoint.split("//", 1)[1].encode()]
        found = []
        for p in folder.rglob("*"):
            if p.is_file() and not p.is_symlink():
                data = p.read_bytes()
                found += [f"{p}: {n.decode()[:6]}..." for n in needles if n in data]
        return found


class RequestLog(logging.Handler):
    """Counts the server's request log lines (werkzeug's `"GET /bucket/key HTTP/1.1" 200 -`) by method and kind:
    `list` for a listing (a bucket with a `list-type` or `prefix` query), `bucket` for another request on a bucket,
    `object` for a key."""

    LINE = re.compile(r'"(\w+) /([^/?\s]*)/?([^?\s]*)(\?\S*)? HTTP')

    def __init__(self, counts: Counter) -> None:
        super().__init__(logging.INFO)
        self.counts = counts

    def emit(self, record: logging.LogRecord) -> None:
        m = self.LINE.search(re.sub(r"\x1b\[[0-9;]*m", "", record.getMessage()))
        if m:
            method, key, query = m[1], m[3], m[4] or ""
            kind = "object" if key else "list" if "list-type" in query or "prefix=" in query else "bucket"
            self.counts[f"{method} {kind}"] += 1


@contextmanager
def s3_server() -> Iterator[S3]:
    """A moto S3 server on 127.0.0.1 for the block (stopped after)."""
    moto_or_skip()
    from moto.server import ThreadedMotoServer

    port = free_port()
    s3 = S3(endpoint=f"http://127.0.0.1:{port}")
    werkzeug, handler = logging.getLogger("werkzeug"), RequestLog(s3.requests)
    werkzeug.setLevel(logging.INFO)
    werkzeug.propagate = False  # counted, not a line per request into the test's log
    werkzeug.addHandler(handler)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield s3
    finally:
        server.stop()
        werkzeug.removeHandler(handler)
