"""Every configured source of videos, turned into one list of candidates (the `video_candidates` checkpoint).

A candidate is a row of the video manifest still `pending`: its id, event, where it comes from, where its file is
or will be, and the text we already know (search title, catalog description, release frames). Sources:

- `demo`: the synthetic videos of rule `make_demo_videos` (their catalog.parquet gives the text);
- `local`: a folder tree `<root>/<event>/*.<ext>`, on disk or in object storage (`root: s3://bucket/prefix`: its
  objects are listed through the Snakemake storage plugin and acquired like downloads, squidflow.videos.storage);
- `urls`: a CSV or Parquet list of (video_id optional, url, event), fetched by yt-dlp;
- `youtube`: multilingual `ytsearchN:` queries per event (squidflow.videos.youtube);
- `squid-e-release`: the release's dataset.csv: YouTube ids to download, `bannerNN` ids read from a UCF-Crime folder.

Ids must be unique across sources (they name files and Snakemake jobs). An id with characters a job name cannot hold
is cleaned to one that can, with a short hash of the original as a suffix, so two ids never become one (`ä1` and
`ö1` stay two videos). The same video listed twice is kept once and reported; two different videos under one id
stop the run with an error naming both rows. URL lists are conformed to a schema (ids are strings) whatever their
file type, and a list that cannot be read names its file and line.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import parse_qs, urlparse

import polars as pl

from squidflow.config.bounds import parquet_check
from squidflow.contracts import schemas
from squidflow.contracts.io import conform, read_csv_strings, read_parquet
from squidflow.contracts.paths import DOWNLOADS_DIR
from squidflow.errors import EmptyError, InputError
from squidflow.videos import storage
from squidflow.videos.storage import is_storage_url
from squidflow.vocabulary.events import check_event_id
from squidflow.vocabulary.licenses import DEMO_LICENSE, licence_refusal

log = logging.getLogger(__name__)

VIDEO_EXTENSIONS = ("mp4", "mkv", "webm", "avi", "mov", "m4v")
SAFE_ID = re.compile(r"^[A-Za-z0-9_\-]+$")
MAX_ID = 64  # a longer id (file names, job names) is shortened like an unsafe one: its slug and a hash


@dataclass
class SourceListing:
    """The candidates of one source and what was noticed while listing them (for the download report)."""

    name: str
    candidates: pl.DataFrame
    notes: list[str] = field(default_factory=list)
    origins: list[str] = field(default_factory=list)  # per candidate row: where it was listed (file and line)

    def origin(self, i: int) -> str:
        return self.origins[i] if i < len(self.origins) else f"{self.name} row {i + 1}"


def slug(text: str) -> str:
    """A job-safe id from free text: letters, digits, `_` and `-` only."""
    return re.sub(r"[^A-Za-z0-9_\-]+", "_", text).strip("_") or "video"


def safe_video_id(raw: str) -> str:
    """`raw` when a job name can hold it, else its slug plus 8 hex digits of the SHA-1 of `raw`.

    The hash keeps ids apart that differ only in characters the slug drops (`ä1`, `ö1` -> `1-<hash>`, `1-<other>`);
    the same original id always gives the same cleaned id, so reruns find their files again.
    """
    if SAFE_ID.fullmatch(raw) and len(raw) <= MAX_ID:
        return raw
    return f"{slug(raw)[:40]}-{hashlib.sha1(raw.encode('utf-8')).hexdigest()[:8]}"


def youtube_id(url: str) -> str | None:
    u = urlparse(url)
    host = (u.hostname or "").lower()
    if host.endswith("youtu.be"):
        vid = u.path.lstrip("/").split("/")[0]
    elif "youtube.com" in host:
        vid = (parse_qs(u.query).get("v") or [""])[0] or (
            u.path.split("/")[2] if u.path.startswith(("/shorts/", "/embed/", "/live/")) else ""
        )
    else:
        return None
    return vid if re.fullmatch(r"[A-Za-z0-9_-]{11}", vid or "") else None


def url_video_id(url: str) -> str:
    """YouTube's own id when the URL has one, else the file's name plus a short hash of the URL (stable, unique)."""
    yt = youtube_id(url)
    if yt:
        return yt
    stem = Path(urlparse(url).path).stem or urlparse(url).hostname or "video"
    return f"{slug(stem)[:40]}-{hashlib.sha1(url.encode()).hexdigest()[:8]}"


def download_path(source_type: str, video_id: str) -> str:
    return f"results/videos/{source_type}/{video_id}.mp4"


def _frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    base = {c: None for c in schemas.VIDEO_CANDIDATES.columns}
    df = (
        pl.DataFrame([{**base, **r} for r in rows], schema=schemas.VIDEO_CANDIDATES.columns)
        if rows
        else schemas.empty(schemas.VIDEO_CANDIDATES)
    )
    return conform(df.with_columns(pl.lit("pending").alias("status")), schemas.VIDEO_CANDIDATES)


# --- the sources ---------------------------------------------------------------------------------------------------
def demo_source(catalog: pl.DataFrame) -> SourceListing:
    """The demo's synthetic videos, made by squidflow itself: their licence is squidflow's (licences.DEMO_LICENSE)."""
    rows = [
        {**{k: r.get(k) for k in ("video_id", "event", "path", "title", "description", "language", "tags")},
         "source": "demo", "download": False, "license": DEMO_LICENSE}
        for r in catalog.iter_rows(named=True)
    ]  # fmt: skip
    return SourceListing("demo", _frame(rows))


SKIPPED = "skipped file"  # how a listing names a file it did not take (the report counts and lists these notes)


def _leaves(path: Path, root: Path) -> str | None:
    """Where a symbolic link at `path` leads when that is outside `root` (both resolved), else None."""
    if not path.is_symlink():
        return None
    target = path.resolve()
    return None if target.is_relative_to(root) else str(target)


def walk_local(
    root: Path, exts: set[str], follow_links: bool = False
) -> tuple[list[tuple[str, Path]], list[tuple[Path, str]]]:
    """([(event, video file)], [(skipped path, why)]) of a local tree `<root>/<event>/*.<ext>`, both sorted. A
    symbolic link (an event folder or a video) that leads outside the root is skipped with its reason, unless
    `follow_links` (sources[].follow_links: videos kept elsewhere on purpose): a link into a private folder would
    otherwise be taken, and in `publish.images: embed` its frames published (issue 57)."""
    videos, skipped = [], []
    base = root.resolve()
    why_link = "a symbolic link to {}, outside the root (set follow_links: true on this source to take it)"
    for entry in sorted(root.iterdir()):
        out = None if follow_links else _leaves(entry, base)
        if out is not None:
            skipped.append((entry, why_link.format(out)))
            continue
        if entry.is_file():
            skipped.append((entry, "not in an event folder (expected <root>/<event>/<video>)"))
            continue
        if not entry.is_dir():
            continue
        for f in sorted(entry.iterdir()):
            out = None if follow_links else _leaves(f, base)
            if out is not None:
                skipped.append((f, why_link.format(out)))
            elif f.is_dir():
                skipped.append((f, "a folder inside an event folder (not searched)"))
            elif not f.is_file() or f.suffix.lower().lstrip(".") not in exts:
                skipped.append((f, f"not a video (extensions: {', '.join(sorted(exts))})"))
            else:
                videos.append((entry.name, f))
    return videos, skipped


def local_source(
    root: str | Path,
    extensions: list[str] | tuple[str, ...] = VIDEO_EXTENSIONS,
    license: str | None = None,
    follow_links: bool = False,
) -> SourceListing:
    """`<root>/<event>/*.<ext>`: the folder names the event, the file stem the video id (made job-safe). Every other
    file (not a video, not in an event folder) is named in a note starting with SKIPPED, for the report. `license`:
    what the source declares for its videos (None: nothing, published as "unknown").

    A root in object storage (`s3://bucket/prefix`) is listed through its Snakemake storage plugin by the same rules
    (squidflow.videos.storage.tree_layout); its videos are download candidates (source `storage`, `url` the object,
    `path` results/videos/storage/<id>.mp4), fetched by the acquisition jobs."""
    exts = {e.lower().lstrip(".") for e in extensions}
    videos: list[tuple[str, str, str, dict[str, Any]]] = []  # (event, file stem, where, the row's own fields)
    if is_storage_url(root):
        listed, skipped = storage.tree_layout(storage.list_objects(str(root)), exts)
        for event, o in listed:
            stem = PurePosixPath(o.relative).stem
            videos.append((event, stem, o.url, {"source": "storage", "url": o.url, "download": True,
                                                "path": download_path("storage", safe_video_id(stem))}))  # fmt: skip
        kind = "storage object"
    else:
        root = Path(root)
        if not root.is_dir():
            raise FileNotFoundError(
                f"sources: local root {root} is not a folder; create it as <root>/<event>/<video>.mp4 or fix `root`"
            )
        files, skipped_files = walk_local(root, exts, follow_links)
        skipped = [(str(f), why) for f, why in skipped_files]
        videos = [(event, f.stem, str(f), {"source": "local", "path": str(f), "download": False}) for event, f in files]
        kind = "local file"
    rows, notes, origins = [], [], []
    for event, stem, where, own in videos:
        vid = safe_video_id(stem)
        if vid != stem:
            notes.append(f"{where}: id '{vid}' (the file name has characters job names cannot hold)")
        rows.append({"video_id": vid, "event": event, "title": stem, "license": license, **own})
        origins.append(f"{kind} {where}")
    notes += [f"{SKIPPED} {f}: {why}" for f, why in skipped]
    if not rows:
        notes.append(f"{root}: no videos found (expected <root>/<event>/*.{{{','.join(sorted(exts))}}})")
    return SourceListing(f"local:{root}", _frame(rows), notes, origins)


def file_fingerprint(path: str | Path) -> str:
    """What identifies a local file's content cheaply: its size and modification time (ns). A file replaced in
    place — copied over, moved over, rewritten — changes one of them; "" when the file is not there."""
    try:
        st = os.stat(path)
    except OSError:
        return ""
    return f"{st.st_size}:{st.st_mtime_ns}"


def local_files(sources: list[dict[str, Any]], release_cfg: dict[str, Any] | None = None) -> list[str]:
    """Every file on disk the sources take videos from (local trees, and the UCF-Crime folder of a squid-e-release
    source), sorted: the workflow lists the sources again when this list changes (a file added or removed)."""
    files: list[str] = []
    for src in sources:
        if src["type"] == "local" and not is_storage_url(src["root"]) and Path(src["root"]).is_dir():
            exts = {e.lower().lstrip(".") for e in (src.get("extensions") or VIDEO_EXTENSIONS)}
            files += [str(f) for _, f in walk_local(Path(src["root"]), exts, bool(src.get("follow_links")))[0]]
        elif src["type"] == "squid-e-release":
            ucf = Path((release_cfg or {}).get("ucf_dir") or "data/ucf-crime")
            if ucf.is_dir():
                files += [str(f) for f in ucf.glob("*.mp4")]
    return sorted(set(files))


def local_fingerprints(sources: list[dict[str, Any]], release_cfg: dict[str, Any] | None = None) -> list[str]:
    """`<path> <size>:<mtime_ns>` of every file of `local_files`: the local check runs again when one changes."""
    return [f"{f} {file_fingerprint(f)}" for f in local_files(sources, release_cfg)]


URL_LIST_FIX = (
    "A URL list has the columns url,event and optionally video_id,title,frames (config sources[].path): a CSV, "
    "a Parquet file, or JSON Lines (.jsonl: one object per line with those keys)."
)
JSON_LINES = (".jsonl", ".ndjson")


def _read_url_jsonl(path: Path) -> tuple[pl.DataFrame, list[str]]:
    """A JSON Lines URL list: one object per line; strings (numbers are taken as text, null as empty)."""
    import json

    rows, where = [], []
    for n, raw in enumerate(path.read_bytes().split(b"\n"), start=1):
        try:
            line = raw.decode("utf-8-sig" if n == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"{path} line {n}: byte 0x{raw[exc.start : exc.start + 1].hex()} is not UTF-8; save the "
                f"list as UTF-8. {URL_LIST_FIX}"
            ) from None
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as exc:
            raise InputError(f"{path} line {n}: not valid JSON ({exc}). {URL_LIST_FIX}") from None
        if not isinstance(rec, dict):
            raise InputError(f"{path} line {n}: a JSON {type(rec).__name__}, expected an object. {URL_LIST_FIX}")
        bad = [k for k, v in rec.items() if isinstance(v, (dict, list))]
        if bad:
            raise InputError(f"{path} line {n}: key(s) {bad} hold a list or an object, expected text. {URL_LIST_FIX}")
        rows.append({str(k): None if v is None else v if isinstance(v, str) else json.dumps(v) for k, v in rec.items()})
        where.append(f"line {n}")
    columns = list(dict.fromkeys(k for r in rows for k in r)) or ["url", "event"]  # no line: a list with no rows
    df = pl.DataFrame([{c: r.get(c) for c in columns} for r in rows], schema={c: pl.Utf8 for c in columns})
    return df, where


def read_url_list(path: str | Path) -> pl.DataFrame:
    """A URL list (CSV, or Parquet or JSON Lines by its suffix) in the URL_LIST schema (every column a string), plus `_row`: where
    each row is in the file ("line 3" of a CSV, "row 3" of a Parquet file), for messages."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"sources: url list {path} not found. {URL_LIST_FIX}")
    if path.suffix.lower() in JSON_LINES:
        df, where = _read_url_jsonl(path)
    elif path.suffix == ".parquet":
        parquet_check(path, f"sources: url list {path}", InputError)
        try:
            df = pl.read_parquet(path)
        except Exception as exc:  # polars/arrow name neither the file nor what to do
            raise InputError(f"{path}: not a readable Parquet file ({exc}). {URL_LIST_FIX}") from None
        where = [f"row {i}" for i in range(1, len(df) + 1)]
    else:
        df = read_csv_strings(path, what="URL list", fix=URL_LIST_FIX, line_column="_line")
        where = [f"line {n}" for n in df["_line"].to_list()]
        df = df.drop("_line")
    out = conform(df, schemas.URL_LIST, where=str(path))
    return out.with_columns(pl.Series("_row", where, dtype=pl.Utf8))


def listed_frames(value: str | None, where: str) -> list[int] | None:
    """A URL list's `frames` cell ("12 40 77", commas or semicolons also separate) -> the sorted frame numbers to
    extract exactly (frames.mode exact/auto, like the SQUID-E release's); None when empty."""
    text = str(value or "").strip()
    if not text:
        return None
    tokens = [t for t in re.split(r"[\s,;]+", text) if t]
    bad = [t for t in tokens if not t.isdigit()]
    if bad:
        raise InputError(
            f"{where}: frames {text!r} holds {bad[0]!r}, not a frame number; write the frame numbers (0 = the "
            f"first frame in decode order) separated by spaces, e.g. '12 40 77'. {URL_LIST_FIX}"
        )
    return sorted({int(t) for t in tokens})


def resolved_url(url: str, base_url: str | None) -> str:
    """A list's URL; with the source's `base_url`, one without a scheme (`concert/stage a.mp4`, as a published
    dataset names a video from a local folder) is joined onto it, its characters percent-encoded. Without a base_url
    the URL is taken as written (yt-dlp reads `youtu.be/<id>` without a scheme)."""
    from urllib.parse import quote, urljoin

    if not base_url or urlparse(url).scheme:
        return url
    return urljoin(base_url if base_url.endswith("/") else base_url + "/", quote(url.lstrip("/")))


def urls_source(
    table: pl.DataFrame, where: str, license: str | None = None, base_url: str | None = None
) -> SourceListing:
    """A URL list's rows as download candidates; `license` is what the source declares (None: what the download's
    page states, else "unknown"); `base_url` what a relative URL is joined onto. A row's `frames` become the frames
    extraction takes exactly (`release_frames`)."""
    rows, notes, origins = [], [], []
    positions = table["_row"].to_list() if "_row" in table.columns else [f"row {i}" for i in range(1, len(table) + 1)]
    for pos, r in zip(positions, table.iter_rows(named=True), strict=True):
        url, event = str(r.get("url") or "").strip(), str(r.get("event") or "").strip()
        if not url or not event:
            notes.append(f"{where} {pos}: empty url or event; skipped")
            continue
        url = resolved_url(url, base_url)
        frames = listed_frames(r.get("frames"), f"{where} {pos}")
        given = str(r.get("video_id") or "").strip()
        vid = safe_video_id(given) if given else url_video_id(url)
        if given and vid != given:
            notes.append(f"{where} {pos}: video_id {given!r} made job-safe as {vid!r}")
        rows.append({"video_id": vid, "event": event, "source": "urls", "url": url, "webpage_url": url,
                     "path": download_path("urls", vid), "title": r.get("title"), "download": True,
                     "license": license, "release_frames": frames})  # fmt: skip
        origins.append(f"{where} {pos}")
    if not len(table):
        notes.append(f"{where}: the list has no rows (a header only)")
    return SourceListing(f"urls:{where}", _frame(rows), notes, origins)


def youtube_source(source: dict[str, Any], results=None, ydl_params: dict[str, Any] | None = None) -> SourceListing:
    """Search (or take recorded `results`), filter, and list the chosen videos as download candidates."""
    from squidflow.videos import youtube

    settings = youtube.SearchSettings.from_source(source)
    if results is None:
        results = []
        for event, spec in (source.get("events") or {}).items():
            results += youtube.search(
                event, spec.get("queries") or {}, settings, ydl_params or {}, source.get("licenses")
            )
    df, dropped = youtube.select_entries(results, settings)
    notes = [f"youtube search: {len(results)} queries, {len(df)} videos kept; dropped " +
             ", ".join(f"{k}={v}" for k, v in dropped.items())]  # fmt: skip
    if settings.near_duplicates and len(df):
        df, n = youtube.drop_near_duplicates(df, settings)
        notes.append(f"youtube search: {n} near-duplicate re-uploads removed (SBERT title similarity ≥ "
                     f"{settings.title_similarity}, duration within {settings.duration_tolerance_s} s)")  # fmt: skip
    rows = [{**r, "path": download_path("youtube", r["video_id"]), "download": True} for r in df.iter_rows(named=True)]
    return SourceListing("youtube", _frame(rows), notes)


def release_source(table, ucf_dir: str, events: list[str] | None = None) -> SourceListing:
    """One candidate per distinct release video; each listing's (event, frames) kept in `release_rows`.

    A video listed twice (HpLQCPkGLhs under birthday and wedding; cIuGwaBFX8I twice under patient-test) is one
    download: its `event` is the first listing's, `release_frames` the sorted union of all listings' frames.
    `bannerNN` ids are UCF-Crime videos read from `<ucf_dir>/<id>.mp4` (not downloadable from YouTube).
    """
    grouped: dict[str, list] = {}
    for r in table.rows:
        if events and r.event not in events:
            continue
        grouped.setdefault(r.video_id, []).append(r)
    rows = []
    for vid, rs in grouped.items():
        notes = []
        if len({r.event for r in rs}) > 1:
            notes.append("listed under events " + ", ".join(r.event for r in rs) + f"; event '{rs[0].event}' kept")
        elif len(rs) > 1:
            notes.append(f"listed {len(rs)} times under '{rs[0].event}' with different frames; frames merged")
        if any(not r.frames for r in rs):
            notes.append("release row has no frame numbers")
        first = rs[0]
        ucf = first.kind == "ucf"
        rows.append({
            "video_id": vid,
            "event": first.event,
            "source": "squid-e-release",
            "url": None if ucf else f"https://www.youtube.com/watch?v={vid}",
            "webpage_url": None if ucf else f"https://www.youtube.com/watch?v={vid}",
            "path": str(Path(ucf_dir) / f"{vid}.mp4") if ucf else download_path("squid-e-release", vid),
            "release_frames": sorted({f for r in rs for f in r.frames}),
            "release_rows": [{"event": r.event, "frames": list(r.frames)} for r in rs],
            "notes": notes or None,
            "download": not ucf,
        })  # fmt: skip
    return SourceListing("squid-e-release", _frame(rows), list(table.quirks))


def _identity(row: dict[str, Any]) -> str:
    """What makes two listings the same video: its YouTube id or URL when downloaded, else its file."""
    if row.get("download"):
        url = row.get("url") or row.get("webpage_url") or ""
        return f"youtube:{youtube_id(url)}" if youtube_id(url) else url
    return os.path.realpath(row["path"]) if row.get("path") else ""


def licence_filter(listing: SourceListing, source: dict[str, Any]) -> SourceListing:
    """A source's `licenses` wish on its candidates: each carries the wish (a download checks the licence its page
    states); a candidate whose licence is declared (a local or urls source's `license`) or cannot be stated (a local
    file) is settled here: status `unavailable`, reason `licence`, no probe, no download."""
    wish = source.get("licenses")
    if not wish:
        return listing
    df = listing.candidates.with_columns(pl.lit(list(wish), pl.List(pl.Utf8)).alias("licenses"))
    declared = source["type"] == "local" or bool(source.get("license"))
    if declared:
        why = [licence_refusal(r["license"], wish) for r in df.iter_rows(named=True)]
        refused = pl.Series("_why", why, dtype=pl.Utf8)
        df = df.with_columns(
            pl.when(refused.is_not_null()).then(pl.lit("unavailable")).otherwise(pl.col("status")).alias("status"),
            pl.when(refused.is_not_null()).then(pl.lit("licence")).otherwise(pl.col("reason")).alias("reason"),
            pl.coalesce(refused, pl.col("error")).alias("error"),
            (pl.col("download") & refused.is_null()).alias("download"),
        )
        n = int(refused.is_not_null().sum())
        if n:
            listing.notes.append(f"{n} videos left out for their licence (sources[].licenses: {', '.join(wish)})")
    listing.candidates = conform(df, schemas.VIDEO_CANDIDATES)
    return listing


def pending(candidates: pl.DataFrame) -> pl.Expr:
    """The candidates acquisition still has to settle (the listing settled the others: a licence left out)."""
    return pl.col("status").fill_null("pending") == "pending" if "status" in candidates.columns else pl.lit(True)


def combine(listings: list[SourceListing]) -> tuple[pl.DataFrame, list[str]]:
    """Stack the sources' candidates. The same video listed again under its id is dropped and reported; a different
    video under an id already taken is an InputError naming both rows (never two videos merged into one)."""
    frames, notes = [], []
    taken: dict[str, tuple[str, str]] = {}  # video id -> (identity, where it was listed)
    clashes = []
    for lst in listings:
        notes += [f"[{lst.name}] {n}" for n in lst.notes]
        keep = []
        for i, row in enumerate(lst.candidates.iter_rows(named=True)):
            vid, ident, where = row["video_id"], _identity(row), lst.origin(i)
            check_event_id(row["event"], f"[{lst.name}] {where}")
            if vid not in taken:
                taken[vid] = (ident, where)
                keep.append(i)
            elif taken[vid][0] == ident:
                notes.append(f"[{lst.name}] {where}: video {vid} is already listed ({taken[vid][1]}); listed once")
            else:
                clashes.append(
                    f"video id '{vid}' names two different videos: {taken[vid][1]} ({taken[vid][0]}) and {where} "
                    f"({ident})"
                )
        frames.append(lst.candidates[keep] if keep else lst.candidates.clear())
    if clashes:
        shown = "\n  ".join(clashes[:10]) + (f"\n  ... and {len(clashes) - 10} more" if len(clashes) > 10 else "")
        raise InputError(
            f"{len(clashes)} video id(s) given to two different videos:\n  {shown}\nGive each video its own video_id "
            "(URL lists: the video_id column; local folders: the file name), or remove the duplicate row."
        )
    out = pl.concat(frames, how="vertical") if frames else schemas.empty(schemas.VIDEO_CANDIDATES)
    return conform(out, schemas.VIDEO_CANDIDATES), notes


def list_candidates(
    sources: list[dict[str, Any]],
    *,
    release_cfg: dict[str, Any] | None = None,
    demo_catalog: str | Path | None = None,
    cache_dir: str | Path = DOWNLOADS_DIR,
    ydl_params: dict[str, Any] | None = None,
) -> tuple[pl.DataFrame, list[str]]:
    """All configured sources → (candidates in the VIDEO_CANDIDATES schema, report lines)."""
    from squidflow.fetch import fetch
    from squidflow.vocabulary.release import read_dataset_csv

    listings = []
    for i, src in enumerate(sources):
        kind = src["type"]
        if kind == "demo":
            if demo_catalog is None:
                raise ValueError("sources: a demo source needs the demo catalog (rule make_demo_videos)")
            listing = demo_source(read_parquet(demo_catalog, schemas.DEMO_CATALOG))
        elif kind == "local":
            listing = local_source(
                src["root"],
                src.get("extensions") or VIDEO_EXTENSIONS,
                src.get("license"),
                bool(src.get("follow_links")),
            )
        elif kind == "urls":
            listing = urls_source(read_url_list(src["path"]), str(src["path"]), src.get("license"), src.get("base_url"))
        elif kind == "youtube":
            listing = youtube_source(src, ydl_params=ydl_params)
        elif kind == "squid-e-release":
            cfg = release_cfg or {}
            table = read_dataset_csv(fetch(cfg["dataset_csv"], cache_dir))
            listing = release_source(table, cfg.get("ucf_dir", "data/ucf-crime"), src.get("events"))
        else:  # the config schema rejects unknown types; this guards library callers
            raise ValueError(f"sources[{i}]: unknown type {kind!r}")
        listings.append(licence_filter(listing, src))
    candidates, notes = combine(listings)
    if candidates.is_empty():
        listed = "; ".join(
            f"{lst.name}: 0 videos" + (f" ({'; '.join(lst.notes)})" if lst.notes else "") for lst in listings
        )
        raise EmptyError(
            f"no video to acquire: the configured sources list none ({listed or 'no sources'}). Add videos to them "
            "or fix `sources` in the config (config/README.md, sources)."
        )
    return candidates, notes
