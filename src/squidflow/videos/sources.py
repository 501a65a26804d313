"""Every configured source of videos, turned into one list of candidates (the `video_candidates` checkpoint).

A candidate is a row of the video manifest still `pending`: its id, event, where it comes from, where its file is
or will be, and the text we already know (search title, catalog description, release frames). Sources:

- `demo`: the synthetic videos of rule `make_demo_videos` (their catalog.parquet gives the text);
- `local`: a folder tree `<root>/<event>/*.<ext>`;
- `urls`: a CSV or Parquet list of (video_id optional, url, event), fetched by yt-dlp;
- `youtube`: multilingual `ytsearchN:` queries per event (squidflow.videos.youtube);
- `squid-e-release`: the release's dataset.csv: YouTube ids to download, `bannerNN` ids read from a UCF-Crime folder.

Ids must be unique across sources (they name files and Snakemake jobs): a later duplicate is dropped and reported.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import polars as pl

from squidflow import schemas
from squidflow.io import conform, read_parquet

log = logging.getLogger(__name__)

VIDEO_EXTENSIONS = ("mp4", "mkv", "webm", "avi", "mov", "m4v")
SAFE_ID = re.compile(r"^[A-Za-z0-9_\-]+$")


@dataclass
class SourceListing:
    """The candidates of one source and what was noticed while listing them (for the download report)."""

    name: str
    candidates: pl.DataFrame
    notes: list[str] = field(default_factory=list)


def slug(text: str) -> str:
    """A job-safe id from free text: letters, digits, `_` and `-` only."""
    return re.sub(r"[^A-Za-z0-9_\-]+", "_", text).strip("_") or "video"


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
    rows = [
        {**{k: r.get(k) for k in ("video_id", "event", "path", "title", "description", "language", "tags")},
         "source": "demo", "download": False}
        for r in catalog.iter_rows(named=True)
    ]  # fmt: skip
    return SourceListing("demo", _frame(rows))


def local_source(root: str | Path, extensions: list[str] | tuple[str, ...] = VIDEO_EXTENSIONS) -> SourceListing:
    """`<root>/<event>/*.<ext>`: the folder names the event, the file stem the video id (made job-safe)."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(
            f"sources: local root {root} is not a folder; create it as <root>/<event>/<video>.mp4 or fix `root`"
        )
    exts = {e.lower().lstrip(".") for e in extensions}
    rows, notes = [], []
    for event_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for f in sorted(event_dir.iterdir()):
            if not f.is_file() or f.suffix.lower().lstrip(".") not in exts:
                continue
            vid = f.stem if SAFE_ID.match(f.stem) else slug(f.stem)
            if vid != f.stem:
                notes.append(f"{f}: id '{vid}' (the file name has characters job names cannot hold)")
            rows.append({"video_id": vid, "event": event_dir.name, "source": "local", "path": str(f),
                         "title": f.stem, "download": False})  # fmt: skip
    if not rows:
        notes.append(f"{root}: no videos found (expected <root>/<event>/*.{{{','.join(sorted(exts))}}})")
    return SourceListing(f"local:{root}", _frame(rows), notes)


def read_url_list(path: str | Path) -> pl.DataFrame:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"sources: url list {path} not found; write a CSV with columns url,event[,video_id]")
    df = pl.read_parquet(path) if path.suffix == ".parquet" else pl.read_csv(path, infer_schema_length=0)
    missing = [c for c in ("url", "event") if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; a url list needs url,event and optionally video_id")
    return df


def urls_source(table: pl.DataFrame, where: str) -> SourceListing:
    rows, notes = [], []
    for i, r in enumerate(table.iter_rows(named=True), start=1):
        url, event = (r.get("url") or "").strip(), (r.get("event") or "").strip()
        if not url or not event:
            notes.append(f"{where} row {i}: empty url or event; skipped")
            continue
        vid = (r.get("video_id") or "").strip() or url_video_id(url)
        if not SAFE_ID.match(vid):
            notes.append(f"{where} row {i}: video_id {vid!r} made job-safe as {slug(vid)!r}")
            vid = slug(vid)
        rows.append({"video_id": vid, "event": event, "source": "urls", "url": url, "webpage_url": url,
                     "path": download_path("urls", vid), "title": r.get("title"), "download": True})  # fmt: skip
    return SourceListing(f"urls:{where}", _frame(rows), notes)


def youtube_source(source: dict[str, Any], results=None, ydl_params: dict[str, Any] | None = None) -> SourceListing:
    """Search (or take recorded `results`), filter, and list the chosen videos as download candidates."""
    from squidflow.videos import youtube

    settings = youtube.SearchSettings.from_source(source)
    if results is None:
        results = []
        for event, spec in (source.get("events") or {}).items():
            results += youtube.search(event, spec.get("queries") or {}, settings, ydl_params or {})
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


def combine(listings: list[SourceListing]) -> tuple[pl.DataFrame, list[str]]:
    """Stack the sources' candidates; an id already taken by an earlier source is dropped and reported."""
    frames, notes, taken = [], [], {}
    for lst in listings:
        notes += [f"[{lst.name}] {n}" for n in lst.notes]
        df = lst.candidates
        dup_in = df.filter(pl.col("video_id").is_duplicated())["video_id"].unique().to_list()
        for vid in dup_in:
            notes.append(f"[{lst.name}] id {vid} appears more than once; the first is kept")
        df = df.unique("video_id", keep="first", maintain_order=True)
        clash = [v for v in df["video_id"].to_list() if v in taken]
        for vid in clash:
            notes.append(f"[{lst.name}] id {vid} is already listed by {taken[vid]}; this one is dropped")
        df = df.filter(~pl.col("video_id").is_in(clash))
        taken.update({v: lst.name for v in df["video_id"].to_list()})
        frames.append(df)
    out = pl.concat(frames, how="vertical") if frames else schemas.empty(schemas.VIDEO_CANDIDATES)
    return conform(out, schemas.VIDEO_CANDIDATES), notes


def list_candidates(
    sources: list[dict[str, Any]],
    *,
    release_cfg: dict[str, Any] | None = None,
    demo_catalog: str | Path | None = None,
    cache_dir: str | Path = "results/downloads",
    ydl_params: dict[str, Any] | None = None,
) -> tuple[pl.DataFrame, list[str]]:
    """All configured sources → (candidates in the VIDEO_CANDIDATES schema, report lines)."""
    from squidflow.fetch import fetch
    from squidflow.release import read_dataset_csv

    listings = []
    for i, src in enumerate(sources):
        kind = src["type"]
        if kind == "demo":
            if demo_catalog is None:
                raise ValueError("sources: a demo source needs the demo catalog (rule make_demo_videos)")
            listings.append(demo_source(read_parquet(demo_catalog, schemas.DEMO_CATALOG)))
        elif kind == "local":
            listings.append(local_source(src["root"], src.get("extensions") or VIDEO_EXTENSIONS))
        elif kind == "urls":
            listings.append(urls_source(read_url_list(src["path"]), str(src["path"])))
        elif kind == "youtube":
            listings.append(youtube_source(src, ydl_params=ydl_params))
        elif kind == "squid-e-release":
            cfg = release_cfg or {}
            table = read_dataset_csv(fetch(cfg["dataset_csv"], cache_dir))
            listings.append(release_source(table, cfg.get("ucf_dir", "data/ucf-crime"), src.get("events")))
        else:  # the config schema rejects unknown types; this guards library callers
            raise ValueError(f"sources[{i}]: unknown type {kind!r}")
    return combine(listings)
