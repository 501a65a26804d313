"""Bounds on what a config may ask for, so a hostile or mistyped config stops at once with a short message.

- YAML aliases (`&a` / `*a`) share one value between places; nested, a few lines expand to billions of values (an
  "alias bomb") that every walk of the config — validation, merging, Snakemake's params — visits one by one.
  `expanded_size` counts the values a document stands for, aliases expanded, without expanding them; the reader
  refuses a document over `MAX_EXPANDED_NODES` or nested deeper than `MAX_DEPTH`.
- A count without a `maximum` in the schema gets `DEFAULT_MAXIMUM` (a seed `SEED_MAXIMUM`) when the schema is read
  (`bounded_schema`), so `demo.videos_per_event: 99999999999999999999999999` is refused before the workflow is
  parsed; NaN and infinity are refused wherever the config holds a number (`non_finite`).
- A value quoted in a message is cut to `shown(...)`'s length.
- A gzip file a person hands us (predictions .csv.gz, GuessWhat?! .jsonl.gz) is unpacked at most to
  `MAX_GZIP_RATIO` times its size (at least `MIN_GZIP_ALLOWANCE`): a "gzip bomb" stops with a message, not with the
  machine's memory (`gzip_read`, `gzip_lines`). Real exports compress 4-15 times.
- YAML a person hands us (a dataset card's header) is read with the same bound on aliases and depth (`load_bounded`),
  and nesting is counted from the parser's events before PyYAML's C composer recurses (`yaml_depth`).
- A Parquet file a person hands us (predictions, a URL list, a published folder's shards) is checked against its
  footer before it is read (`parquet_check`): its rows may take at most what its size would unpack to as gzip
  (`gzip_allowance`), counting at least `VALUE_BYTES` per value, so 400 million dictionary-encoded rows in 8.6 MB
  stop with a message, not with an aborted allocation (issue 57).
- A text file read whole (a published folder's croissant.json and card) is at most `MAX_TEXT_BYTES` (`read_text`).
"""

from __future__ import annotations

import gzip
import math
import os
from collections.abc import Iterator
from typing import Any

MAX_EXPANDED_NODES = 200_000  # the paper-scale configs hold a few thousand values
MAX_DEPTH = 64
DEFAULT_MAXIMUM = 1_000_000  # an integer count (videos, epochs, workers, resamples) without a maximum of its own
SEED_MAXIMUM = 2**32 - 1
NUMBER_MAXIMUM = 1e9  # a number (seconds, weights) without a maximum of its own
SHOWN = 80
MAX_GZIP_RATIO = 50
MIN_GZIP_ALLOWANCE = 64 * 2**20
_CHUNK = 1 << 20
VALUE_BYTES = 8  # a value in memory: at least a 64-bit number, or a string's offset
MAX_TEXT_BYTES = 64 * 2**20  # croissant.json and README.md of a published folder: squidflow writes a few hundred kB


def gzip_allowance(path: str | os.PathLike) -> int:
    """How many bytes the gzip file at `path` may unpack to."""
    return max(MIN_GZIP_ALLOWANCE, MAX_GZIP_RATIO * os.path.getsize(path))


def _gzip_bomb(where: str, path: str | os.PathLike, limit: int, error: type[Exception]) -> Exception:
    return error(
        f"{where}: unpacks to more than {limit:,} bytes, over {MAX_GZIP_RATIO} times its "
        f"{os.path.getsize(path):,} bytes (a gzip bomb, or not this kind of file); give the file unpacked if "
        "it is real."
    )


def gzip_read(path: str | os.PathLike, where: str, error: type[Exception]) -> bytes:
    """The unpacked bytes of a gzip file, or `error` naming it once they pass `gzip_allowance`."""
    limit, parts, total = gzip_allowance(path), [], 0
    with gzip.open(path, "rb") as fh:
        while piece := fh.read(_CHUNK):
            total += len(piece)
            if total > limit:
                raise _gzip_bomb(where, path, limit, error)
            parts.append(piece)
    return b"".join(parts)


def gzip_lines(path: str | os.PathLike, where: str, error: type[Exception]) -> Iterator[bytes]:
    """The unpacked lines of a gzip file (a line longer than a chunk read piece by piece), or `error` naming it once
    they pass `gzip_allowance`."""
    limit, pending, total = gzip_allowance(path), [], 0
    with gzip.open(path, "rb") as fh:
        while piece := fh.readline(_CHUNK):
            total += len(piece)
            if total > limit:
                raise _gzip_bomb(where, path, limit, error)
            pending.append(piece)
            if piece.endswith(b"\n"):
                yield b"".join(pending)
                pending = []
    if pending:
        yield b"".join(pending)


def parquet_check(path: str | os.PathLike, where: str, error: type[Exception]) -> None:
    """`error` naming `where` when the Parquet file's footer says its rows unpack past `gzip_allowance` (the gzip
    readers' ratio): its row groups' uncompressed size, and at least VALUE_BYTES per value (a dictionary- or
    run-length-encoded column is small on disk whatever its rows). Read from the footer only, before any row."""
    import pyarrow.parquet as pq

    try:
        meta = pq.read_metadata(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several kinds for a damaged file
        why = " ".join(str(exc).split())[:200]
        raise error(f"{where}: cannot be read as Parquet ({type(exc).__name__}: {why})") from None
    rows, columns = meta.num_rows, max(meta.num_columns, 1)
    stored = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    size, limit = max(stored, rows * columns * VALUE_BYTES), gzip_allowance(path)
    if size > limit:
        raise error(
            f"{where}: its {rows:,} rows of {columns} column(s) take at least {size:,} bytes to read, over "
            f"{MAX_GZIP_RATIO} times its {os.path.getsize(path):,} bytes (the bound is {limit:,}; a Parquet "
            "decompression bomb, or not this kind of file); give the rows in files that are not packed that tightly."
        )


def read_text(path: str | os.PathLike, where: str, error: type[Exception], limit: int = MAX_TEXT_BYTES) -> str:
    """A UTF-8 text file read whole, or `error` naming `where` when it is over `limit` bytes (before reading it)."""
    size = os.path.getsize(path)
    if size > limit:
        raise error(f"{where}: {size:,} bytes, over the {limit:,} this file may have; it is not one squidflow wrote.")
    with open(path, encoding="utf-8") as fh:
        return fh.read()


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
    out: list = []
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


# The one key whose URL may carry a password: the workflow hands it to the download jobs in their environment and
# records it redacted (squidflow.fetch.PROXY_ENV); any other value is recorded as written (run_config.yaml, Snakemake's
# .snakemake/metadata) and quoted in messages.
URL_PASSWORD_KEYS = {"download.proxy"}


def url_passwords(config: Any, path: str = "") -> list[str]:
    """One line per config value (but download.proxy) whose URL holds a password (`scheme://user:password@host`)."""
    from squidflow.fetch import redact_url_credentials

    out = []
    if isinstance(config, dict):
        for k, v in config.items():
            out += url_passwords(v, f"{path}.{k}" if path else str(k))
    elif isinstance(config, list):
        for i, v in enumerate(config):
            out += url_passwords(v, f"{path}[{i}]")
    elif (
        isinstance(config, str) and path not in URL_PASSWORD_KEYS and (safe := redact_url_credentials(config)) != config
    ):
        out.append(
            f"{path} = {shown(safe)} holds a password in its URL, which squidflow would record with the run "
            "(results/run_config.yaml, .snakemake/metadata): give a URL without user:password@, or "
            "download the file and point the key at the local copy."
        )
    return out


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


def _safe_loader():
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser where PyYAML has it


def yaml_depth(text: str, loader_class=None) -> int:
    """How deep the YAML in `text` nests, counted from the parser's events (iterative) and stopping past MAX_DEPTH:
    PyYAML's composer recurses once per level, and libyaml's C composer overflows the stack (SIGSEGV) on a document
    nested 100,000 deep, before any bound on the composed nodes could apply."""
    import yaml

    loader = (loader_class or _safe_loader())(text)
    try:
        depth = deepest = 0
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                deepest = max(deepest, depth)
                if depth > MAX_DEPTH:
                    return depth
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
        return deepest
    finally:
        loader.dispose()


def refuse_deep(text: str, where, error: type[Exception], loader_class=None) -> None:
    """`error` naming `where` when the YAML in `text` nests deeper than MAX_DEPTH (see `yaml_depth`)."""
    if yaml_depth(text, loader_class) > MAX_DEPTH:
        raise error(
            f"{where}: the YAML is nested deeper than {MAX_DEPTH} levels; a config is far flatter. Write the "
            "values out at a shallower level."
        )


def load_bounded(text: str, where: str, error: type[Exception] = ValueError) -> Any:
    """YAML someone hands us (a dataset card's header), parsed safely within the config's bounds: nested at most
    MAX_DEPTH deep, at most MAX_EXPANDED_NODES values with aliases expanded; else `error` naming `where`."""
    loader_class = _safe_loader()
    too_much = (
        f"{where}: the YAML stands for more than {MAX_EXPANDED_NODES:,} values or is nested deeper than "
        f"{MAX_DEPTH} levels (aliases *name expanded); write the values out instead of nesting aliases."
    )
    if yaml_depth(text, loader_class) > MAX_DEPTH:
        raise error(too_much)
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        size, depth = expanded_size(node)
        if size > MAX_EXPANDED_NODES or depth > MAX_DEPTH:
            raise error(too_much)
        return loader.construct_document(node)
    finally:
        loader.dispose()
