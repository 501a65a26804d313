"""Config validation whose errors a person can act on.

`snakemake.utils.validate` fills defaults well but reports a bad value as a jsonschema dump. We check the config
ourselves first and, when it is wrong, say which key (dotted, e.g. `demo.videos_per_event`), which value, and what is
allowed; only a valid config is handed to Snakemake's validator, which fills in the defaults.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import jsonschema
import yaml

T = TypeVar("T")


class ConfigError(ValueError):
    """The config breaks its schema; the message names every offending key."""


def load_schema(path: str | Path) -> dict:
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def _dotted(path) -> str:
    parts = []
    for p in path:
        parts.append(f"[{p}]" if isinstance(p, int) else (("." if parts else "") + str(p)))
    return "".join(parts) or "<top level>"


def _explain(error: jsonschema.ValidationError) -> str:
    key = _dotted(error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = sorted((error.schema.get("properties") or {}).keys())
        unknown = sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, dict) else []
        lines = []
        for u in unknown:
            where = f"{key}.{u}" if key != "<top level>" else u
            close = difflib.get_close_matches(u, allowed, n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            lines.append(f"unknown key '{where}'.{hint} Allowed keys here: {', '.join(allowed) or '(none)'}")
        return "\n".join(lines) or f"{key}: {error.message}"
    allowed = {
        "enum": lambda s: f"one of {s['enum']}",
        "minimum": lambda s: f">= {s['minimum']}",
        "exclusiveMinimum": lambda s: f"> {s['exclusiveMinimum']}",
        "maximum": lambda s: f"<= {s['maximum']}",
        "exclusiveMaximum": lambda s: f"< {s['exclusiveMaximum']}",
        "type": lambda s: f"of type {s['type']}",
        "pattern": lambda s: f"matching the pattern {s['pattern']}",
        "minItems": lambda s: f"at least {s['minItems']} items",
        "maxItems": lambda s: f"at most {s['maxItems']} items",
    }.get(str(error.validator))
    what = allowed(error.schema) if allowed else error.message
    desc = error.schema.get("description")
    return f"{key} = {error.instance!r} is not allowed: it must be {what}." + (f" ({desc.strip()})" if desc else "")


def _coerce_scalars(config: dict[str, Any], schema: dict) -> None:
    """Turn numeric and boolean strings into numbers and booleans where the schema wants them.

    `snakemake --config retry_failed=true` and `--config demo='{"videos_per_event": 3}'` hand values over as strings;
    without this the user would be told that "true" is not a boolean.
    """
    validator = jsonschema.Draft202012Validator(schema)
    for error in validator.iter_errors(config):
        want = error.schema.get("type") if error.validator == "type" else None
        if want not in ("integer", "number", "boolean") or not isinstance(error.instance, str) or not error.absolute_path:
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
    return [_explain(e) for e in errors]


def validate_config(config: dict[str, Any], schema_path: str | Path) -> dict[str, Any]:
    """Check `config` (raising ConfigError that names each bad key), then fill defaults in place via Snakemake."""
    schema = load_schema(schema_path)
    _coerce_scalars(config, schema)
    problems = check_config(config, schema)
    if problems:
        raise ConfigError(
            "invalid squidflow config (schema: workflow/schemas/config.schema.yaml):\n  - " + "\n  - ".join(problems)
            + "\nEach key is documented in config/README.md."
        )
    from snakemake.utils import validate

    validate(config, str(schema_path), set_default=True)
    return config


def load_config(path: str | Path, schema_path: str | Path | None = None) -> dict[str, Any]:
    """Load and validate a config file outside Snakemake (tests, the CLI)."""
    with open(path, encoding="utf-8") as fh:
        config = yaml.safe_load(fh) or {}
    if schema_path is None:
        schema_path = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"
    return validate_config(config, schema_path)


def from_section(cls: type[T], section: Mapping[str, Any] | None, *, strict: bool = False, **overrides: Any) -> T:
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
