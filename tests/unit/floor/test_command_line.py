"""squidflow.runtime.command_line: the command line Snakemake's log header quotes, without its secrets (issue 57 case
6; docs/upstream.md, declared change 4). The workflow run that shows no secret in .snakemake/log is in
tests/robustness/test_faults_hostile.py."""

from __future__ import annotations

import sys

import pytest

from squidflow.runtime import command_line, upstream
from squidflow.runtime.command_line import redact_command_line, redacted


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        (["--storage-s3-secret-key", "sqf-s3-secret"], ["--storage-s3-secret-key", "***"]),
        (["--storage-s3-secret-key=sqf-s3-secret"], ["--storage-s3-secret-key=***"]),
        (["--storage-s3-token", "sqf-token"], ["--storage-s3-token", "***"]),
        (["--storage-http-password", "pw", "-n"], ["--storage-http-password", "***", "-n"]),
        (["--storage-gcs-client-secret-json=x"], ["--storage-gcs-client-secret-json=***"]),
        (["--config", "download={'proxy': 'http://u:pw@proxy:3128'}"], ["--config", "download={'proxy': 'http://u:***@proxy:3128'}"]),
        (["--storage-s3-access-key", "AKIA", "--storage-s3-endpoint-url", "http://h"],
         ["--storage-s3-access-key", "AKIA", "--storage-s3-endpoint-url", "http://h"]),
    ],
)  # fmt: skip
def test_storage_secrets_and_url_passwords_are_redacted(given, shown):
    assert redacted(["snakemake", *given, "--cores", "1"]) == ["snakemake", *shown, "--cores", "1"]


def test_sys_argv_is_rewritten_on_the_tested_snakemake_only(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["snakemake", "--storage-s3-secret-key", "sqf-s3-secret"])
    redact_command_line()
    assert sys.argv == ["snakemake", "--storage-s3-secret-key", "***"]

    monkeypatch.setattr(sys, "argv", ["snakemake", "--storage-s3-secret-key", "sqf-s3-secret"])
    monkeypatch.setattr(upstream, "_warned", set())
    monkeypatch.setattr(
        command_line, "within_tested", lambda *a, **k: upstream.within_tested(*a, version="10.0.0", **k)
    )
    said: list[str] = []
    redact_command_line(warn=said.append)
    assert sys.argv == ["snakemake", "--storage-s3-secret-key", "sqf-s3-secret"]  # as it ships, with a warning
    assert len(said) == 1 and "snakemake 10.0.0 is outside" in said[0], said
