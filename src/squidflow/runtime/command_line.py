"""Snakemake's log header without the secrets of its command line (docs/upstream.md, declared change 4).

Snakemake writes its command line, `" ".join(sys.argv)`, into the header of its log ("Command: ..."), which it keeps
in `.snakemake/log/<time>.snakemake.log`. A proxy password given with `--config download='{"proxy":
"http://user:password@host"}'` (issue 44) or a storage secret given as `--storage-s3-secret-key KEY` (any
`--storage-*-secret*`, `--storage-*-token*`, `--storage-*-password*`; issue 57) would be written there. Snakemake
has parsed its command line before it reads the Snakefile, so `workflow/rules/common.smk` replaces the process's
`sys.argv` with the redacted one there, before the header is written: `***` for each secret. No public interface
says what the header quotes; this is the one place that relies on it, on the Snakemake versions
`squidflow.runtime.upstream.TESTED` names (outside them it warns and leaves `sys.argv` as it is: the README's
advice — storage keys in the environment, never on the command line — then stands alone).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

from squidflow.fetch import redact_url_credentials
from squidflow.runtime.upstream import within_tested

SECRET_FLAG = re.compile(r"--storage-[A-Za-z0-9-]*(?:secret|token|password)[A-Za-z0-9-]*")
HIDDEN = "***"


def redacted(argv: list[str]) -> list[str]:
    """`argv` with the value of every storage secret flag (`--flag VALUE` or `--flag=VALUE`) and the password of
    every `scheme://user:password@host` replaced by `***`."""
    out, hide_next = [], False
    for arg in argv:
        if hide_next:
            out.append(HIDDEN)
            hide_next = False
            continue
        flag, eq, _ = arg.partition("=")
        if SECRET_FLAG.fullmatch(flag):
            out.append(f"{flag}={HIDDEN}" if eq else arg)
            hide_next = not eq
            continue
        out.append(redact_url_credentials(arg))
    return out


def redact_command_line(warn: Callable[[str], None] | None = None) -> None:
    """Replace `sys.argv` by its redacted form, on the tested Snakemake versions (called once, by common.smk)."""
    if within_tested("snakemake", "the log header's command line redacted", warn=warn):
        sys.argv[:] = redacted(sys.argv)
