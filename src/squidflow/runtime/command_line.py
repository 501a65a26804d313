"""Snakemake's command line, read with Snakemake's own parser, for what a Snakefile cannot learn from its `workflow`
object while it is read: the run's targets (squidflow.runtime.targets.requested) and whether a report is being made
(`report_requested`, which decides whether the report's script data is made inert: squidflow.report.script_data).

Declared in docs/upstream.md (sections 4 and 5, "Read from Snakemake beyond its documented interface"): `snakemake.cli.get_argument_parser` and
`snakemake.cli.parse_args` are module functions of Snakemake's command line, not a documented interface. Each reader
fails safe: targets it cannot read are left to Snakemake, and a command line it cannot read is taken to make a report.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from pathlib import Path


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
