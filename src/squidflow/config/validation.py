"""Config validation whose errors a person can act on.

`snakemake.utils.validate` fills defaults well but reports a bad value as a jsonschema dump. We check the config
ourselves first and, when it is wrong, say which key (dotted, e.g. `demo.videos_per_event`), which value, and what is
allowed; only a valid config is handed to Snakemake's validator, which fills in the defaults.

Everything that can be checked before a job runs is checked here, when the config is read:

- the YAML files themselves (`load_yaml`): a key given twice (YAML would silently keep the last value) or a syntax
  error such as a tab names the file and the line;
- every local path the config names (`check_inputs`): a schema property marked `x-input: file | folder |
  file-or-folder` must exist when the config sets it (`x-input-url: true` lets it be a URL, `x-input-storage: true`
  an object-storage URL such as s3://bucket/prefix, checked by its pattern and plugin instead; `x-input-when` limits
  the check to configs where another key has a given value, `x-input-except` lists values that are not paths);
  a new stage marks its path keys in workflow/schemas/config.schema.yaml and is checked too;
- keys that only make sense together (`check_consistency`).
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
import inspect
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlparse

import jsonschema
import yaml

from squidflow.config import bounds, own_data
from squidflow.config.bounds import MAX_DEPTH, MAX_EXPANDED_NODES, bounded_schema, expanded_size, non_finite, shown
from squidflow.errors import UserError
from squidflow.version import CHECKOUT

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T")
D = TypeVar("D", bound="DataclassInstance")  # a config dataclass
# The checkout, whose public-data copies beside the clone are found from it; None where the library is installed
REPO_ROOT = CHECKOUT
# The schema is workflow/schemas/config.schema.yaml; the package names it through data/ (a link in the checkout, the
# file itself in a wheel), so `squidflow check-config` works where the library is installed without the workflow.
SCHEMA_PATH = Path(__file__).resolve().parents[1] / "data" / "config.schema.yaml"


class ConfigError(UserError, ValueError):
    """The config breaks its schema; the message names every offending key."""


# --- YAML, strictly ----------------------------------------------------------------------------------------------
# libyaml's parser where PyYAML has it: every Snakemake job (each cluster job twice) parses the config and the schema,
# and the pure-Python parser makes that a quarter of a job's start-up
if TYPE_CHECKING:  # the same interface either way
    from yaml import SafeLoader as _SafeLoader
else:
    _SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_SafeLoader):
    """A SafeLoader that refuses a mapping key given twice (PyYAML keeps the last one without a word)."""

    path = ""  # the file being read, for messages (libyaml's marks do not carry it)


def _no_duplicates(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if key in seen:
            raise ConfigError(
                f"{loader.path} line {line}: key '{key}' is given twice (first on line {seen[key]}); "
                "YAML would keep only the last value. Delete one of them."
            )
        seen[key] = line
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)


def load_yaml(path: str | Path) -> Any:
    """Parse a YAML (or JSON) config file; a duplicate key or a syntax error names the file, the line and the fix."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found.") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}); save the config file as UTF-8.") from None
    try:
        bounds.refuse_deep(text, path, ConfigError, _SafeLoader)  # before composing: libyaml's composer recurses
        loader = _StrictLoader(text)
        loader.path = str(path)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            size, depth = expanded_size(node)
            if size > MAX_EXPANDED_NODES or depth > MAX_DEPTH:
                raise ConfigError(
                    f"{path}: the YAML stands for more than {MAX_EXPANDED_NODES:,} values or is nested "
                    f"deeper than {MAX_DEPTH} levels (aliases *name expanded); a config is far smaller. "
                    "Write the values out instead of nesting aliases."
                )
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path} line {mark.line + 1}, column {mark.column + 1}" if mark else str(path)
        problem = exc.problem or exc.context or "invalid YAML"
        lines = text.splitlines()
        line_text = lines[mark.line] if mark and mark.line < len(lines) else ""
        tab = "\t" in problem or "\t" in line_text
        hint = (
            " YAML cannot indent with tabs: replace the tab with spaces."
            if tab
            else " Check the indentation and quoting there."
        )
        raise ConfigError(f"{where}: {problem}.{hint}") from None
    except yaml.YAMLError as exc:  # a reader error (a control character, a NUL byte) carries no mark of its own
        pos = getattr(exc, "position", None)
        line = text[:pos].count("\n") + 1 if isinstance(pos, int) else None
        where = f"{path} line {line}" if line else str(path)
        raise ConfigError(
            f"{where}: not valid YAML ({' '.join(str(exc).split())}). Remove the character or fix the line."
        ) from None


def check_config_files(paths) -> None:
    """Parse each config file strictly (see `load_yaml`); files that do not exist are left to Snakemake."""
    for path in paths:
        if os.path.exists(path):
            data = load_yaml(path)
            if data is not None and not isinstance(data, dict):
                raise ConfigError(
                    f"{path}: a config file must be a mapping of keys (`key: value` lines) at the top level."
                )


def load_schema(path: str | Path) -> dict:
    with open(path, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=_SafeLoader)


def _dotted(path) -> str:
    parts: list[str] = []
    for p in path:
        parts.append(f"[{p}]" if isinstance(p, int) else (("." if parts else "") + str(p)))
    return "".join(parts) or "<top level>"


# Keys and values that squidflow 0.3 took and 0.4.0 names otherwise (CHANGELOG, "Migration from 0.3"): the schema
# rejects them as any unknown key or value, and the message names the replacement.
MOVED_KEYS = {
    "evaluation.intervals": "intervals",  # a top-level section: every stage that reports intervals reads it
    "training.classification.variants": "training.classification.methods",  # Table 1's rows are methods
}
_MIGRATE = "in squidflow 0.4.0 (CHANGELOG.md, Migration from 0.3)"
_UNRELEASED = "after squidflow 0.4.0 (CHANGELOG.md, Unreleased)"
# (key, old value) -> (the value to use, what happened and when)
MOVED_VALUES = {
    ("stages", "tables"): ("training", f"was renamed to 'training' {_MIGRATE}"),  # the stage is named for itself
    ("training.runs_per_job", "run"): (
        "seeds",
        f"was dropped {_UNRELEASED}: 'seeds' trains the same runs, the same bytes, one job per method and training set",
    ),
}


def _moved_value(error: jsonschema.ValidationError) -> str | None:
    section = ".".join(str(p) for p in error.absolute_path if not isinstance(p, int))
    moved = MOVED_VALUES.get((section, error.instance)) if isinstance(error.instance, str) else None
    if not moved:
        return None
    new, what = moved
    return f"{_dotted(error.absolute_path)} = {shown(error.instance)} {what}. Use {shown(new)}."


def _explain(error: jsonschema.ValidationError) -> str:
    key = _dotted(error.absolute_path)
    if error.validator == "enum" and (moved := _moved_value(error)):
        return moved
    if error.validator == "additionalProperties":
        allowed = sorted((error.schema.get("properties") or {}).keys())
        unknown = sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, dict) else []
        lines = []
        for u in unknown:
            where = f"{key}.{u}" if key != "<top level>" else u
            if where in MOVED_KEYS:
                lines.append(
                    f"key {shown(where)} moved to {shown(MOVED_KEYS[where])} {_MIGRATE}: rename it in your config."
                )
                continue
            close = difflib.get_close_matches(u, allowed, n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            lines.append(f"unknown key {shown(where)}.{hint} Allowed keys here: {', '.join(allowed) or '(none)'}")
        return "\n".join(lines) or f"{key}: {error.message[:200]}"
    rule = {
        "enum": lambda s: f"one of {s['enum']}",
        "minimum": lambda s: f">= {s['minimum']}",
        "exclusiveMinimum": lambda s: f"> {s['exclusiveMinimum']}",
        "maximum": lambda s: f"<= {s['maximum']}",
        "exclusiveMaximum": lambda s: f"< {s['exclusiveMaximum']}",
        "type": lambda s: f"of type {s['type']}",
        "pattern": lambda s: f"matching the pattern {s['pattern']}",
        "minItems": lambda s: f"at least {s['minItems']} items",
        "maxItems": lambda s: f"at most {s['maxItems']} items",
        "maxLength": lambda s: f"at most {s['maxLength']} characters",
    }.get(str(error.validator))
    what = rule(error.schema) if rule else error.message[:200]
    desc = error.schema.get("description")
    if "propertyNames" in error.schema_path:
        return f"{key}: the key {shown(error.instance)} is not allowed: it must be {what}."
    return f"{key} = {shown(error.instance)} is not allowed: it must be {what}." + (
        f" ({desc.strip()})" if desc else ""
    )


def _coerce_scalars(config: dict[str, Any], schema: dict) -> None:
    """Turn numeric and boolean strings into numbers and booleans where the schema wants them.

    `snakemake --config retry_failed=true` and `--config demo='{"videos_per_event": 3}'` hand values over as strings;
    without this the user would be told that "true" is not a boolean.
    """
    validator = jsonschema.Draft202012Validator(schema)
    for error in validator.iter_errors(config):
        want = error.schema.get("type") if error.validator == "type" else None
        if (
            want not in ("integer", "number", "boolean")
            or not isinstance(error.instance, str)
            or not error.absolute_path
        ):
            continue
        value: Any
        if want == "boolean":
            if error.instance.lower() not in ("true", "false"):
                continue
            value = error.instance.lower() == "true"
        else:
            try:
                value = int(error.instance) if want == "integer" else float(error.instance)
            except ValueError:
                continue
        parent = config
        *head, last = list(error.absolute_path)
        for part in head:
            parent = parent[part]
        parent[last] = value


def check_config(config: dict[str, Any], schema: dict) -> list[str]:
    """Return one readable line per problem (empty when the config is valid)."""
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(copy.deepcopy(config)), key=lambda e: list(map(str, e.absolute_path)))
    return non_finite(config) + bounds.url_passwords(config) + [_explain(e) for e in errors]


# --- local paths the config names ------------------------------------------------------------------------------
def _is_url(value: str) -> bool:
    from squidflow.fetch import is_url

    return is_url(value)


def _is_storage_url(value: str) -> bool:
    """An object-storage URL (`s3://bucket/prefix`): read through a Snakemake storage plugin, not checked on disk."""
    return urlparse(str(value)).scheme == "s3"


def _lookup(config: Mapping[str, Any], dotted: str) -> Any:
    node: Any = config
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _branches(schema: dict, value: Any) -> list[dict]:
    """The schema itself, the `then` of every `allOf: [{if, then}]` whose `if` the value matches, and the members of
    `oneOf`/`anyOf` the value matches."""
    out = [schema]
    for part in schema.get("allOf") or []:
        if "if" in part and "then" in part and jsonschema.Draft202012Validator(part["if"]).is_valid(value):
            out.append(part["then"])
    for part in [*(schema.get("oneOf") or []), *(schema.get("anyOf") or [])]:
        if isinstance(part, dict) and jsonschema.Draft202012Validator(part).is_valid(value):
            out.append(part)
    return out


def _marked_paths(schema: dict | None, value: Any, path: tuple = ()):
    """(dotted key, value, property schema) for every string the config sets where the schema says `x-input`."""
    if not isinstance(schema, dict):
        return
    if isinstance(value, str):
        marked = next((b for b in _branches(schema, value) if "x-input" in b), None)
        if marked is not None:
            yield _dotted(path), value, marked
        return
    if isinstance(value, Mapping):
        branches = _branches(schema, value)
        for key, sub in value.items():
            sub_schema = next((b["properties"][key] for b in branches if key in (b.get("properties") or {})), None)
            if sub_schema is None and isinstance(schema.get("additionalProperties"), dict):
                sub_schema = schema["additionalProperties"]
            yield from _marked_paths(sub_schema, sub, (*path, key))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            yield from _marked_paths(schema["items"], item, (*path, i))


def _is_local_input(value: str, spec: dict) -> bool:
    """A value that names a local input: not empty, not a URL where one is allowed, not a word that is no path
    (`x-input-except`), and not under results/ (made by the workflow itself, e.g. the demo's own files)."""
    return bool(
        value.strip()
        and not (spec.get("x-input-url") and _is_url(value))
        and not (spec.get("x-input-storage") and _is_storage_url(value))
        and value not in (spec.get("x-input-except") or [])
        and Path(value).parts[:1] != ("results",)
    )


def named_inputs(config: Mapping[str, Any], schema: dict | None = None) -> list[tuple[str, str, dict]]:
    """(dotted key, path, its schema entry) of every local input path a config as written names (the entry's
    `x-input`: file | folder | file-or-folder); URLs, empty values and paths under results/ are left out."""
    marked = _marked_paths(schema or load_schema(SCHEMA_PATH), config)
    return [(key, value, spec) for key, value, spec in marked if _is_local_input(value, spec)]


def _path_problem(key: str, value: str, spec: dict, base: Path, repo_root: Path | None) -> str | None:
    kind = spec["x-input"]
    raw = Path(value).expanduser()
    tried = [raw] if raw.is_absolute() else [base / raw]
    if spec.get("x-input-url") and not raw.is_absolute() and repo_root is not None:
        tried.append(repo_root / raw)  # public-data mirrors beside the clone (common.smk's get_data_path)
    tried = list(dict.fromkeys(p.resolve() for p in tried))  # the working directory may be the clone itself
    want = {"file": "file", "folder": "folder", "file-or-folder": "file or folder"}[kind]
    for p in tried:
        ok = p.is_file() if kind == "file" else p.is_dir() if kind == "folder" else p.exists()
        if ok:
            readable = os.access(p, os.R_OK | (os.X_OK if p.is_dir() else 0))
            return (
                None
                if readable
                else f"{key} = '{value}': {p} exists but cannot be read by this user; make it readable."
            )
    found = next((p for p in tried if p.exists()), None)
    if found is not None:
        return (
            f"{key} = '{value}': {found} is a {'folder' if found.is_dir() else 'file'}, but a {want} is expected here."
        )
    hint = ""
    parent = tried[0].parent
    if parent.is_dir():
        close = difflib.get_close_matches(tried[0].name, os.listdir(parent), n=1, cutoff=0.75)
        if close:
            hint = f" Did you mean '{os.path.join(os.path.dirname(value), close[0])}'?"
    looked = " or ".join(str(p) for p in tried)
    download = ""
    if spec.get("x-input-url"):  # a local copy of public data: the download is the other way
        default = str(spec.get("default") or "")
        download = (
            f" Or remove {key} from the config to download it from {default} instead."
            if _is_url(default)
            else " Or give its URL instead, to download it."
        )
    return (
        f"{key} = '{value}': no such {want} (looked for {looked}).{hint} Fix the path (a relative path is relative "
        "to the working directory) or create the " + want + "." + download
    )


def check_inputs(
    config: Mapping[str, Any],
    schema: dict,
    *,
    base_dir: str | Path = ".",
    named: Mapping[str, Any] | None = None,
    repo_root: str | Path | None = REPO_ROOT,
) -> list[str]:
    """One line per local path the config names (`x-input` in the schema) that does not exist or cannot be read.

    `named` is the config as the user wrote it (before defaults): only paths set there are checked, so a default
    location nobody asked for is never an error. `config` (with defaults) decides `x-input-when` conditions. URLs
    and paths under results/ (the workflow's own outputs) are not checked.
    """
    problems = []
    base, root = Path(base_dir).resolve(), (Path(repo_root) if repo_root is not None else None)
    for key, value, spec in named_inputs(named if named is not None else config, schema):
        when = spec.get("x-input-when") or {}
        if any(_lookup(config, k) not in (v if isinstance(v, list) else [v]) for k, v in when.items()):
            continue
        problem = _path_problem(key, value, spec, base, root)
        if problem:
            problems.append(problem)
    return problems


def check_consistency(config: Mapping[str, Any]) -> list[str]:
    """Keys that are only valid together, one line per problem."""
    problems: list[str] = []
    # judgments.source mturk without batches is no config error: the HITs are made before any batch exists; the run
    # stops when it needs the batches (squidflow.judgments.command.missing_judgments_message, issue 58)
    return problems


def check_writable(folders=("results", "logs"), *, base_dir: str | Path = ".", depth: int = 2) -> list[str]:
    """Output folders that exist but cannot be written (a read-only mount, another user's files), with the fix.

    Checked down to `depth` levels (results/videos/demo), where a read-only mount or a chmod usually is; a job that
    meets a deeper one says so itself (squidflow.errors.describe_os_error)."""
    problems = []
    for top in folders:
        root = Path(base_dir).resolve() / top
        if not root.is_dir():
            continue
        level = [root]
        for _ in range(depth + 1):
            nxt = []
            for d in level:
                if not os.access(d, os.W_OK | os.X_OK):
                    why = "read-only file system" if _read_only_fs(d) else "permission denied"
                    problems.append(
                        f"{d} is not writable ({why}); squidflow writes its results and logs there. Make it writable "
                        "(chmod -R u+w, or remount read-write) or run in another working directory with --directory."
                    )
                    continue
                try:
                    nxt += [e for e in d.iterdir() if e.is_dir() and not e.name.startswith(".")]
                except OSError:
                    continue
            level = nxt
    return problems


def _read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def fill_defaults(config: dict[str, Any], schema: dict) -> dict[str, Any]:
    """Set every key the config leaves out to its schema default, in place, at every depth.

    What Snakemake's `validate(config, schema, set_default=True)` does (the jsonschema FAQ's default-setting
    validator), on the schema already in memory: Snakemake's own call re-reads the schema with the pure-Python YAML
    parser, and every job start-up (every cluster job twice) pays for it. Defaults are copied, so a run that changes
    a list it got from a default never changes the schema."""
    base = jsonschema.Draft202012Validator
    properties_keyword = base.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, subschema):
        if isinstance(instance, dict):
            for key, spec in properties.items():
                if "default" in spec:
                    instance.setdefault(key, copy.deepcopy(spec["default"]))
        yield from properties_keyword(validator, properties, instance, subschema)

    jsonschema.validators.extend(base, {"properties": set_defaults})(schema).validate(config)
    return config


def validate_config(
    config: dict[str, Any],
    schema_path: str | Path = SCHEMA_PATH,
    *,
    inputs_base: str | Path | None = None,
    repo_root: str | Path | None = REPO_ROOT,
) -> dict[str, Any]:
    """Check `config` (raising ConfigError that names each bad key), then fill defaults in place via Snakemake.

    With `inputs_base` (the working directory of the run) every local path the config names is checked as well
    (`check_inputs`), relative to it.
    """
    schema = bounded_schema(load_schema(schema_path))
    _coerce_scalars(config, schema)
    problems = check_config(config, schema)
    if problems:
        raise ConfigError(
            "invalid squidflow config (schema: workflow/schemas/config.schema.yaml):\n  - "
            + "\n  - ".join(problems)
            + "\nEach key is documented in config/README.md."
        )
    named = copy.deepcopy(config)
    fill_defaults(config, schema)
    problems = check_consistency(config) + own_data.problems(config, named, inputs_base or ".")  # not the demo's
    if inputs_base is not None:
        problems += check_inputs(config, schema, base_dir=inputs_base, named=named, repo_root=repo_root)
    if problems:
        raise ConfigError("squidflow config:\n  - " + "\n  - ".join(problems))
    return config


def merge_configs(base: dict[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """Snakemake's way of stacking config files: nested mappings are merged key by key, anything else replaced."""
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            merge_configs(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
    return base


def read_configs(paths: Sequence[str | Path]) -> dict[str, Any]:
    """Config files read strictly (`load_yaml`) and merged in order (`merge_configs`), not yet validated: the config
    as written, without the schema's defaults."""
    config: dict[str, Any] = {}
    for p in paths:
        data = load_yaml(p)
        if data is not None and not isinstance(data, dict):
            raise ConfigError(f"{p}: a config file must be a mapping of keys (`key: value` lines) at the top level.")
        merge_configs(config, data or {})
    return config


def load_config(
    path: str | Path,
    schema_path: str | Path | None = None,
    *,
    extra: tuple = (),
    check_paths: bool = True,
    base_dir: str | Path | None = None,
) -> dict[str, Any]:
    """Load and validate config files outside Snakemake (tests, the CLI): `path`, then each of `extra` on top of it
    (like `--configfile a.yaml b.yaml`). With `check_paths`, the local paths they name must exist relative to
    `base_dir` (default: the current directory), as in a workflow run."""
    config = read_configs((path, *extra))
    base = (base_dir if base_dir is not None else os.getcwd()) if check_paths else None
    try:
        return validate_config(config, schema_path or SCHEMA_PATH, inputs_base=base)
    except ConfigError as exc:  # name the file(s) the keys came from
        files = ", ".join(str(p) for p in (path, *extra))
        raise ConfigError(f"{files}: {exc}") from None


def from_section(cls: type[D], section: Mapping[str, Any] | None, *, strict: bool = False, **overrides: Any) -> D:
    """Build a config dataclass from its config section.

    Sections may hold keys meant for the rules rather than the library (threads, memory), so keys that are not
    fields are ignored unless `strict` (the schema has already rejected unknown keys in a workflow run). YAML lists
    become tuples where the field is a tuple, so frozen config objects stay hashable.
    """
    fields = {f.name: str(f.type) for f in dataclasses.fields(cls)}
    section = dict(section or {})
    unknown = sorted(set(section) - set(fields))
    if strict and unknown:
        raise ValueError(f"{cls.__name__}: unknown key(s) {unknown}; allowed: {sorted(fields)} (see config/README.md)")
    values = {
        k: tuple(v) if isinstance(v, list) and fields[k].startswith("tuple") else v
        for k, v in section.items()
        if k in fields
    }
    return cls(**{**values, **overrides})


# --- defaults: the schema's, the one place -----------------------------------------------------------------------
@functools.cache
def _schema() -> dict:
    return load_schema(SCHEMA_PATH)


def schema_key(dotted: str) -> dict:
    """The schema of a config key, `section.key` (e.g. `intervals.resamples`, `judgments.panel.seed`)."""
    node = _schema()
    for part in dotted.split("."):
        properties = node.get("properties") or {}
        if part not in properties:
            raise KeyError(f"{dotted}: no such key in {SCHEMA_PATH.name} (at '{part}')")
        node = properties[part]
    return node


def schema_default(dotted: str) -> Any:
    """The value validation fills in for a key the config leaves out: its schema default, an object's default with
    its properties' defaults filled in (a fresh copy each call)."""
    spec = schema_key(dotted)
    if "default" not in spec:
        raise KeyError(f"{dotted}: the schema gives it no default")
    value = copy.deepcopy(spec["default"])
    if isinstance(value, dict) and "properties" in spec:
        value = {
            **{k: schema_default(f"{dotted}.{k}") for k, v in spec["properties"].items() if "default" in v},
            **value,
        }
    return value


def defaults_from_schema(section: str, **keys: str):
    """Class decorator, under `@dataclass`: each annotated field without a value in the class body takes its default
    from the schema key `section.<field>` (or the key named in `keys`, for a field the rule passes from elsewhere).
    A list becomes a tuple where the field is a tuple; a list or mapping is copied for each instance."""

    def wrap(cls: type[T]) -> type[T]:
        for name, kind in inspect.get_annotations(cls).items():
            if name in cls.__dict__:  # a default that is not a config key's (a constant of the library)
                continue
            value = schema_default(keys.get(name, f"{section}.{name}"))
            if isinstance(value, list) and str(kind).startswith("tuple"):
                value = tuple(value)
            if isinstance(value, (list, dict)):
                value = dataclasses.field(default_factory=functools.partial(copy.deepcopy, value))
            setattr(cls, name, value)
        return cls

    return wrap
