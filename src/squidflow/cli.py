"""The `squidflow` command: small helpers around the workflow (the workflow itself runs with `snakemake`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _cmd_check_config(args: argparse.Namespace) -> int:
    """As a workflow run reads its config: the files strictly (a duplicate key or a tab: file and line), each on top
    of the one before (like --configfile a.yaml b.yaml), the schema, and every local input path the config names
    (relative to --directory, the run's working directory)."""
    from squidflow.config import load_config
    from squidflow.errors import UserError

    first, *more = args.configfile
    try:
        load_config(first, extra=tuple(more), base_dir=args.directory)
    except UserError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(f"{', '.join(map(str, args.configfile))}: valid")
    return 0


def _cmd_gpu_slots(args: argparse.Namespace) -> int:
    from squidflow.gpu import DEFAULT_LOCK_DIR, slot_status

    status = slot_status(args.lock_dir or DEFAULT_LOCK_DIR)
    if not status:
        print("no GPU detected: GPU rules run on the CPU")
    for device, taken in status.items():
        print(f"gpu {device}: {'taken' if taken else 'free'}")
    return 0


def _cmd_label_studio(args: argparse.Namespace) -> int:
    """push: create the projects (A, B, K, comparison sets) and import their tasks from
    results/annotation/label_studio/ on the server of annotation.label_studio.url; pull: export their annotations
    as JSON into results/judgments/label_studio/<task>.json (what `judgments.source: label_studio` ingests). The API
    token is read from the environment variable annotation.label_studio.token_env, never from a file."""
    from squidflow.config import load_config
    from squidflow.errors import UserError
    from squidflow.judgments import label_studio_server as server

    directory = args.directory
    try:
        config = load_config(args.configfile[0], extra=tuple(args.configfile[1:]), check_paths=False)
        ls = dict(config["annotation"]["label_studio"])
        if args.url:
            ls["url"] = args.url
        tasks = tuple(args.task) if args.task else None
        out_dir = directory / "results" / "annotation" / "label_studio"
        if args.action == "push":
            local = None
            if ls.get("images") == "local_files":
                local = str((directory / "results" / "dataset" / "images").absolute())
            projects = server.push(out_dir, ls, tasks=tasks or server.TASKS, local_files_path=local,
                                   assignments_per_hit=config["annotation"]["assignments_per_hit"])
            for task, p in projects.items():
                print(f"task {task}: project {p['id']} ({p['title']}), {p['n_tasks']} tasks imported in {p['seconds']} s")
        else:
            exports = server.pull(out_dir, directory / "results" / "judgments" / "label_studio", ls, tasks=tasks)
            for task, e in exports.items():
                print(f"task {task}: project {e['project']}: {e['n_tasks']} tasks, {e['n_annotations']} annotations "
                      f"-> {e['path']} ({e['seconds']} s)")
            if "comparison" in exports:  # the shape comparison.ratings reads: each set's first two annotators
                from squidflow.io import write_csv
                from squidflow.judgments.label_studio import comparison_ratings_table, read_comparison_export

                long, _, _ = read_comparison_export(exports["comparison"]["path"])
                csv = Path(exports["comparison"]["path"]).with_name("comparison_ratings.csv")
                write_csv(comparison_ratings_table(long), csv)
                print(f"comparison ratings of two annotators per set -> {csv} (set comparison.ratings to it)")
    except UserError as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="squidflow", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("check-config", help="validate config files: YAML, schema, and the local paths they name")
    p.add_argument("configfile", type=Path, nargs="+", help="config files, later ones on top (as --configfile)")
    p.add_argument("--directory", type=Path, default=Path("."), help="the run's working directory (default: .)")
    p.set_defaults(func=_cmd_check_config)
    p = sub.add_parser("gpu-slots", help="show which GPU slots are taken")
    p.add_argument("--lock-dir", default=None)
    p.set_defaults(func=_cmd_gpu_slots)
    p = sub.add_parser("label-studio", help="create Label Studio projects and import tasks (push), export annotations (pull)")
    p.add_argument("action", choices=["push", "pull"])
    p.add_argument("configfile", type=Path, nargs="+", help="the run's config files (annotation.label_studio)")
    p.add_argument("--directory", type=Path, default=Path("."), help="the run's working directory (default: .)")
    p.add_argument("--url", default=None, help="the server's URL (default: annotation.label_studio.url)")
    p.add_argument("--task", action="append", choices=["A", "B", "K", "comparison"], help="only these tasks")
    p.set_defaults(func=_cmd_label_studio)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
