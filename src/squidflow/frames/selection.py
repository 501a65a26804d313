"""Choosing six frames per video (SQUID-E supplement A.1): k-means over a video's frame features, nearest frame per centroid.

"The feature vector of each sampled frame was passed into a k-means clustering algorithm with 6 centroids. The six
frames whose featurizations had the closest Euclidean distance to a centroid were extracted." Clustering is faiss
k-means (Euclidean, fixed seed) per video. Centroids are visited in order; each takes its nearest frame not taken yet,
so two centroids sharing a nearest frame still give six distinct frames. A video with at most k frames gives all of
them. For a SQUID-E release manifest (exact mode) the listed frames are the selection: no clustering.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from squidflow.config.validation import defaults_from_schema, from_section
from squidflow.contracts.paths import DOWNLOADS_DIR
from squidflow.runtime.logs import progress


@dataclass(frozen=True)
@defaults_from_schema("selection")
class SelectionConfig:
    """The `selection` config section."""

    k: int
    seed: int
    niter: int
    nredo: int
    image_format: str
    image_quality: int

    @classmethod
    def from_config(cls, section: dict | None) -> SelectionConfig:
        return from_section(cls, section)


def kmeans_select(
    x: np.ndarray, k: int, *, seed: int = 0, niter: int = 25, nredo: int = 5
) -> list[tuple[int, int, float]]:
    """(row, cluster, distance) of the k distinct frames nearest to the k centroids of `x` (n, d).

    k-means keeps the best of `nredo` seeded restarts (lowest within-cluster error): with 36 points one start often
    lands in a poor local optimum that merges two scenes.

    n <= k: every row, cluster = its own index, distance 0.
    """
    n = len(x)
    if n <= k:
        return [(i, i, 0.0) for i in range(n)]
    import faiss

    x = np.ascontiguousarray(x, dtype=np.float32)
    km = faiss.Kmeans(x.shape[1], k, niter=niter, nredo=nredo, seed=seed, verbose=False, min_points_per_centroid=1)
    km.train(x)
    centroids = km.centroids
    if centroids is None:
        raise RuntimeError("faiss k-means returned no centroids")
    d2 = ((centroids[:, None, :] - x[None, :, :]) ** 2).sum(-1)  # (k, n) squared Euclidean
    taken: set[int] = set()
    out = []
    for c in range(k):
        for row in np.argsort(d2[c], kind="stable"):
            if int(row) not in taken:
                taken.add(int(row))
                out.append((int(row), c, float(np.sqrt(max(d2[c, row], 0.0)))))
                break
    return out


def select_frames(
    features: pl.DataFrame, extracted: pl.DataFrame, status: pl.DataFrame, videos: pl.DataFrame, cfg: SelectionConfig
) -> pl.DataFrame:
    """Chosen frames (schemas.FRAMES columns, `image_path` = the extracted image, no split yet).

    `status` (schemas.EXTRACTION_STATUS) names the videos to select from and says per video whether it was
    extracted in exact mode (release frames: all of them chosen) or even mode (k-means); `videos` supplies the
    event. The features are read a video at a time as slices of the frame, in (video_id, frame_index) order (sorted
    first only where they are not in that order): a filtered and a sorted copy of the whole frame (2,560 floats a
    row) took 2.5 GB at 10,000 videos (issue 61).
    """
    modes = dict(zip(status["video_id"].to_list(), status["mode"].to_list(), strict=True))
    events = dict(zip(videos["video_id"].to_list(), videos["event"].to_list(), strict=True))
    paths = {(r["video_id"], r["frame_index"]): r["image_path"] for r in extracted.iter_rows(named=True)}
    rows = []
    order = features.select(pl.arg_sort_by("video_id", "frame_index")).to_series()
    if not (order.diff().fill_null(1) == 1).all():  # gather_features writes them in order: no copy then
        features = features[order]
    per_video = (
        features.select("video_id")
        .with_row_index("_row")
        .group_by("video_id", maintain_order=True)
        .agg(pl.col("_row").first().alias("start"), pl.len().alias("n"))
        .filter(pl.col("video_id").is_in(status["video_id"].implode()))
    )
    for vid, start, n in progress(per_video.iter_rows(), desc="select frames", unit="video", total=per_video.height):
        grp = features.slice(start, n)
        picks: Sequence[tuple[int, int | None, float | None]]
        if modes.get(vid) == "exact":
            picks = [(i, None, None) for i in range(len(grp))]
        else:
            picks = kmeans_select(grp["feature"].to_numpy(), cfg.k, seed=cfg.seed, niter=cfg.niter, nredo=cfg.nredo)
        for row, cluster, dist in picks:
            fi = int(grp["frame_index"][row])
            rows.append(
                {
                    "image_id": f"{vid}_{fi}",
                    "video_id": vid,
                    "event": events.get(vid),
                    "frame_index": fi,
                    "pts_s": float(grp["pts_s"][row]),
                    "cluster": cluster,
                    "distance": dist,
                    "image_path": paths[(vid, fi)],
                    "split": None,
                }
            )
    schema = {
        "image_id": pl.Utf8,
        "video_id": pl.Utf8,
        "event": pl.Utf8,
        "frame_index": pl.Int64,
        "pts_s": pl.Float64,
        "cluster": pl.Int64,
        "distance": pl.Float64,
        "image_path": pl.Utf8,
        "split": pl.Utf8,
    }
    return pl.DataFrame(rows, schema=schema)


def publish_images(frames: pl.DataFrame, image_dir: str | Path, cfg: SelectionConfig) -> pl.DataFrame:
    """Put each chosen frame at `image_dir/{video_id}/{frame_index}.{format}`; returns frames with the new paths.

    Same format as the extracted image: a hard link (no copy, no re-encoding), else a copy; else re-encoded.
    """
    from PIL import Image

    from squidflow.contracts.io import link_or_copy
    from squidflow.contracts.paths import job_file, recorded_path
    from squidflow.frames.extract import save_image

    image_dir = Path(image_dir)
    new_paths = []
    for r in frames.iter_rows(named=True):
        src = Path(job_file(r["image_path"]))
        dst = image_dir / r["video_id"] / f"{r['frame_index']}.{cfg.image_format}"
        if src.suffix.lstrip(".") == cfg.image_format:
            link_or_copy(src, dst)
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.unlink(missing_ok=True)
            with Image.open(src) as img:
                save_image(
                    np.asarray(img.convert("RGB")), dst, image_format=cfg.image_format, quality=cfg.image_quality
                )
        new_paths.append(recorded_path(dst))
    return frames.with_columns(pl.Series("image_path", new_paths, dtype=pl.Utf8))


def build_dataset(
    features: pl.DataFrame,
    extracted: pl.DataFrame,
    status: pl.DataFrame,
    videos: pl.DataFrame,
    cfg: SelectionConfig,
    splits_cfg,
    image_dir: str | Path,
    *,
    annotations: str | None = None,
    download_dir: str | Path = DOWNLOADS_DIR,
    removed: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Selection, published images and splits: the rows of results/dataset/frames.parquet.

    `annotations` (the release's huj_annotations.csv, URL or path) is read only when a video was extracted in exact
    (release) mode and `splits.release_test` is on: its videos form the test split. `removed`: the videos taken
    down on request (video_id, event), which keep their place in the split shuffle so no other video moves.
    """
    from squidflow.frames.splits import assign_splits, read_annotated_videos

    ok = status.filter(pl.col("status") == "ok")
    frames = select_frames(features, extracted, ok, videos, cfg)  # the ok videos' features only
    frames = publish_images(frames, image_dir, cfg)
    test_videos = None
    if splits_cfg.release_test and annotations and (ok["mode"] == "exact").any():
        from squidflow.fetch import fetch

        test_videos = read_annotated_videos(str(fetch(annotations, download_dir)))
    return assign_splits(frames, splits_cfg, test_videos=test_videos, removed=removed)
