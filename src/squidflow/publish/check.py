"""`squidflow publish check FOLDER`: the checks the venues run, on a published folder someone hands you (or one
edited by hand). One line per problem, each naming the file and the config, field or shard:

- the card (README.md) has the Hub's YAML header, and its `configs` name every config under data/ with data files
  that exist;
- every shard under data/ is a FileObject of croissant.json, and every FileObject's file exists with its sha256;
- croissant.json validates with mlcroissant and yields records of every record set, and its RAI fields are filled,
  never "not collected" where the folder shows the answer (faces blurred, licences, annotation platform and pay);
- `datasets.load_dataset(folder, config)` loads every config;
- the card's licence is a Hub licence id and croissant.json's `license` is its URL (they agree), and the LeWiDi
  files (lewidi/) are there; a folder that holds datasets instead of being one names them (did you mean ...).

No file names a rater: a string that looks like an MTurk WorkerId or an e-mail address (but the card's removal
contact), or, where FOLDER is a run's results/publish/<name>/, one of that run's raw rater ids (its
results/judgments/judgments.parquet), is a problem naming the file. A shard whose footer says its rows would unpack
past squidflow.config.bounds' ratio, or a card or croissant.json over bounds.MAX_TEXT_BYTES, is named before anything reads
it.

It reads only files inside FOLDER (and that run's judgments) and fetches nothing: a contentUrl, a FileSet's includes or a card's data_files that
is a URL, an absolute path, a `../` or a symbolic link out of the folder is a problem named with its field, and then
neither mlcroissant's record generation nor `datasets` loading runs (either would follow it).
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
from pathlib import Path

from squidflow.config import bounds
from squidflow.judgments import pseudonyms
from squidflow.publish import card, croissant
from squidflow.publish.shards import sha256
from squidflow.vocabulary import licenses


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
    problems = [
        f"{path}: the YAML header has no `{key}`" for key in ("license", "pretty_name", "configs") if not head.get(key)
    ]
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


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
OUTSIDE = "publish check reads only files inside the folder and fetches no URL"


def _plain_relative(rel) -> bool:
    """Whether `rel` is a relative path that stays in the folder: no URL scheme, not absolute, no `..`, no `~`."""
    return (
        isinstance(rel, str)
        and bool(rel)
        and "\x00" not in rel
        and not rel.startswith(("/", "\\", "~"))
        and not _SCHEME.match(rel)
        and ".." not in Path(rel).parts
    )


def _matches(folder: Path, pattern) -> bool:
    """Whether a data_files pattern matches a file inside the folder (a pattern reaching outside matches nothing)."""
    if not _plain_relative(pattern):
        return False
    try:
        return any(True for _ in folder.glob(pattern))
    except (ValueError, NotImplementedError, OSError):
        return False


def _inside(folder: Path, rel) -> Path | None:
    """folder/rel when rel is a relative path inside the folder (a symbolic link out of it is not), else None."""
    if not _plain_relative(rel):
        return None
    path = folder / rel
    return path if _resolves_inside(path, folder.resolve()) else None


def _resolves_inside(path: Path, base: Path) -> bool:
    try:
        return path.resolve().is_relative_to(base)
    except (OSError, RuntimeError):  # a link loop
        return False


def links_out(folder: Path) -> list[str]:
    """Every symbolic link under `folder` that resolves outside it (a shard linked to /etc/passwd), one line each."""
    base, out = folder.resolve(), []
    for top, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(top) / name
            if path.is_symlink() and not _resolves_inside(path, base):
                out.append(
                    f"{path}: a symbolic link to {os.readlink(path)!r}, outside the folder ({OUTSIDE}): "
                    "put the file itself there"
                )
    return sorted(out)


def outside_reads(folder: Path, meta: dict) -> list[str]:
    """What in croissant.json (a FileObject's contentUrl, a FileSet's includes) or the card (a data_files pattern) is
    a URL, an absolute path or a `../`: one line each, naming the field. mlcroissant and `datasets` would follow it."""
    path, out = folder / "croissant.json", []
    distribution = meta.get("distribution", [])
    for obj in distribution if isinstance(distribution, list) else [distribution]:
        if not isinstance(obj, dict):
            continue
        for field in ("contentUrl", "includes", "excludes"):
            values = obj.get(field)
            for value in values if isinstance(values, list) else [values]:
                if value is not None and not _plain_relative(value):
                    out.append(
                        f"{path}: {obj.get('@type', 'distribution')} {str(obj.get('@id', ''))[:80]}: {field} "
                        f"{str(value)[:120]!r} is not a path inside the folder ({OUTSIDE}): make it the "
                        "file's path relative to the folder"
                    )
    try:
        head = card.read_header((folder / "README.md").read_text(encoding="utf-8"))
    except Exception:  # a header that does not parse is named by check_card
        head = {}
    entries = head.get("configs") if isinstance(head, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        files = entry.get("data_files") if isinstance(entry, dict) else None
        for spec in files if isinstance(files, list) else [files]:
            pattern = spec.get("path") if isinstance(spec, dict) else spec
            if pattern is not None and not _plain_relative(pattern):
                out.append(
                    f"{folder / 'README.md'}: config {entry.get('config_name')}: data_files {str(pattern)[:120]!r}"
                    f" is not a path inside the folder ({OUTSIDE})"
                )
    return out


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
        if file is None:  # named by outside_reads
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


def check_version(folder: Path, meta: dict) -> list[str]:
    """The version the card records with its data digest (card.VERSION_MARK) against croissant.json's version and
    the data files as they are: data that changed while the version did not is named (a `datasets` cache of the
    folder would serve the old rows under the same version)."""
    from squidflow.publish.shards import folder_digest

    path = folder / "README.md"
    try:
        recorded = card.recorded_version(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return []
    if recorded is None:
        return []
    version, digest = recorded
    problems = []
    if str(meta.get("version", "")) != version:
        problems.append(
            f"{path}: version {version} differs from croissant.json's {meta.get('version')!r}; rebuild the folder "
            "with the workflow (rule publish_dataset)"
        )
    if folder_digest(folder) != digest:
        problems.append(
            f"{folder}: the data files changed while the version stayed {version} (the card records their digest); "
            "rebuild the folder with the workflow, which raises the version with what changed (a next round: the "
            "minor number, a removal on request: the patch number)"
        )
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


def shard_rows(folder: Path, config: str) -> int:
    """The rows the folder's shards of `config` hold (data/<config>/*.parquet, from their Parquet footers)."""
    import pyarrow.parquet as pq

    return sum(pq.read_metadata(shard).num_rows for shard in sorted((folder / "data" / config).glob("*.parquet")))


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
            problems.append(
                f"{path}: rai:personalSensitiveInformation does not say that faces were blurred, though "
                f"the images config's faces_blurred counts {sum(blurred):,} regions in "
                f"{sum(1 for n in blurred if n):,} images; say so (squidflow publish writes it)"
            )
    if any(v for v in cols.get("license", []) if v):
        stated = [t for t in _texts(meta, "license") if not PLACEHOLDER.match(t)]
        if not stated:
            problems.append(
                f"{path}: license is empty or says nothing, though the images config's license column "
                "states each video's licence; name the dataset's licence (publish.license)"
            )
    if (folder / "data" / "judgments").is_dir():
        for key in ("rai:annotationPlatform", "rai:annotationProtocol"):
            said = _texts(meta, key)
            if said and all(PLACEHOLDER.match(t) for t in said):
                problems.append(
                    f"{path}: {key} says {said[0][:60]!r}, though the folder holds judgments (a "
                    "judgments config): say who rated them, on which platform, how"
                )
    try:
        readme = (folder / "README.md").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        readme = ""
    pay = re.search(r"^- Pay: (.+?)\.?$", readme, flags=re.MULTILINE)
    if pay and not PLACEHOLDER.match(pay.group(1)) and not pay.group(1).startswith("not stated"):
        protocol = " ".join(_texts(meta, "rai:annotationProtocol"))
        if not re.search(r"\bpay\b|\bpaid\b", protocol, flags=re.IGNORECASE) or re.search(
            r"pay:\s*(not collected|unknown|n/?a)", protocol, flags=re.IGNORECASE
        ):
            problems.append(
                f"{path}: rai:annotationProtocol does not say what annotators were paid, though the card "
                f"does ({pay.group(1)[:60]!r}); say it there too"
            )
    return problems


def check_loading(folder: Path, configs: list[str]) -> list[str]:
    """`datasets.load_dataset(folder, config)` for every config, each into a cache of its own made for this check, and
    the rows it yields against the rows of the folder's shards. `datasets` keys a local folder's cache by the folder's
    name, not its place or its files (huggingface/datasets#2956): a load through the user's ~/.cache would read the
    rows of another folder of the same name, or of this one before it was rebuilt, and the check would pass on them."""
    import datasets

    problems = []
    datasets.logging.set_verbosity_error()
    datasets.disable_progress_bars()
    for config in configs:
        with tempfile.TemporaryDirectory(prefix="squidflow-publish-check-") as cache:
            try:
                loaded = datasets.load_dataset(str(folder), config, cache_dir=cache)
            except Exception as exc:  # any reader error is a problem of the folder, named with its config
                problems.append(
                    f"{folder}: datasets.load_dataset(folder, {config!r}) fails: {type(exc).__name__}: "
                    f"{str(exc).splitlines()[0] if str(exc) else ''}"
                )
                continue
            rows = sum(len(s) for s in loaded.values())
        if not rows:
            problems.append(f"{folder}: config {config}: loads with no rows")
        elif rows != (held := shard_rows(folder, config)):
            problems.append(
                f"{folder}: config {config}: datasets.load_dataset yields {rows:,} rows, but the shards "
                f"under data/{config}/ hold {held:,} (the card's data_files miss or repeat a shard)"
            )
    return problems


def datasets_below(folder: Path) -> list[Path]:
    """The published folders one or two levels below `folder` (results/ or results/publish/ given for the dataset)."""
    found = [p.parent for p in [*folder.glob("*/croissant.json"), *folder.glob("*/*/croissant.json")]]
    return sorted(p for p in found if (p / "README.md").exists())


def check_licence(folder: Path, meta: dict) -> list[str]:
    """The card's `license` is a Hub id and croissant.json's `license` is that licence's URL (squidflow.vocabulary.licenses)."""
    readme = folder / "README.md"
    try:
        head = card.read_header(readme.read_text(encoding="utf-8"))
    except Exception:  # noqa: BLE001 - check_card names an unreadable card already
        return []
    if not isinstance(head, dict) or not head.get("license"):
        return []
    hub = str(head["license"])
    if hub not in licenses.HUB_LICENSES:
        near = licenses.closest(hub)
        return [
            f"{readme}: license {hub!r} is not a Hugging Face Hub licence id"
            + (f" (did you mean {near!r}?)" if near else "")
        ]
    given = meta.get("license")
    given = [str(g) for g in (given if isinstance(given, list) else [given]) if g]
    want = licenses.spdx_url(hub, str(head.get("license_link") or ""))
    if want not in given:
        return [
            f"{folder / 'croissant.json'}: license {', '.join(given) or '(none)'} disagrees with the card "
            f"({readme}: license {hub}, whose URL is {want}); publish both from the one publish.license"
        ]
    return []


def too_large(folder: Path) -> list[str]:
    """The card and croissant.json when over bounds.MAX_TEXT_BYTES: the checks read them whole."""
    out = []
    for name in ("README.md", "croissant.json"):
        path = folder / name
        if path.is_file() and (size := path.stat().st_size) > bounds.MAX_TEXT_BYTES:
            out.append(
                f"{path}: {size:,} bytes, over the {bounds.MAX_TEXT_BYTES:,} publish check reads (squidflow writes "
                f"a few hundred kB); not checked further: write it again with squidflow publish"
            )
    return out


def check_shard_sizes(folder: Path) -> list[str]:
    """Every Parquet file under data/ whose footer says its rows unpack past the bound (squidflow.config.bounds.parquet_check),
    before anything reads its rows."""
    out = []
    for shard in sorted((folder / "data").glob("*/*.parquet")):
        try:
            bounds.parquet_check(shard, str(shard), ValueError)
        except ValueError as exc:
            out.append(str(exc))
    return out


def run_judgments(folder: Path) -> Path | None:
    """The run's own judgments when `folder` is a run's results/publish/<name>/ and they are there (the raw ids
    to look for), else None."""
    results = folder.resolve().parent.parent
    if folder.resolve().parent.name != "publish" or results.name != "results":
        return None
    path = results / "judgments" / "judgments.parquet"
    return path if path.is_file() else None


def _published_texts(folder: Path):
    """(file, text) of every text the folder publishes: the card, croissant.json, the LeWiDi and other text files,
    and each string value of the Parquet shards (under their file's name)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = folder.resolve()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and root in p.resolve().parents):
        if path.suffix == ".parquet":
            try:
                schema = pq.read_schema(path)
                text = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
                table = pq.read_table(path, columns=text)
            except Exception:  # noqa: BLE001 - an unreadable shard is told by check_files and mlcroissant
                continue
            for column in table.column_names:
                values = {v for v in table.column(column).to_pylist() if v}
                yield path, column, "\n".join(sorted(values))
        elif path.suffix in (".md", ".json", ".csv", ".txt", ".jsonl") and path.stat().st_size <= bounds.MAX_TEXT_BYTES:
            yield path, None, path.read_text(encoding="utf-8", errors="replace")


def check_identities(folder: Path) -> list[str]:
    """Nothing in the folder names a rater: no string that looks like an MTurk WorkerId or an e-mail address (but
    the contact the card gives for removal requests), and, where the folder is a run's results/publish/<name>/, none
    of that run's raw rater ids (results/judgments/judgments.parquet). One line per file and id kind."""
    import polars as pl

    raw: set[str] = set()
    own = run_judgments(folder)
    if own is not None:
        try:
            raw = pseudonyms.findable(pl.read_parquet(own, columns=["annotator"])["annotator"].to_list())
        except Exception:  # noqa: BLE001 - the run's table unreadable: the patterns still apply
            raw = set()
    contact = set()
    try:
        meta = json.loads((folder / "croissant.json").read_text(encoding="utf-8"))
        contact = set(pseudonyms.EMAIL.findall(json.dumps(meta.get("rai:dataReleaseMaintenancePlan", ""))))
    except Exception:  # noqa: BLE001 - croissant.json's own problems are told elsewhere
        pass
    out = []
    for path, column, text in _published_texts(folder):
        where = f"{path}" + (f" (column {column})" if column else "")
        found = [s for s in pseudonyms.looks_like_ids(text) if s not in contact]
        found += [s for s in pseudonyms.raw_ids_in(text, raw) if s not in found]
        if found:
            shown = ", ".join(repr(s) for s in found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
            out.append(
                f"{where}: names a rater by a platform id or an e-mail address ({shown}); a published folder "
                "names raters by pseudonym (Ann<k>) only: publish again from the run"
            )
    return out


def check_folder(folder: str | Path, *, load: bool = True) -> list[str]:
    """Every problem of a published folder (empty: it passes)."""
    folder = Path(folder)
    if not folder.is_dir():
        return [f"{folder}: not a folder"]
    if not (folder / "README.md").exists() and not (folder / "croissant.json").exists():
        below = datasets_below(folder)
        if below:
            return [
                f"{folder}: not a published dataset (no README.md, no croissant.json) but the folder above "
                f"{len(below)}: did you mean {' or '.join(str(p) for p in below)}?"
            ]
    oversized = too_large(folder)
    if oversized:  # read whole by the checks below: stop before reading them
        return oversized
    problems, configs = check_card(folder)
    path = folder / "croissant.json"
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return [*problems, f"{path}: missing"]
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return [*problems, f"{path}: not JSON: {exc}"]
    except RecursionError:
        return [*problems, f"{path}: JSON nested too deeply to be a Croissant file; rewrite it (squidflow writes it)"]
    if not isinstance(meta, dict):
        return [*problems, f"{path}: not a JSON-LD object (a Croissant file is one object)"]
    reaching = outside_reads(folder, meta) + links_out(folder)
    problems += reaching + check_files(folder, meta)
    bombs = [] if reaching else check_shard_sizes(folder)
    problems += bombs
    if not reaching and not bombs:
        problems += check_identities(folder)
        problems += check_version(folder, meta)  # reads the data files: only once they are safe to read
    problems += check_rai(folder, meta)
    problems += check_licence(folder, meta)
    problems += check_rai_known(folder, meta)
    if not (folder / "lewidi").is_dir():
        problems.append(
            f"{folder / 'lewidi'}: missing (the judgments in the LeWiDi format, one file per variant and "
            "split, and the annotators' metadata)"
        )
    if bombs:  # mlcroissant's records and `datasets` would read every row
        return [
            *problems,
            f"{folder}: Croissant records and datasets loading not run: a shard's rows would not fit the bound "
            "(above); rewrite the shards (squidflow publish writes them) and check again",
        ]
    if reaching:  # mlcroissant's records and `datasets` would fetch the URL or read the file outside
        return [
            *problems,
            f"{folder}: Croissant records and datasets loading not run: the folder reaches outside "
            "itself (above); fix those lines and check again",
        ]
    problems += croissant.check(path)
    if load:
        logging.getLogger("datasets").setLevel(logging.ERROR)
        problems += check_loading(folder, configs)
    return problems
