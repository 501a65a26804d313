"""Snakemake's command line: what a Snakefile cannot learn from its `workflow` object while it is read, and what
Snakemake's log header must not quote.

Read (docs/upstream.md, "Read from Snakemake beyond its documented interface", sections 5 and 6): the run's targets
(squidflow.runtime.targets.requested) and whether a report is being made (`report_requested`, which decides whether the
report's script data is made inert: squidflow.report.script_data), with Snakemake's own parser. `snakemake.cli.
get_argument_parser` and `snakemake.cli.parse_args` are module functions of Snakemake's command line, not a documented
interface. Each reader fails safe: targets it cannot read are left to Snakemake, and a command line it cannot read is
taken to make a report.

Redacted (docs/upstream.md, declared change 4): Snakemake writes its command line, `" ".join(sys.argv)`, into the
header of its log ("Command: ..."), which it keeps in `.snakemake/log/<time>.snakemake.log`. A proxy password given
with `--config download='{"proxy": "http://user:password@host"}'` (issue 44) or a storage secret given as
`--storage-s3-secret-key KEY` (any `--storage-*-secret*`, `--storage-*-token*`, `--storage-*-password*`; issue 57)
would be written there. Snakemake has parsed its command line before it reads the Snakefile, so
`workflow/rules/common.smk` replaces the process's `sys.argv` with the redacted one there, before the header is
written: `***` for each secret. No public interface says what the header quotes; this is the one place that relies on
it, on the Snakemake versions `squidflow.runtime.upstream.TESTED` names (outside them it warns and leaves `sys.argv` as
it is: the README's advice — storage keys in the environment, never on the command line — then stands alone).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import sys
from collections.abc import Callable
from pathlib import Path

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


def config_parser() -> Callable[[list[str]], dict] | None:
    """Snakemake's own reader of `--config KEY=VALUE ...` (`snakemake.cli.parse_config`), so that a `squidflow`
    command reads `--config` exactly as `snakemake` does; None where Snakemake is not installed."""
    try:
        from snakemake.cli import parse_config
    except ImportError:
        return None
    return parse_config


def is_snakemake_command() -> bool:
    """This process is Snakemake's command line: the `snakemake` program, or `python -m snakemake` (how Snakemake
    starts a job), not a program using Snakemake's API (`squidflow targets`) or a test."""
    program = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path()
    return program.name == "snakemake" or (program.name == "__main__.py" and program.parent.name == "snakemake")


def arguments(argv: list[str] | None = None) -> argparse.Namespace | None:
    """The command line (`argv`, default this process's) read by Snakemake's parser, unknown options left out; None
    where it cannot be read (another program's command line)."""
    try:
        from snakemake.cli import get_argument_parser

        args, _ = get_argument_parser().parse_known_args(sys.argv[1:] if argv is None else argv)
    except (Exception, SystemExit):  # noqa: BLE001 - another program's command line
        return None
    return args


def report_requested(argv: list[str] | None = None) -> bool:
    """Snakemake is making a report (`--report`, `--reporter`, on the command line or in a profile): read with
    Snakemake's own `parse_args`, profiles included. True also where that cannot be told (Snakemake used through its
    API, or a command line its parser refuses): the report's script data is then made inert whatever is made."""
    if argv is None and not is_snakemake_command():
        return True
    try:
        from snakemake.cli import parse_args

        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            _, args = parse_args(sys.argv[1:] if argv is None else argv)  # its "Using profile ..." said once, by it
    except (Exception, SystemExit):  # noqa: BLE001 - a command line Snakemake itself will refuse, or a new parser
        return True
    return bool(getattr(args, "report", None) or getattr(args, "reporter", None))
