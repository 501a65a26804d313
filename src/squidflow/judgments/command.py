"""`squidflow label-studio push|pull`: the annotation tasks on a running Label Studio server, through label-studio-sdk
(run in the Label Studio virtualenv's Python, annotation.label_studio.sdk_python).

The command line (squidflow.cli) loads this module by name, so that the floor it belongs to imports no stage.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def run(args: argparse.Namespace) -> int:
    """push: create the projects (A, B, K, comparison sets) and import their tasks from
    results/annotation/label_studio/ on the server of annotation.label_studio.url; pull: export their annotations
    as JSON into results/annotation/answers/label_studio/<task>.json (what `judgments.source: label_studio` ingests). The API
    token is read from the environment variable annotation.label_studio.token_env, never from a file."""
    from squidflow.config import layers as config_layers
    from squidflow.errors import UserError
    from squidflow.judgments.issued import ANSWERS_DIR
    from squidflow.judgments.label_studio import server

    directory = args.directory
    try:  # the configuration the workflow reads with the same arguments (squidflow.config.layers)
        config = config_layers.resolve(config_layers.from_arguments(args), directory=directory, check_paths=False)
        ls = dict(config["annotation"]["label_studio"])
        if args.url:
            ls["url"] = args.url
        tasks = tuple(args.task) if args.task else None
        out_dir = directory / "results" / "annotation" / "label_studio"
        if args.action == "push":
            local = None
            if ls.get("images") == "local_files":
                local = str((directory / "results" / "dataset" / "images").absolute())
            projects = server.push(
                out_dir,
                ls,
                tasks=tasks,
                local_files_path=local,
                assignments_per_hit=config["annotation"]["assignments_per_hit"],
            )
            for task, p in projects.items():
                print(
                    f"task {task}: project {p['id']} ({p['title']}), {p['n_tasks']} tasks imported in {p['seconds']} s"
                )
        else:
            exports = server.pull(out_dir, directory / ANSWERS_DIR, ls, tasks=tasks)
            for task, e in exports.items():
                print(
                    f"task {task}: project {e['project']}: {e['n_tasks']} tasks, {e['n_annotations']} annotations "
                    f"-> {e['path']} ({e['seconds']} s)"
                )
            if "comparison" in exports:  # the shape comparison.ratings reads: each set's first two annotators
                from squidflow.contracts.io import write_csv
                from squidflow.judgments.label_studio.export import comparison_ratings_table, read_comparison_export

                long, _, _ = read_comparison_export(exports["comparison"]["path"])
                csv = Path(exports["comparison"]["path"]).with_name("comparison_ratings.csv")
                write_csv(comparison_ratings_table(long), csv)
                print(f"comparison ratings of two annotators per set -> {csv} (set comparison.ratings to it)")
    except UserError as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


NO_BATCHES = (
    "judgments.source is 'mturk' but judgments.batches is empty: post results/annotation/hits_A.csv and hits_B.csv "
    "on MTurk (with results/annotation/hit_template.html as the task page), download the batch results (Manage > "
    "Review results > Download CSV) and list them, e.g. judgments: {batches: [{path: mturk/batch_results.csv}, "
    "{path: mturk/repeat.csv, round: 2}]} (config/README.md, `batches`). Nothing was run."
)


def missing_judgments_message(source: str, missing: list[str], *, listed: int = 1) -> str:
    """What to run when ingestion's files for `source` are not there (empty: nothing is missing); `listed`: the
    batch files the config lists (none for MTurk: what to post and download)."""
    if source == "mturk" and not listed:
        return NO_BATCHES
    if not missing:
        return ""
    files = ", ".join(missing)
    if source == "label_studio":
        how = (
            "push the tasks, let your annotators answer, then pull their answers: `.venv/bin/squidflow label-studio "
            "push` and `.venv/bin/squidflow label-studio pull` with the run's --configfile and --directory (pull "
            "writes results/annotation/answers/label_studio/<task>.json), or list your own exports in "
            "judgments.label_studio.exports"
        )
    else:
        how = "download the batch results from MTurk (Manage > Review results > Download CSV) and list them in judgments.batches"
    return (
        f"judgments.source is {source!r}, but its files are not there: {files}. To ingest them, {how}. Nothing "
        "was run: the judgments and the published dataset already in results/ are left as they are (they are "
        "never relabelled under another source)."
    )


def _task_name(text: str) -> str:
    from squidflow.judgments.label_studio.tasks import is_task

    if not is_task(text):
        raise argparse.ArgumentTypeError(f"{text!r}: A, B, K, comparison, or a next round's A_round<k>, B_round<k>")
    return text


def add_parser(sub) -> None:
    """The `label-studio` sub-command's arguments."""
    p = sub.add_parser(
        "label-studio", help="create Label Studio projects and import tasks (push), export annotations (pull)"
    )
    from squidflow.config import layers as config_layers

    p.add_argument("action", choices=["push", "pull"])
    config_layers.add_arguments(p, files_positional=True)  # the run's --configfile, --config and --directory
    p.add_argument("--url", default=None, help="the server's URL (default: annotation.label_studio.url)")
    p.add_argument(
        "--task",
        action="append",
        type=_task_name,
        help="only these tasks: A, B, K, comparison, or a next round's A_round<k>, B_round<k> (k >= 2)",
    )
    p.set_defaults(func=run)
