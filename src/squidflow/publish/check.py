"""`squidflow publish check FOLDER`: the checks the venues run, on a published folder someone hands you (or one
edited by hand). One line per problem, each naming the file and the config, field or shard:

- the card (README.md) has the Hub's YAML header, and its `configs` name every config under data/ with data files
  that exist;
- every shard under data/ is a FileObject of croissant.json, and every FileObject's file exists with its sha256;
- croissant.json validates with mlcroissant and yields records of every record set, and its RAI fields are filled,
  never "not collected" where the folder shows the answer (faces blurred, licences, annotation platform and pay);
- `datasets.load_dataset(folder, config)` loads every config.
"""

from __future__ import annotations

import json
import logging
import re
import tempfile
from pathlib import Path

from squidflow.publish import card, croissant
from squidflow.publish.shards import sha256


def check_card(folder: Path) -> tuple[list[str], list[str]]:
    """Problems of README.md's YAML header, and the configs it names."""
    path = folder / "README.md"
    if not path.exists():
        return [f"{path}: missing (the dataset card)"], []
    try:
        head = card.read_header(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        return [f"{path}: not UTF-8 text"], []
    except Exception as exc:  # a hand edit may break the YAML in any way (yaml's errors have no one base class)
        return [f"{path}: the YAML header does not parse: {' '.join(str(exc).split())[:200]}"], []
    if not isinstance(head, dict):
        return [f"{path}: the YAML header is not a mapping of keys (license, pretty_name, configs)"], []
    problems = [f"{path}: the YAML header has no `{key}`" for key in ("license", "pretty_name", "configs")
                if not head.get(key)]
    named = []
    entries = head.get("configs") or []
    for entry in entries if isinstance(entries, list) else [entries]:
        name = entry.get("config_name") if isinstance(entry, dict) else None
        if not name:
            problems.append(f"{path}: a `configs` entry has no config_name: {entry!r}")
            continue
        named.append(name)
        files = entry.get("data_files") or []
        if not files:
            problems.append(f"{path}: config {name}: no data_files")
        for spec in files if isinstance(files, list) else [files]:
            pattern = spec.get("path") if isinstance(spec, dict) else spec
            if not _matches(folder, pattern):
                problems.append(f"{path}: config {name}: data_files {pattern!r} match no file")
    on_disk = sorted(p.name for p in (folder / "data").iterdir() if p.is_dir()) if (folder / "data").is_dir() else []
    for config in on_disk:
        if config not in named:
            problems.append(f"{path}: the YAML header's `configs` does not name the config {config} (data/{config}/)")
    return problems, named


def _matches(folder: Path, pattern) -> bool:
    """Whether a data_files pattern matches a file inside the folder (a pattern reaching outside matches nothing)."""
    if not isinstance(pattern, str) or not pattern or pattern.startswith("/") or ".." in Path(pattern).parts:
        return False
    try:
        return any(True for _ in folder.glob(pattern))
    except (ValueError, NotImplementedError, OSError):
        return False


def _inside(folder: Path, rel) -> Path | None:
    """folder/rel when rel is a relative path inside the folder, else None."""
    if not isinstance(rel, str) or not rel or rel.startswith("/") or ".." in Path(rel).parts or "\x00" in rel:
        return None
    return folder / rel


def check_files(folder: Path, meta: dict) -> list[str]:
    """Every shard listed in croissant.json with its sha256, and every shard on disk listed."""
    path = folder / "croissant.json"
    problems, listed = [], set()
    distribution = meta.get("distribution", [])
    for obj in distribution if isinstance(distribution, list) else [distribution]:
        if not isinstance(obj, dict) or obj.get("@type") not in ("cr:FileObject", "sc:FileObject", "FileObject"):
            continue
        rel = obj.get("contentUrl", "")
        file = _inside(folder, rel)
        if file is None:
            problems.append(f"{path}: FileObject {obj.get('@id', rel)!s}: contentUrl {rel!r} is not a path inside the folder")
            continue
        listed.add(rel)
        if not file.is_file():
            problems.append(f"{path}: FileObject {obj.get('@id', rel)}: {rel} is missing")
        elif obj.get("sha256") and sha256(file) != obj["sha256"]:
            problems.append(f"{path}: FileObject {obj.get('@id', rel)}: sha256 of {rel} differs from croissant.json's")
    for shard in sorted((folder / "data").glob("*/*.parquet")):
        rel = shard.relative_to(folder).as_posix()
        if rel not in listed:
            problems.append(f"{path}: {rel} is not a FileObject of the distribution")
    return problems


def check_rai(folder: Path, meta: dict) -> list[str]:
    path = folder / "croissant.json"
    problems = []
    for key, spellings in croissant.RAI_KEYS.items():
        values = [meta[k] for k in spellings if k in meta]
        if not values and key in croissant.OPTIONAL_RAI:
            continue
        if not values or all(v in (None, "", [], [""]) for v in values):
            problems.append(f"{path}: {key} is empty (a Responsible-AI field the NeurIPS datasets track asks for)")
    return problems


# A value that says nothing: where the folder itself shows the answer, a field holding only this fails (issue 48).
PLACEHOLDER = re.compile(r"^\W*(not collected|not known|unknown|n/?a|none|tbd|todo|not stated|-)\b", re.IGNORECASE)


def _texts(meta: dict, key: str) -> list[str]:
    """Every text of a Croissant field, in any of its spellings (a list, a string, or absent)."""
    out = []
    for k in croissant.RAI_KEYS.get(key, (key,)):
        value = meta.get(k)
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str) and v.strip():
                out.append(v.strip())
    return out


def _images_columns(folder: Path, columns: tuple[str, ...]) -> dict[str, list]:
    """The values of `columns` of the images config's shards (inside the folder only; a column absent: no key)."""
    import pyarrow.parquet as pq

    out: dict[str, list] = {}
    root = folder.resolve()
    for shard in sorted((folder / "data" / "images").glob("*.parquet")):
        try:
            if root not in shard.resolve().parents:
                continue
            names = pq.read_schema(shard).names
            table = pq.read_table(shard, columns=[c for c in columns if c in names])
        except Exception:  # an unreadable shard is told by check_files and mlcroissant, not here
            continue
        for name in table.column_names:
            out.setdefault(name, []).extend(table.column(name).to_pylist())
    return out


def check_rai_known(folder: Path, meta: dict) -> list[str]:
    """RAI fields that say nothing ("not collected", "unknown", empty) where the folder shows what the run knew: faces
    blurred (the images config's faces_blurred), the videos' licences (its license column), the annotation platform
    (a judgments config) and the pay (the card's "Pay:" line). One line per field, naming it and what the folder shows."""
    path = folder / "croissant.json"
    problems = []
    cols = _images_columns(folder, ("faces_blurred", "license"))
    blurred = [n for n in cols.get("faces_blurred", []) if n is not None]
    if blurred:
        said = _texts(meta, "rai:personalSensitiveInformation")
        if not any("blur" in t.lower() and not PLACEHOLDER.match(t) for t in said):
            problems.append(f"{path}: rai:personalSensitiveInformation does not say that faces were blurred, though "
                            f"the images config's faces_blurred counts {sum(blurred):,} regions in "
                            f"{sum(1 for n in blurred if n):,} images; say so (squidflow publish writes it)")
    if any(v for v in cols.get("license", []) if v):
        stated = [t for t in _texts(meta, "license") if not PLACEHOLDER.match(t)]
        if not stated:
            problems.append(f"{path}: license is empty or says nothing, though the images config's license column "
                            "states each video's licence; name the dataset's licence (publish.license)")
    if (folder / "data" / "judgments").is_dir():
        for key in ("rai:annotationPlatform", "rai:annotationProtocol"):
            said = _texts(meta, key)
            if said and all(PLACEHOLDER.match(t) for t in said):
                problems.append(f"{path}: {key} says {said[0][:60]!r}, though the folder holds judgments (a "
                                "judgments config): say who rated them, on which platform, how")
    try:
        readme = (folder / "README.md").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        readme = ""
    pay = re.search(r"^- Pay: (.+?)\.?$", readme, flags=re.MULTILINE)
    if pay and not PLACEHOLDER.match(pay.group(1)) and not pay.group(1).startswith("not stated"):
        protocol = " ".join(_texts(meta, "rai:annotationProtocol"))
        if not re.search(r"\bpay\b|\bpaid\b", protocol, flags=re.IGNORECASE) or \
                re.search(r"pay:\s*(not collected|unknown|n/?a)", protocol, flags=re.IGNORECASE):
            problems.append(f"{path}: rai:annotationProtocol does not say what annotators were paid, though the card "
                            f"does ({pay.group(1)[:60]!r}); say it there too")
    return problems


def check_loading(folder: Path, configs: list[str]) -> list[str]:
    """`datasets.load_dataset(folder, config)` for every config (into a scratch cache)."""
    import datasets

    problems = []
    datasets.logging.set_verbosity_error()
    datasets.disable_progress_bars()
    with tempfile.TemporaryDirectory(prefix="squidflow-publish-check-") as cache:
        for config in configs:
            try:
                loaded = datasets.load_dataset(str(folder), config, cache_dir=cache)
            except Exception as exc:  # any reader error is a problem of the folder, named with its config
                problems.append(f"{folder}: datasets.load_dataset(folder, {config!r}) fails: {type(exc).__name__}: "
                                f"{str(exc).splitlines()[0] if str(exc) else ''}")
                continue
            if not sum(len(s) for s in loaded.values()):
                problems.append(f"{folder}: config {config}: loads with no rows")
    return problems


def check_folder(folder: str | Path, *, load: bool = True) -> list[str]:
    """Every problem of a published folder (empty: it passes)."""
    folder = Path(folder)
    if not folder.is_dir():
        return [f"{folder}: not a folder"]
    problems, configs = check_card(folder)
    path = folder / "croissant.json"
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return [*problems, f"{path}: missing"]
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return [*problems, f"{path}: not JSON: {exc}"]
    if not isinstance(meta, dict):
        return [*problems, f"{path}: not a JSON-LD object (a Croissant file is one object)"]
    problems += check_files(folder, meta)
    problems += check_rai(folder, meta)
    problems += check_rai_known(folder, meta)
    problems += croissant.check(path)
    if load:
        logging.getLogger("datasets").setLevel(logging.ERROR)
        problems += check_loading(folder, configs)
    return problems
