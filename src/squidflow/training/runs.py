"""One training run of SQUID-E §5: fit a classifier on one training set with one method and seed, predict the
evaluation sets.

The input pipeline reads uint8 rows from the memory-mapped cache (squidflow.training.cache) — for GA and AU the whole
frame, cut by the perspective crop per image in the DataLoader — and moves uint8 batches to the device, where the
method's other D.1 augmentations run on the whole batch, each image with its own random parameters
(squidflow.training.batch_augment), and the batch is scaled and normalised (ImageNet mean/std): a quarter of the
bytes over PCIe, and on a GPU the augmentations cost a few kernels per batch instead of the CPU's time per image.

Reproducibility: the seed sets Python's, NumPy's and torch's generators, the shuffling generator and each loader
worker's seed, and deterministic algorithms are requested (`warn_only`, since a few CUDA kernels have no
deterministic version); on the CPU the same seed gives the same predictions bit for bit.
"""

from __future__ import annotations

import logging
import os
import random
import time

import numpy as np
import polars as pl
import torch
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

from squidflow.training.augment import frame_short_side
from squidflow.training.batch_augment import build_batch_augmentation
from squidflow.training.calibration import run_metrics
from squidflow.training.config import TrainConfig
from squidflow.training.losses import Method, get_method, mc_dropout_probs
from squidflow.training.models import Classifier, load_backbone, set_trainable

log = logging.getLogger(__name__)

EXPERIMENTS = ("classification", "calibration")


def seed_everything(seed: int) -> None:
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.benchmark = False


def _seed_worker(worker_id: int) -> None:  # DataLoader workers: derive every generator from torch's per-worker seed
    seed = torch.initial_seed() % 2**32
    np.random.seed(seed)
    random.seed(seed)


class CachedImages(Dataset):
    """Rows of a memory-mapped (N, 3, H, W) uint8 cache, augmented per item, returned as uint8 tensors."""

    def __init__(self, cache: np.ndarray, rows: np.ndarray, labels: np.ndarray, augment=None):
        self.cache, self.rows, self.labels, self.augment = cache, np.asarray(rows), np.asarray(labels), augment

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        image = torch.from_numpy(np.array(self.cache[self.rows[i]]))  # copy out of the read-only memory map
        if self.augment is not None:
            image = self.augment(image)
        return image, int(self.labels[i])


class StackedImages(Dataset):
    """Several cached pools seen as one dataset (a training set may draw from one pool, evaluation from two)."""

    def __init__(self, parts: list[CachedImages]):
        self.parts = parts
        self.offsets = np.cumsum([0] + [len(p) for p in parts])

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def __getitem__(self, i: int):
        k = int(np.searchsorted(self.offsets, i, side="right") - 1)
        return self.parts[k][i - int(self.offsets[k])]


def normalize(batch: torch.Tensor, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
    """uint8 (B, 3, H, W) -> float, scaled to [0, 1] and normalised with `mean`/`std` of shape (1, 3, 1, 1).

    (x / 255 − mean) / std as x · (1 / (255 · std)) − mean / std, in place on the converted batch: two passes over
    the floats instead of three, and no temporaries (on the CPU the batch is larger than the cache)."""
    return batch.float().mul_(1.0 / (255.0 * std)).sub_(mean / std)


def _dataset(sets: pl.DataFrame, caches: dict[str, np.ndarray], augment=None) -> StackedImages:
    parts = []
    for pool in sorted(sets["pool"].unique()):
        rows = sets.filter(pl.col("pool") == pool)
        parts.append(CachedImages(caches[pool], rows["row"].to_numpy(), rows["label"].to_numpy(), augment))
    return StackedImages(parts)


def _ordered_by_pool(sets: pl.DataFrame) -> pl.DataFrame:
    """Rows in the order `_dataset` serves them (pool by pool)."""
    return pl.concat([sets.filter(pl.col("pool") == p) for p in sorted(sets["pool"].unique())])


def _train_and_eval(sets: pl.DataFrame, experiment: str, train_set: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The rows of `train_set` to train on, and every evaluation row in the order `_dataset` serves them; an empty
    training set is an error naming the sets file."""
    train = sets.filter((pl.col("use") == "train") & (pl.col("dataset") == train_set))
    if len(train) == 0:
        raise ValueError(
            f"{experiment}/{train_set}: the training set is empty (see results/training/{experiment}/sets.parquet)"
        )
    return train, _ordered_by_pool(sets.filter(pl.col("use") == "eval"))


def _model(
    cfg: TrainConfig, method: str, outputs: int, dropout: float, device: str
) -> tuple[Classifier, list[torch.nn.Parameter], str]:
    """The classifier on the configured backbone, moved to `device`, with the parameters the method trains
    (set_trainable) and the name of that choice (cfg.trainable_for)."""
    backbone, width = load_backbone(cfg.backbone, cfg.weights)
    model = Classifier(backbone, width, outputs, dropout).to(device)
    trainable = cfg.trainable_for(method)
    return model, set_trainable(model, trainable, cfg.backbone), trainable


def train_run(
    sets: pl.DataFrame,
    caches: dict[str, np.ndarray],
    *,
    experiment: str,
    train_set: str,
    method: str,
    seed: int,
    cfg: TrainConfig,
    device: str = "cpu",
) -> tuple[pl.DataFrame, dict, list[str]]:
    """Train one model and predict every evaluation image; returns (predictions, metrics, training log lines)."""
    if experiment not in EXPERIMENTS:
        raise ValueError(f"experiment {experiment!r}: expected one of {EXPERIMENTS}")
    seed_everything(seed)
    lines: list[str] = []

    def say(msg: str) -> None:
        lines.append(msg)
        log.info(msg)

    n_classes = len(cfg.events) if experiment == "classification" else 2
    spec: Method = get_method(method, cfg) if experiment == "calibration" else get_method("BL", cfg)
    per_image, per_batch = (
        build_batch_augmentation(method, cfg.crop, cfg.augment_geometry)
        if experiment == "classification"
        else (None, None)
    )
    whole_frames = bool(experiment == "classification" and frame_short_side(method, cfg.crop, cfg.augment_geometry))
    train_caches = _training_caches(caches, whole_frames, f"{experiment}/{train_set}/{method}", train_set)
    train, evaluate = _train_and_eval(sets, experiment, train_set)
    model, learning, trainable = _model(cfg, method, n_classes + spec.extra_outputs, spec.dropout, device)
    optimizer = torch.optim.Adam(learning, lr=cfg.lr)
    mean = torch.tensor(cfg.mean, device=device).view(1, 3, 1, 1)
    std = torch.tensor(cfg.std, device=device).view(1, 3, 1, 1)
    use_amp = cfg.amp and device.startswith("cuda")
    loader = _train_loader(_dataset(train, train_caches, per_image), cfg, seed, device)
    say(
        f"{experiment}/{train_set}/{method}/seed{seed}: {len(train)} training images, {len(evaluate)} evaluation "
        f"images, backbone {cfg.backbone}, {n_classes} classes, device {device}, amp {use_amp}, trainable {trainable} "
        f"({sum(p.numel() for p in learning)} of {sum(p.numel() for p in model.parameters())} parameters)"
        + (f", {method} on whole frames" if whole_frames else "")
    )
    for epoch in range(cfg.epochs):
        total, count, wait, elapsed = _train_epoch(
            model, loader, optimizer, spec, (per_batch, mean, std), use_amp, f"epoch {epoch + 1}/{cfg.epochs}", device
        )
        say(
            f"epoch {epoch + 1}/{cfg.epochs}: loss {total / max(count, 1):.4f}, {count / elapsed:.1f} images/s, "
            f"input wait {100 * wait / elapsed:.1f}% of {elapsed:.1f}s"
        )

    probs = predict(model, _dataset(evaluate, caches), spec, cfg, device, mean, std)
    predictions, metrics = _scored(experiment, evaluate, probs, cfg, seed)
    say("metrics: " + ", ".join(f"{k} {v:.4f}" for k, v in metrics.items()))
    return predictions, metrics, lines


def _train_loader(dataset: Dataset, cfg: TrainConfig, seed: int, device: str) -> DataLoader:
    """The training images in batches, shuffled by a generator of the run's seed, each worker seeded from it."""
    return DataLoader(
        dataset,
        batch_size=cfg.batch_size,
        shuffle=True,
        num_workers=cfg.num_workers,
        worker_init_fn=_seed_worker,
        generator=torch.Generator().manual_seed(seed),
        pin_memory=device.startswith("cuda"),
        persistent_workers=cfg.num_workers > 0,
    )


def _training_caches(caches: dict[str, np.ndarray], whole_frames: bool, run: str, train_set: str) -> dict:
    """The caches the training images are read from: GA/AU start from the whole frame, read from the frame cache."""
    if not whole_frames:
        return caches
    if f"{train_set}_frames" not in caches:
        raise ValueError(
            f"{run}: training.augment_geometry = whole_frame needs the "
            f"whole-frame cache of pool {train_set} (rule make_training_frames), not given"
        )
    return {**caches, train_set: caches[f"{train_set}_frames"]}


def _on_device(images: torch.Tensor, per_batch, mean: torch.Tensor, std: torch.Tensor, device: str) -> torch.Tensor:
    """A uint8 batch moved to the device, augmented there as one batch (the method's D.1 augmentations), normalised."""
    images = images.to(device, non_blocking=True)
    if per_batch is not None:
        images = per_batch(images)
    return normalize(images, mean, std)


def _train_epoch(
    model: torch.nn.Module,
    loader: DataLoader,
    optimizer,
    spec: Method,
    prepare: tuple[object, torch.Tensor, torch.Tensor],
    use_amp: bool,
    desc: str,
    device: str,
) -> tuple[float, int, float, float]:
    """One pass over the training loader: (summed loss, images, seconds waiting for input, seconds in all).
    `prepare`: the per-batch augmentation (or None), mean and std the batches are moved and normalised with."""
    model.train()
    total, count, wait, start = 0.0, 0, 0.0, time.perf_counter()
    batches = iter(loader)
    for _ in tqdm(range(len(loader)), desc=desc, mininterval=10, leave=False):
        t0 = time.perf_counter()
        images, labels = next(batches)
        images = _on_device(images, prepare[0], prepare[1], prepare[2], device)
        labels = labels.to(device, non_blocking=True)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        wait += time.perf_counter() - t0
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=use_amp):
            outputs = model(images)
        loss = spec.loss(outputs.float(), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        total += float(loss.detach()) * len(labels)
        count += len(labels)
    return total, count, wait, time.perf_counter() - start


def _scored(
    experiment: str, evaluate: pl.DataFrame, probs: np.ndarray, cfg: TrainConfig, seed: int
) -> tuple[pl.DataFrame, dict]:
    """The evaluation images' predictions as a table, and the run's metrics."""
    predictions = pl.DataFrame(
        {
            "image_id": evaluate["image_id"],
            "eval_set": evaluate["dataset"],
            "label": evaluate["label"],
            "probs": [row.tolist() for row in probs],
            "human_mean": evaluate["human_mean"],
        }
    )
    metrics = run_metrics(
        experiment,
        evaluate["dataset"].to_numpy(),
        evaluate["label"].to_numpy(),
        probs,
        evaluate["human_mean"].fill_null(float("nan")).to_numpy(),
        ece_bins=cfg.ece_bins,
        kl_eps=cfg.kl_eps,
        authors_ece_bins=cfg.authors_ece_bins,
        authors_ece_batch=cfg.authors_ece_batch,
        seed=seed,
    )
    return predictions, metrics


@torch.no_grad()
def predict(
    model: Classifier,
    dataset: StackedImages,
    spec: Method,
    cfg: TrainConfig,
    device: str,
    mean: torch.Tensor,
    std: torch.Tensor,
) -> np.ndarray:
    """Class probabilities (N, K). MC dropout: features once, then `mc_samples` dropout passes of the head, combined
    by `spec.mc_average` (mean logits then softmax, or mean softmax)."""
    model.eval()
    loader = DataLoader(dataset, batch_size=cfg.eval_batch_size, shuffle=False, num_workers=0)
    out = []
    use_amp = cfg.amp and device.startswith("cuda")
    for images, _ in loader:
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=use_amp):
            features = model.features(normalize(images.to(device), mean, std)).float()
        if spec.mc_samples:
            model.dropout.train()
            probs = mc_dropout_probs(
                torch.stack([model.classify(features) for _ in range(spec.mc_samples)]), spec.mc_average
            )
            model.dropout.eval()
        else:
            probs = spec.probs(model.classify(features))
        out.append(probs.double().cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, 2))
