"""Which files make the configuration: one rule, for `snakemake` with or without `--directory`, for squidflow used
as a Snakemake module, and for every `squidflow` command.

The configuration is these layers, each on top of the one before (nested mappings merged key by key, anything else
replaced, as Snakemake merges config files):

1. the schema's defaults (workflow/schemas/config.schema.yaml);
2. the demo config, `config/config.yaml` of the workflow's own folder, only when no config file is given: it is the
   demo, and a run of your own never inherits the demo's events, sources or settings;
3. the `--configfile` files, in order (a relative path is relative to the folder the command is run from, as
   `snakemake` reads it, not to `--directory`);
4. `--config KEY=VALUE ...`.

The Snakefile reads layer 2 through `demo_configfiles` (named from the workflow's folder, so the working directory
does not matter); Snakemake itself reads layers 3 and 4 and squidflow's validation fills in layer 1. The `squidflow`
commands take the same arguments (`add_arguments`) and read the same layers (`resolve`); `squidflow config` prints
the result (`layered_yaml`), which equals the resolved configuration a run records in
results/run_config.yaml. Local paths the config names are relative to `--directory`, the run's working
directory.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from squidflow.config.validation import REPO_ROOT, ConfigError, merge_configs, read_configs, validate_config

# The demo config, relative to the workflow's folder (the clone)
DEMO_CONFIG = Path("config") / "config.yaml"
# The release in which the demo config stopped being read under a config file of your own (CHANGELOG.md)
LAYERING_CHANGED = "a change after squidflow 0.4.0: CHANGELOG.md, Unreleased"

PathLike = str | Path


def demo_configfiles(configfiles: Sequence[PathLike], root: PathLike | None = REPO_ROOT) -> list[Path]:
    """Layer 2: the demo config of the workflow in `root`, when no config file is given; else nothing."""
    if configfiles:
        return []
    if root is None:
        raise ConfigError(
            "no config file given, and this squidflow is installed without its workflow (no config/config.yaml, the "
            "demo's, to read): give your config with --configfile FILE."
        )
    return [Path(root) / DEMO_CONFIG]


def config_files(configfiles: Sequence[PathLike], root: PathLike | None = REPO_ROOT) -> list[Path]:
    """The files that make the configuration, in the order read (layers 2 and 3): the demo config when `configfiles`
    is empty, else `configfiles` as given. A file that is named but missing stops, naming the path looked for."""
    files = [Path(f) for f in configfiles]
    for f in files:
        if not f.is_file():
            raise ConfigError(
                f"{f}: config file not found (looked for {f.absolute()}). A --configfile path is relative to the "
                "folder you run the command from, not to --directory."
            )
    return demo_configfiles(files, root) + files


@dataclass(frozen=True)
class Layers:
    """What one command line reads: the demo config (or nothing), the --configfile files, the --config values."""

    demo: tuple[Path, ...]
    configfiles: tuple[Path, ...]
    overrides: Mapping[str, Any] = field(default_factory=dict)
    config_args: tuple[str, ...] = ()

    @property
    def files(self) -> list[Path]:
        return [*self.demo, *self.configfiles]


def layers(
    configfiles: Sequence[PathLike] = (),
    config_args: Sequence[str] = (),
    *,
    root: PathLike | None = REPO_ROOT,
) -> Layers:
    """The layers of a command line's `--configfile` files and `--config KEY=VALUE` arguments."""
    files = config_files(configfiles, root)
    given = [Path(f) for f in configfiles]
    return Layers(
        demo=tuple(files[: len(files) - len(given)]),
        configfiles=tuple(given),
        overrides=parse_overrides(config_args),
        config_args=tuple(config_args),
    )


def parse_overrides(entries: Sequence[str]) -> dict[str, Any]:
    """`--config KEY=VALUE ...` as `snakemake --config` reads it (its own parser where Snakemake is installed)."""
    if not entries:
        return {}
    from squidflow.runtime.command_line import config_parser

    parse_config = config_parser() or _parse_config  # the library installed on its own: the same rules
    try:
        return parse_config(list(entries))
    except ValueError as exc:
        raise ConfigError(
            f"--config {' '.join(entries)}: {exc} Write KEY=VALUE, e.g. --config replace_other_config=true "
            "(config files go after --configfile)."
        ) from None


def _parse_config(entries: list[str]) -> dict[str, Any]:
    """Snakemake's `--config` parser's rules: a number, True/False, else YAML read as strings, else the text."""
    config: dict[str, Any] = {}
    for entry in entries:
        key, sep, text = entry.partition("=")
        if not sep:
            raise ValueError("Config entries have to be defined as name=value pairs.")
        if not re.fullmatch(r"[a-zA-Z_][\w-]*\w", key):
            raise ValueError("Config entry must start with a valid identifier.")
        merge_configs(config, {key: _value(text)})
    return config


def _value(text: str) -> Any:
    if text == "":
        return None
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    if text in ("True", "False"):
        return text == "True"
    try:
        return yaml.load(text, Loader=yaml.BaseLoader)
    except yaml.YAMLError:
        return text


def _as_written(files: Sequence[PathLike], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The config as the layers write it (files, then --config), without the schema's defaults."""
    return merge_configs(read_configs(files), overrides)


def resolve(
    chosen: Layers,
    *,
    directory: PathLike = ".",
    check_paths: bool = True,
    root: PathLike | None = REPO_ROOT,
) -> dict[str, Any]:
    """The configuration the layers make, validated and with the schema's defaults filled in (layer 1), as a run in
    `directory` reads it (with `check_paths`, the local paths it names must exist relative to `directory`). A
    config that is invalid on its own but was valid with the demo config under it is told what to do."""
    try:
        config = _as_written(chosen.files, chosen.overrides)
        return validate_config(config, inputs_base=directory if check_paths else None, repo_root=root)
    except ConfigError as exc:
        raise ConfigError(f"{', '.join(map(str, chosen.files))}: {exc}") from None


def _with_demo_under(chosen: Layers, root: PathLike | None) -> dict[str, Any] | None:
    """The configuration as squidflow read these config files before the one rule, in the clone: on top of the demo
    config. None when that is what they read now (no file given, or the demo config named), or when it is invalid."""
    if not chosen.configfiles or root is None:
        return None
    demo = (Path(root) / DEMO_CONFIG).resolve()
    if not demo.is_file() or any(Path(f).resolve() == demo for f in chosen.configfiles):
        return None
    try:
        return validate_config(_as_written([demo, *chosen.configfiles], chosen.overrides))
    except ConfigError:
        return None


def changed_from_before(chosen: Layers, config: Mapping[str, Any], root: PathLike | None = REPO_ROOT) -> list[str]:
    """The keys (dotted) whose value differs from what these config files gave on top of the demo config, as a run
    in the clone read them before the one rule: for a config that leaves `sources` to the demo's, as an overlay of
    the demo does (one that names its own sources, as `squidflow init` writes, stands on its own). Empty when the
    demo config is read now or named."""
    if "sources" in _as_written(chosen.configfiles, chosen.overrides):
        return []
    before = _with_demo_under(chosen, root)
    return [] if before is None else _differences(before, config)


def _differences(before: Any, now: Any, path: str = "") -> list[str]:
    if isinstance(before, Mapping) and isinstance(now, Mapping):
        out = []
        for key in dict.fromkeys([*before, *now]):
            out += _differences(before.get(key), now.get(key), f"{path}.{key}" if path else str(key))
        return out
    return [] if before == now else [path]


def layered_yaml(config: Mapping[str, Any], chosen: Layers, *, directory: PathLike = ".") -> str:
    """The resolved configuration as YAML, under one comment per layer naming what was read."""
    none = "none"
    demo = (
        ", ".join(map(shown_path, chosen.demo))
        if chosen.demo
        else "not read (a config file is given: the demo config is read only without one)"
    )
    lines = [
        f"# The configuration squidflow reads for these arguments, run in {directory} (squidflow.config.layers), "
        "each layer on top of the one before:",
        "# 1. the schema's defaults: workflow/schemas/config.schema.yaml",
        f"# 2. the demo config: {demo}",
        f"# 3. --configfile: {' '.join(map(str, chosen.configfiles)) or none}",
        f"# 4. --config: {' '.join(chosen.config_args) or none}",
    ]
    body = yaml.safe_dump(dict(config), sort_keys=False, allow_unicode=True, width=110)
    return "\n".join(lines) + "\n" + body


def shown_path(path: PathLike) -> str:
    """A path as people name it: relative to the current folder when it is inside it."""
    rel = os.path.relpath(os.path.abspath(path))
    return str(path) if rel.startswith("..") else rel


def record_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The configuration as a run records it and `squidflow config` prints it: what the workflow adds under `_`
    (which squidflow made it) left out, a password in a URL (a proxy's) as `***`."""
    from squidflow.runtime.run_record import redact

    return redact({k: v for k, v in config.items() if not str(k).startswith("_")})


# --- the command line: the arguments every `squidflow` command takes, as `snakemake` takes them -------------------
def add_arguments(parser: argparse.ArgumentParser, *, files_positional: bool = False) -> None:
    """`--configfile FILE ...`, `--config KEY=VALUE ...` and `--directory DIR`, as `snakemake` takes them (with
    `files_positional`, config files may also be given as arguments, the same as after --configfile)."""
    if files_positional:
        parser.add_argument(
            "files", type=Path, nargs="*", default=[], help="config files: the same as after --configfile"
        )
    parser.add_argument(
        "--configfile",
        "--configfiles",
        type=Path,
        nargs="+",
        default=[],
        help="config files, later ones on top, as `snakemake --configfile` (default: the demo's config/config.yaml, "
        "read only when no config file is given)",
    )
    parser.add_argument(
        "--config", nargs="+", default=[], metavar="KEY=VALUE", help="config values on top, as `snakemake --config`"
    )
    parser.add_argument(
        "--directory",
        "-d",
        type=Path,
        default=Path("."),
        help="the run's working directory, as `snakemake --directory` (default: .); the config's local paths are "
        "relative to it",
    )


def from_arguments(args: argparse.Namespace, *, root: PathLike | None = REPO_ROOT) -> Layers:
    """The layers of a command's arguments (see `add_arguments`)."""
    positional = list(getattr(args, "files", None) or [])
    if positional and args.configfile:
        raise ConfigError(
            f"config files given twice: {' '.join(map(str, positional))} and --configfile "
            f"{' '.join(map(str, args.configfile))}; give them all after --configfile."
        )
    return layers(positional or args.configfile, args.config, root=root)
