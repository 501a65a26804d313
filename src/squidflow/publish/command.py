"""`squidflow publish check FOLDER`: the checks of a published dataset (squidflow.publish.check) on any folder —
Croissant validation and record generation, `datasets` loading of every config, the shards' sha256s, and the card's
YAML naming every config. Prints one line per problem; exit code 0 when there is none, 1 otherwise.

The command line (squidflow.cli) loads this module by name, so that the floor it belongs to imports no stage.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def run(args: argparse.Namespace) -> int:
    from squidflow.publish.check import check_folder

    problems = check_folder(args.folder, load=not args.no_load)
    for line in problems:
        print(line)
    if not problems:
        print(
            f"{args.folder}: passes (Croissant validation and records, "
            + ("datasets loading, " if not args.no_load else "")
            + "sha256s, the card's configs)",
            file=sys.stderr,
        )
    return 1 if problems else 0


def add_parser(sub) -> None:
    """The `publish` sub-command's arguments."""
    p = sub.add_parser("publish", help="check a published dataset folder (results/publish/<name>/)")
    actions = p.add_subparsers(dest="action", required=True)
    c = actions.add_parser(
        "check",
        help="Croissant validation and records, datasets loading, sha256s, the card's configs",
        description="Croissant validation and records, datasets loading, sha256s, the card's configs. It reads only "
        "files inside FOLDER and never fetches: a URL, an absolute path, a ../ or a symbolic link out of "
        "FOLDER (a contentUrl, a FileSet's includes, a data_files pattern) is reported with its field, "
        "not followed, and then records and loading are not run.",
    )
    c.add_argument(
        "folder", type=Path, help="the published folder (README.md, croissant.json, data/); nothing outside it is read"
    )
    c.add_argument("--no-load", action="store_true", help="skip loading every config with the datasets library")
    c.set_defaults(func=run)
