"""Bounds on what a config may ask for, so a hostile or mistyped config stops at once with a short message.

- YAML aliases (`&a` / `*a`) share one value between places; nested, a few lines expand to billions of values (an
  "alias bomb") that every walk of the config — validation, merging, Snakemake's params — visits one by one.
  `expanded_size` counts the values a document stands for, aliases expanded, without expanding them; the reader
  refuses a document over `MAX_EXPANDED_NODES` or nested deeper than `MAX_DEPTH`.
- A count without a `maximum` in the schema gets `DEFAULT_MAXIMUM` (a seed `SEED_MAXIMUM`) when the schema is read
  (`bounded_schema`), so `demo.videos_per_event: 99999999999999999999999999` is refused before the workflow is
  parsed; NaN and infinity are refused wherever the config holds a number (`non_finite`).
- A value quoted in a message is cut to `shown(...)`'s length.
"""

from __future__ import annotations

import math
from typing import Any

MAX_EXPANDED_NODES = 200_000  # the paper-scale configs hold a few thousand values
MAX_DEPTH = 64
DEFAULT_MAXIMUM = 1_000_000  # an integer count (videos, epochs, workers, resamples) without a maximum of its own
SEED_MAXIMUM = 2**32 - 1
NUMBER_MAXIMUM = 1e9  # a number (seconds, weights) without a maximum of its own
SHOWN = 80


def shown(value: Any, limit: int = SHOWN) -> str:
    """`repr(value)`, cut to `limit` characters with the full length said."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def expanded_size(node) -> tuple[int, int]:
    """(values the YAML node graph stands for with every alias expanded, its nesting depth), computed once per
    distinct node (aliases are shared nodes), iteratively (a file nested 100,000 deep does not overflow the stack)."""
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    stack = [(node, False)]
    while stack:
        current, done = stack.pop()
        key = id(current)
        if key in size:
            continue
        children = _children(current)
        if not done:
            stack.append((current, True))
            stack.extend((c, False) for c in children if id(c) not in size)
            if len(stack) > 10 * MAX_DEPTH * 1000:
                return MAX_EXPANDED_NODES + 1, len(stack)
            continue
        size[key] = 1 + sum(size.get(id(c), 0) for c in children)
        depth[key] = 1 + max((depth.get(id(c), 0) for c in children), default=0)
        if size[key] > MAX_EXPANDED_NODES or depth[key] > MAX_DEPTH:
            return size[key], depth[key]
    return size[id(node)], depth[id(node)]


def _children(node) -> list:
    value = getattr(node, "value", None)
    if not isinstance(value, list):
        return []
    out = []
    for item in value:
        if isinstance(item, tuple):
            out.extend(item)
        else:
            out.append(item)
    return out


def bounded_schema(schema: Any, name: str = "") -> Any:
    """The schema with a `maximum` on every integer and number that has none (see the module's docstring)."""
    if isinstance(schema, dict):
        out = {k: (bounded_schema(v, k if k not in ("properties", "items", "then", "else") else name)
                   if k != "properties" else {p: bounded_schema(s, p) for p, s in v.items()} if isinstance(v, dict) else v)
               for k, v in schema.items()}  # fmt: skip
        types = schema.get("type")
        types = types if isinstance(types, list) else [types]
        if "maximum" not in schema and "exclusiveMaximum" not in schema:
            if "integer" in types:
                out["maximum"] = SEED_MAXIMUM if name == "seed" or name.endswith("_seed") else DEFAULT_MAXIMUM
            elif "number" in types:
                out["maximum"] = NUMBER_MAXIMUM
        return out
    if isinstance(schema, list):
        return [bounded_schema(s, name) for s in schema]
    return schema


def non_finite(config: Any, path: str = "") -> list[str]:
    """One line per NaN or infinite number in `config` (by dotted key): JSON Schema's minimum/maximum let them pass."""
    out = []
    if isinstance(config, dict):
        for k, v in config.items():
            out += non_finite(v, f"{path}.{k}" if path else str(k))
    elif isinstance(config, list):
        for i, v in enumerate(config):
            out += non_finite(v, f"{path}[{i}]")
    elif isinstance(config, float) and not math.isfinite(config):
        out.append(f"{path} = {config} is not allowed: it must be a finite number.")
    return out
