"""Corpora of (image, region, clue, inference) for the comparison sets: the Sherlock annotations and our own frames.

Sherlock (Hessel et al., 2022) instances are `{instance_id, split_idx, inputs: {image: {url, width, height}, bboxes, clue,
confidence, obs_idx}, targets: {inference}}`, shipped as a zipped JSON list. `split_idx` (0..22) is the retrieval
chunk of §4.1 ("23 equal sized chunks of about 1K inferences").

squidflow's own frames become the same kind of corpus: the image is a selected frame, the region the whole frame,
the clue a phrase of the video's title or tags (what a viewer is told), the inference one sentence of the video's
description (what a viewer might conclude). Every sentence of a video's description is an inference for each of
its frames, so the candidates of a frame are the other videos' sentences — plausible, never the true one.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import polars as pl

from squidflow.errors import EmptyError, InputError
from squidflow.paths import job_file
from squidflow.schemas import COMPARISON_CORPUS

MAX_MEMBER_BYTES = 2**30  # the Sherlock training annotations unpack to a few hundred MB
MAX_RATIO = 100  # JSON compresses about 5:1; a member far denser than that is a zip bomb


def _read_member(zf: zipfile.ZipFile, name: str, path: Path) -> bytes:
    """The member's bytes, read at most MAX_MEMBER_BYTES (the size the zip claims is checked, and not trusted)."""
    info = zf.getinfo(name)
    if info.file_size > MAX_MEMBER_BYTES or info.file_size > MAX_RATIO * max(info.compress_size, 1) + 2**20:
        raise InputError(
            f"{path}: member {name} unpacks to {info.file_size:,} bytes from {info.compress_size:,} "
            f"(at most {MAX_MEMBER_BYTES:,} bytes and {MAX_RATIO}:1 are read); not a Sherlock annotation "
            "file. Download it again from the Sherlock release."
        )
    with zf.open(name) as fh:
        data = fh.read(MAX_MEMBER_BYTES + 1)
    if len(data) > MAX_MEMBER_BYTES:
        raise InputError(
            f"{path}: member {name} unpacks to more than {MAX_MEMBER_BYTES:,} bytes; not a Sherlock annotation file."
        )
    return data


def read_sherlock_json(path: str | Path) -> list[dict]:
    """The instance list of a Sherlock annotation file (.json or a .zip holding one .json); an error names the file
    when it is not one, is a zip bomb, is nested absurdly deep or holds no instance."""
    path = Path(path)
    try:
        if path.suffix == ".zip":
            with zipfile.ZipFile(path) as zf:
                names = [n for n in zf.namelist() if n.endswith(".json")]
                if len(names) != 1:
                    raise InputError(
                        f"{path}: expected one .json inside the zip, found {(names or zf.namelist())[:10]}"
                    )
                data = json.loads(_read_member(zf, names[0], path))
        else:
            data = json.loads(path.read_text(encoding="utf-8"))
    except (zipfile.BadZipFile, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:200]
        raise InputError(
            f"{path}: not a Sherlock annotation file ({why}). Download it again from the Sherlock release."
        ) from None
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON list of Sherlock instances, got {type(data).__name__}")
    if not data:
        raise EmptyError(
            f"{path}: the Sherlock annotation file holds no instance (an empty list); point "
            "comparison.corpus at the release's annotation file."
        )
    return data


def sherlock_corpus(instances: list[dict], *, split: str = "val", source: str = "sherlock") -> pl.DataFrame:
    """schemas.COMPARISON_CORPUS rows (plus `chunk` = split_idx) from Sherlock instances."""
    rows = []
    for i, inst in enumerate(instances):
        try:
            inputs = inst["inputs"]
            image = inputs["image"]
            rows.append(
                {
                    "instance_id": str(inst["instance_id"]),
                    "image_id": image["url"].rsplit("/", 1)[-1].rsplit(".", 1)[0] if "url" in image else None,
                    "image": image["url"],
                    "width": int(image["width"]),
                    "height": int(image["height"]),
                    "bboxes": [{k: float(b[k]) for k in ("left", "top", "width", "height")} for b in inputs["bboxes"]],
                    "clue": inputs["clue"],
                    "inference": inst["targets"]["inference"],
                    "split": split,
                    "confidence": float(inputs.get("confidence")) if inputs.get("confidence") is not None else None,
                    "chunk": int(inst["split_idx"]) if inst.get("split_idx") is not None else None,
                }
            )
        except (KeyError, TypeError, ValueError) as exc:
            iid = inst.get("instance_id", "?") if isinstance(inst, dict) else repr(inst)[:40]
            raise ValueError(
                f"{source}: instance #{i} ({iid}) "
                f"is not a Sherlock instance: missing or bad {exc}. Expected keys instance_id, inputs.image.url/width/"
                "height, inputs.bboxes, inputs.clue, targets.inference"
            ) from exc
    df = pl.DataFrame(rows, schema={**COMPARISON_CORPUS.columns, "chunk": pl.Int64})
    # the image id is the URL's path (VG ids collide with nothing, VCR frames share file names across movies)
    return df.with_columns(pl.col("image").str.replace(r"^[a-z]+://[^/]+/", "").alias("image_id"))


def load_sherlock(path: str | Path, *, split: str = "val") -> pl.DataFrame:
    return sherlock_corpus(read_sherlock_json(path), split=split, source=str(path))


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def sentences(text: str | None, *, min_words: int = 3) -> list[str]:
    """The sentences of a description (split after . ! ?), stripped, without very short fragments or duplicates."""
    if not text:
        return []
    out = []
    for s in _SENTENCE.split(text.strip()):
        s = s.strip()
        if len(s.split()) >= min_words and s not in out:
            out.append(s)
    return out


def frames_corpus(frames: pl.DataFrame, videos: pl.DataFrame, *, max_sentences: int = 4) -> pl.DataFrame:
    """schemas.COMPARISON_CORPUS from squidflow frames (schemas.FRAMES) and their videos' text (schemas.VIDEOS).

    Per frame and per description sentence (at most `max_sentences` per video) one instance: region = the whole
    frame, clue = the video's title (or a tag phrase when the title is empty), inference = the sentence.
    Videos that are not `ok` or have no usable sentence contribute nothing.
    """
    from PIL import Image

    vids = videos.filter(pl.col("status") == "ok") if "status" in videos.columns else videos
    text = {r["video_id"]: r for r in vids.select("video_id", "title", "description", "tags").iter_rows(named=True)}
    sizes: dict[str, tuple[int, int]] = {}
    rows = []
    for fr in frames.sort("video_id", "frame_index").iter_rows(named=True):
        meta = text.get(fr["video_id"])
        if meta is None:
            continue
        sents = sentences(meta["description"])[:max_sentences]
        tags = [t for t in (meta["tags"] or []) if t]
        clue = (meta["title"] or "").strip() or ", ".join(tags[:3])
        if not sents or not clue:
            continue
        path = fr["image_path"]
        if path not in sizes:
            try:
                with Image.open(job_file(path)) as im:
                    sizes[path] = im.size
            except OSError as exc:
                raise FileNotFoundError(
                    f"frame image {path} (video {fr['video_id']}, frame {fr['frame_index']}) cannot be read: {exc}; "
                    "rerun the frames stage (rule select_frames)"
                ) from exc
        w, h = sizes[path]
        for j, sent in enumerate(sents):
            rows.append(
                {
                    "instance_id": f"{fr['image_id']}-{j}",
                    "image_id": fr["image_id"],
                    "image": path,
                    "width": w,
                    "height": h,
                    "bboxes": [{"left": 0.0, "top": 0.0, "width": float(w), "height": float(h)}],
                    "clue": clue,
                    "inference": sent,
                    "split": fr["split"],
                    "confidence": None,
                    "chunk": None,
                }
            )
    df = pl.DataFrame(rows, schema={**COMPARISON_CORPUS.columns, "chunk": pl.Int64})
    return assign_chunks(df)


def assign_chunks(df: pl.DataFrame, *, size: int = 1000, seed: int = 0) -> pl.DataFrame:
    """Fill missing `chunk`s: within each split, a seeded shuffle cut into chunks of about `size` instances."""
    if df.is_empty() or df["chunk"].null_count() == 0:
        return df
    parts = []
    for _split, part in df.group_by("split", maintain_order=True):
        n = len(part)
        n_chunks = max(1, round(n / size))
        order = part.select(pl.int_range(n).shuffle(seed=seed).alias("_o"))["_o"]
        parts.append(part.with_columns((order * n_chunks // n).cast(pl.Int64).alias("chunk")))
    return pl.concat(parts)


def build_corpus(
    source: str,
    *,
    annotations: str | Path | None = None,
    split: str = "val",
    frames: pl.DataFrame | None = None,
    videos: pl.DataFrame | None = None,
    max_sentences: int = 4,
) -> pl.DataFrame:
    """The comparison corpus of `comparison.corpus`: `sherlock` (an annotation file) or `frames` (our frames)."""
    if source == "sherlock":
        if annotations is None:
            raise ValueError("comparison.corpus: sherlock needs sherlock.annotations (a URL or a local path)")
        return load_sherlock(annotations, split=split)
    if source == "frames":
        if frames is None or videos is None:
            raise ValueError("comparison.corpus: frames needs results/dataset/frames.parquet and videos.parquet")
        return frames_corpus(frames, videos, max_sentences=max_sentences)
    raise ValueError(f"comparison.corpus = {source!r}: must be sherlock or frames")
