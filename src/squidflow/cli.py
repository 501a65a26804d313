"""The `squidflow` command: small helpers around the workflow (the workflow itself runs with `snakemake`)."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path


def _resolved(args: argparse.Namespace):
    """The chosen config files and the configuration they resolve to (squidflow.config.layers), or None after saying
    on stderr why they cannot be read (the commands then exit 2)."""
    from squidflow.config import layers as config_layers
    from squidflow.errors import UserError

    try:
        chosen = config_layers.from_arguments(args)
        return chosen, config_layers.resolve(chosen, directory=args.directory)
    except UserError as exc:
        print(exc, file=sys.stderr)
        return None


def _cmd_check_config(args: argparse.Namespace) -> int:
    """As a workflow run reads its config (squidflow.config.layers: the demo config only when no config file is
    given, the config files in order, --config): the files strictly (a duplicate key or a tab: file and line), the
    schema, and every local input path the config names (relative to --directory, the run's working directory)."""
    from squidflow.config import layers as config_layers

    resolved = _resolved(args)
    if resolved is None:
        return 2
    chosen, config = resolved
    print(f"{', '.join(map(config_layers.shown_path, chosen.files))}: valid")
    changed = config_layers.changed_from_before(chosen, config)
    if changed:
        shown = ", ".join(changed[:8]) + (f" and {len(changed) - 8} more" if len(changed) > 8 else "")
        print(
            f"note: the demo's config/config.yaml is no longer read under a config file you give "
            f"({config_layers.LAYERING_CHANGED}); these keys now take the schema's default instead of the demo's "
            f"value: {shown}. To keep the demo's values, name it first: --configfile config/config.yaml "
            f"{' '.join(map(str, chosen.configfiles))}",
            file=sys.stderr,
        )
    return 0


def _cmd_config(args: argparse.Namespace) -> int:
    """Print the configuration these arguments make, as YAML, with one comment per layer naming what was read: the
    schema's defaults, the demo config (only when no config file is given), the --configfile files in order,
    --config. A run with the same arguments records the same configuration in results/run_config.yaml."""
    from squidflow.config import layers as config_layers

    resolved = _resolved(args)
    if resolved is None:
        return 2
    chosen, config = resolved
    print(config_layers.layered_yaml(config_layers.record_config(config), chosen, directory=args.directory), end="")
    return 0


def _cmd_init(args: argparse.Namespace) -> int:
    """Write a config for a folder of videos in event sub-folders (FOLDER/<event>/*.mp4): the events from the folder
    names, a local source, the annotation platform and its judgment source, the publish keys to fill; nothing of the
    offline demo."""
    from squidflow.config.from_folder import write_config
    from squidflow.errors import UserError

    try:
        config = write_config(
            args.folder,
            args.output,
            directory=args.directory,
            platform=args.platform,
            name=args.name or "",
            license_id=args.license or "",
            citation=args.citation or "",
            force=args.force,
            video_license=args.video_license,
        )
    except UserError as exc:
        print(exc, file=sys.stderr)
        return 2
    from squidflow.config.from_folder import NEXT_TARGETS, events_in, forced_settings

    print(
        f"{args.output}: events {', '.join(config['events'])}; source local ({config['sources'][0]['root']}); "
        f"judgments from {args.platform}; dataset {config['publish']['name']}"
    )
    for _, why in forced_settings(events_in(args.folder)).values():
        print(f"note: {why}.")
    if not args.video_license:
        print("note: the videos' licence is unknown (sources[0].license: null); set it, or give --video-license.")
    where = f" --directory {args.directory}" if str(args.directory) not in ("", ".") else ""
    print(f"next: .venv/bin/snakemake --configfile {args.output}{where} --cores 2 {NEXT_TARGETS[args.platform]}")
    return 0


def _cmd_targets(args: argparse.Namespace) -> int:
    """Every table and figure the workflow makes and the rule that makes it, as `snakemake <path>` asks for them
    (read from the workflow with the same --configfile, --config and --directory: a configured method or model adds
    its own)."""
    from squidflow.config import layers as config_layers
    from squidflow.errors import UserError
    from squidflow.runtime import targets

    root = Path(__file__).resolve().parents[2]
    snakefile = args.snakefile or root / "Snakefile"
    if not snakefile.is_file():
        print(
            f"squidflow targets: no Snakefile at {snakefile}; give --snakefile (the squidflow clone's Snakefile)",
            file=sys.stderr,
        )
        return 2
    try:
        chosen = config_layers.from_arguments(args, root=snakefile.parent)
        rules = targets.workflow_rules(snakefile, chosen.configfiles, args.directory, config=chosen.overrides)
    except UserError as exc:
        print(f"squidflow targets: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - Snakemake's WorkflowError (an invalid config): its message says it all
        print(f"squidflow targets: {exc}", file=sys.stderr)
        return 2
    print(targets.targets_text(targets.rule_outputs(rules)))
    return 0


def _cmd_gpu_slots(args: argparse.Namespace) -> int:
    from squidflow.runtime.gpu import DEFAULT_LOCK_DIR, slot_status

    status = slot_status(args.lock_dir or DEFAULT_LOCK_DIR)
    if not status:
        print("no GPU detected: GPU rules run on the CPU")
    for device, taken in status.items():
        print(f"gpu {device}: {'taken' if taken else 'free'}")
    return 0


STAGE_COMMANDS = (  # label-studio, evaluate, publish
    "squidflow.judgments.command",
    "squidflow.evaluation.command",
    "squidflow.publish.command",
)


def _add_init(sub) -> None:
    """The `init` sub-command's arguments: a config for your own folder of videos."""
    p = sub.add_parser(
        "init",
        help="write a config for your own folder of videos (FOLDER/<event>/*.mp4)",
        description=_cmd_init.__doc__,
    )
    p.add_argument("folder", type=Path, help="the folder holding one sub-folder of videos per event")
    p.add_argument(
        "--output", "-o", type=Path, default=Path("mine.yaml"), help="the config to write (default: mine.yaml)"
    )
    p.add_argument("--directory", type=Path, default=Path("."), help="the run's working directory (default: .)")
    p.add_argument(
        "--platform",
        choices=["label_studio", "mturk"],
        default="label_studio",
        help="where people rate the images (default: label_studio)",
    )
    p.add_argument("--name", default=None, help="the dataset's id (default: the folder's name)")
    p.add_argument("--license", default=None, help="a Hugging Face Hub licence id, e.g. cc-by-4.0 (publish.license)")
    p.add_argument("--citation", default=None, help="a BibTeX entry for the dataset (publish.citation)")
    p.add_argument(
        "--video-license",
        default=None,
        help="the videos' licence as you state it, e.g. cc-by-4.0 (sources[0].license; default: unknown)",
    )
    p.add_argument("--force", action="store_true", help="replace the config if it exists")
    p.set_defaults(func=_cmd_init)


def parser() -> argparse.ArgumentParser:
    """The `squidflow` command's arguments, every sub-command's."""
    from squidflow import __version__
    from squidflow.config import layers as config_layers

    parser = argparse.ArgumentParser(prog="squidflow", description=__doc__)
    parser.add_argument("--version", action="version", version=f"squidflow {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser(
        "check-config",
        help="validate a configuration: YAML, schema, and the local paths it names",
        description=_cmd_check_config.__doc__,
    )
    config_layers.add_arguments(p, files_positional=True)
    p.set_defaults(func=_cmd_check_config)
    p = sub.add_parser(
        "config",
        help="print the configuration a run with these arguments reads, as YAML",
        description=_cmd_config.__doc__,
    )
    config_layers.add_arguments(p)
    p.set_defaults(func=_cmd_config)
    _add_init(sub)
    # Commands that belong to a stage live in it and are loaded by name: the floor imports no stage.
    for name in STAGE_COMMANDS:
        importlib.import_module(name).add_parser(sub)
    p = sub.add_parser(
        "targets",
        help="list the tables and figures the workflow makes, and the rule that makes each",
        description=_cmd_targets.__doc__,
    )
    config_layers.add_arguments(p)
    p.add_argument("--snakefile", type=Path, default=None, help="the workflow (default: this squidflow's Snakefile)")
    p.set_defaults(func=_cmd_targets)
    p = sub.add_parser("gpu-slots", help="show which GPU slots are taken")
    p.add_argument("--lock-dir", default=None)
    p.set_defaults(func=_cmd_gpu_slots)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
