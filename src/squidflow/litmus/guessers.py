"""First-turn guessers trained here: STL-CE on the target, MTL-KL on the rule soft labels (litmus test §4.1).

The model follows the GuessWhat?! baseline guesser (de Vries et al., 2017): each candidate object is its MS-COCO
category embedding plus the baseline's 8-d spatial features (left, bottom, right, top, centre x, centre y, width,
height, scaled to [-1, 1] with y pointing up), passed through a small MLP; the QA pair (question words, then the
answer as a token) is encoded by an LSTM; an object's score is the dot product of the two, and a softmax over the
candidates gives the distribution the litmus test inspects. No image pixels: the first turn's category and absolute
spatial questions are answerable from categories and boxes, which is what the soft labels use too.

- STL-CE: cross-entropy against the target object (the baseline's objective);
- MTL-KL: KL divergence from the rule soft labels to the model's distribution (the paper's upper bound, trained to
  reproduce the soft labels), plus `target_weight` × the cross-entropy on the target. The paper's MTL main task is the
  target after the whole dialogue, which a first-turn guesser never sees, so the default weight is 0.

Both train on the same QA pairs — first turns of `train_split` whose question has a soft label — with the same seed
giving the same initialisation and batch order, and predict every yes/no first turn of `eval_split`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import cast

import numpy as np
import polars as pl
import torch
from torch import nn
from torch.nn import functional as F
from tqdm import tqdm

from squidflow.litmus.config import GuesserConfig
from squidflow.litmus.questions import COCO_CATEGORIES, tokens

METHODS = ("STL-CE", "MTL-KL")
PAD, UNK, YES, NO = "<pad>", "<unk>", "<yes>", "<no>"
MAX_TOKENS = 32
MASKED = -1e9  # a large negative logit rather than -inf, so that 0 · log p stays 0 in the KL term


def spatial_features(left, top, width, height, image_width, image_height) -> np.ndarray:
    """The GuessWhat?! baseline's 8-d box features: x_left, y_lower, x_right, y_upper, x_center, y_center, w, h,
    in [-1, 1] (widths in [0, 2]) with y measured upwards from the bottom of the image."""
    W, H = np.asarray(image_width, float), np.asarray(image_height, float)
    x_left, x_right = np.asarray(left, float), np.asarray(left, float) + np.asarray(width, float)
    y_upper = H - np.asarray(top, float)
    y_lower = y_upper - np.asarray(height, float)
    return np.stack(
        [
            x_left / W * 2 - 1,
            y_lower / H * 2 - 1,
            x_right / W * 2 - 1,
            y_upper / H * 2 - 1,
            (x_left + x_right) / 2 / W * 2 - 1,
            (y_lower + y_upper) / 2 / H * 2 - 1,
            np.asarray(width, float) / W * 2,
            np.asarray(height, float) / H * 2,
        ],
        axis=-1,
    ).astype(np.float32)


def build_vocabulary(questions: list[str], min_count: int) -> dict[str, int]:
    counts = Counter(w for q in questions for w in tokens(q))
    words = sorted(w for w, c in counts.items() if c >= min_count)
    return {w: i for i, w in enumerate([PAD, UNK, YES, NO, *words])}


@dataclass
class Encoded:
    """A batch-ready copy of some first turns: token ids, objects (category ids, 8-d boxes, mask), targets."""

    game_ids: np.ndarray
    object_ids: list[list[int]]
    tokens: torch.Tensor  # B × T (0 = padding)
    lengths: torch.Tensor  # B
    categories: torch.Tensor  # B × N
    spatial: torch.Tensor  # B × N × 8
    mask: torch.Tensor  # B × N, True for a real candidate
    target: torch.Tensor  # B: index of the target among the candidates
    soft: torch.Tensor  # B × N: rule soft labels (0 where unknown)


CATEGORY_INDEX = {c: i + 1 for i, c in enumerate(COCO_CATEGORIES)}  # 0 = a category outside MS-COCO


def encode(games: pl.DataFrame, vocab: dict[str, int], soft_labels: pl.DataFrame | None = None) -> Encoded:
    """Turn LITMUS_GAMES rows (first turns answered yes/no) into tensors; soft labels by (game, object) if given."""
    soft_map: dict[tuple[int, int], float] = {}
    if soft_labels is not None:
        known = soft_labels.filter(pl.col("soft_label").is_not_null())
        soft_map = dict(
            zip(
                zip(known["game_id"].to_list(), known["object_id"].to_list(), strict=True),
                known["soft_label"].to_list(),
                strict=True,
            )
        )
    n_games = games.height
    n_objects = max(1, int(cast(int, games["objects"].list.len().max()) or 1))
    tok = np.zeros((n_games, MAX_TOKENS), dtype=np.int64)
    lengths = np.zeros(n_games, dtype=np.int64)
    cats = np.zeros((n_games, n_objects), dtype=np.int64)
    spatial = np.zeros((n_games, n_objects, 8), dtype=np.float32)
    mask = np.zeros((n_games, n_objects), dtype=bool)
    target = np.zeros(n_games, dtype=np.int64)
    soft = np.zeros((n_games, n_objects), dtype=np.float32)
    object_ids: list[list[int]] = []
    rows = games.select(
        "game_id", "question", "answer", "target_object_id", "image_width", "image_height", "objects"
    ).iter_rows()
    for i, (gid, question, answer, target_id, W, H, objects) in enumerate(rows):
        words = [vocab.get(w, vocab[UNK]) for w in tokens(question or "")][: MAX_TOKENS - 1]
        words.append(vocab[YES] if answer == "yes" else vocab[NO])
        tok[i, : len(words)] = words
        lengths[i] = len(words)
        ids = [o["object_id"] for o in objects]
        object_ids.append(ids)
        k = len(objects)
        mask[i, :k] = True
        cats[i, :k] = [CATEGORY_INDEX.get(o["category"], 0) for o in objects]
        b = [o["bbox"] for o in objects]
        spatial[i, :k] = spatial_features(
            [x["left"] for x in b], [x["top"] for x in b], [x["width"] for x in b], [x["height"] for x in b], W, H
        )
        target[i] = ids.index(target_id)
        soft[i, :k] = [soft_map.get((gid, oid), 0.0) for oid in ids]
    return Encoded(
        games["game_id"].to_numpy(),
        object_ids,
        torch.from_numpy(tok),
        torch.from_numpy(lengths),
        torch.from_numpy(cats),
        torch.from_numpy(spatial),
        torch.from_numpy(mask),
        torch.from_numpy(target),
        torch.from_numpy(soft),
    )


class FirstTurnGuesser(nn.Module):
    """Dot product of an LSTM encoding of the QA pair with an MLP encoding of each candidate (category + box)."""

    def __init__(self, vocab_size: int, cfg: GuesserConfig):
        super().__init__()
        self.words = nn.Embedding(vocab_size, cfg.word_dim, padding_idx=0)
        self.lstm = nn.LSTM(cfg.word_dim, cfg.hidden_dim, batch_first=True)
        self.categories = nn.Embedding(len(COCO_CATEGORIES) + 1, cfg.category_dim)
        self.objects = nn.Sequential(
            nn.Linear(cfg.category_dim + 8, cfg.hidden_dim), nn.ReLU(), nn.Linear(cfg.hidden_dim, cfg.hidden_dim)
        )

    def forward(self, tokens, lengths, categories, spatial, mask) -> torch.Tensor:
        packed = nn.utils.rnn.pack_padded_sequence(
            self.words(tokens), lengths.cpu(), batch_first=True, enforce_sorted=False
        )
        _, (h, _) = self.lstm(packed)
        qa = h[-1]  # B × hidden
        objects = self.objects(torch.cat([self.categories(categories), spatial], dim=-1))  # B × N × hidden
        logits = torch.einsum("bnh,bh->bn", objects, qa)
        return logits.masked_fill(~mask, MASKED)


def loss_fn(method: str, logits: torch.Tensor, target: torch.Tensor, soft: torch.Tensor, target_weight: float):
    if method == "STL-CE":
        return F.cross_entropy(logits, target)
    if method == "MTL-KL":
        kl = F.kl_div(F.log_softmax(logits, dim=-1), soft, reduction="batchmean")
        return kl + target_weight * F.cross_entropy(logits, target) if target_weight else kl
    raise ValueError(f"guesser method {method!r} is not one of {METHODS} (litmus.guesser.methods)")


def _batch(data: Encoded, idx, device: str):
    idx_t = torch.as_tensor(idx)
    length = int(data.lengths[idx_t].max())
    return (
        data.tokens[idx_t, :length].to(device),
        data.lengths[idx_t],
        data.categories[idx_t].to(device),
        data.spatial[idx_t].to(device),
        data.mask[idx_t].to(device),
        data.target[idx_t].to(device),
        data.soft[idx_t].to(device),
    )


def _training_games(games: pl.DataFrame, soft_labels: pl.DataFrame, split: str) -> pl.DataFrame:
    labelled = soft_labels.filter(pl.col("soft_label").is_not_null() & (pl.col("split") == split))["game_id"].unique(
        maintain_order=True
    )
    return games.filter(pl.col("game_id").is_in(labelled.implode())).sort("game_id")


def _split_games(
    games: pl.DataFrame, soft_labels: pl.DataFrame, train_split: str, eval_split: str
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The games to train on (a first turn with a soft label) and to evaluate (a yes/no first answer); an empty side
    is an error naming the config key to set."""
    train_games = _training_games(games, soft_labels, train_split)
    if train_games.is_empty():
        raise ValueError(
            f"no first turn of split '{train_split}' has a soft label (category or spatial question answered yes/no); "
            f"litmus.games needs a {train_split} file, or set litmus.train_split"
        )
    eval_games = games.filter((pl.col("split") == eval_split) & pl.col("answer").is_in(["yes", "no"])).sort("game_id")
    if eval_games.is_empty():
        raise ValueError(
            f"no game of split '{eval_split}' has a yes/no first answer; litmus.games needs a "
            f"{eval_split} file, or set litmus.eval_split"
        )
    return train_games, eval_games


def train_guesser(
    games: pl.DataFrame,
    soft_labels: pl.DataFrame,
    *,
    method: str,
    seed: int,
    cfg: GuesserConfig,
    train_split: str = "train",
    eval_split: str = "test",
    device: str = "cpu",
) -> tuple[pl.DataFrame, list[str]]:
    """Train one guesser and return its probabilities on every yes/no first turn of `eval_split` (LITMUS_PROBABILITIES
    rows) and a training log (one line per epoch)."""
    if method not in METHODS:
        raise ValueError(f"guesser method {method!r} is not one of {METHODS} (litmus.guesser.methods)")
    train_games, eval_games = _split_games(games, soft_labels, train_split, eval_split)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    vocab = build_vocabulary(train_games["question"].to_list(), cfg.min_word_count)
    train = encode(train_games, vocab, soft_labels)
    model = FirstTurnGuesser(len(vocab), cfg).to(device)
    optimiser = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    lines = [
        f"method {method} seed {seed}: {train_games.height} training QA pairs ({train_split}), "
        f"{eval_games.height} evaluated ({eval_split}), vocabulary {len(vocab)}, device {device}"
    ]
    n = train_games.height
    for epoch in tqdm(range(1, cfg.epochs + 1), desc=f"{method} seed {seed}", unit="epoch"):
        model.train()
        order = rng.permutation(n)
        total, correct = 0.0, 0
        for start in range(0, n, cfg.batch_size):
            tok, lens, cats, spatial, mask, target, soft = _batch(train, order[start : start + cfg.batch_size], device)
            logits = model(tok, lens, cats, spatial, mask)
            loss = loss_fn(method, logits, target, soft, cfg.target_weight)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += loss.item() * len(target)
            correct += int((logits.argmax(-1) == target).sum())
        lines.append(f"epoch {epoch}: loss {total / n:.4f}, train accuracy {correct / n:.4f}")
    evaluated = encode(eval_games, vocab)
    probs = predict(model, evaluated, device, cfg.batch_size)
    out = pl.DataFrame(
        {
            "model": method,
            "seed": seed,
            "game_id": np.repeat(evaluated.game_ids, [len(p) for p in probs]),
            "object_id": [oid for ids in evaluated.object_ids for oid in ids],
            "probability": np.concatenate(probs).astype(float),
        }
    )
    return out, lines


@torch.no_grad()
def predict(model: FirstTurnGuesser, data: Encoded, device: str, batch_size: int) -> list[np.ndarray]:
    """Per QA pair, the softmax over its candidates (padding dropped)."""
    model.eval()
    out: list[np.ndarray] = []
    for start in range(0, len(data.game_ids), batch_size):
        idx = np.arange(start, min(start + batch_size, len(data.game_ids)))
        tok, lens, cats, spatial, mask, _, _ = _batch(data, idx, device)
        p = torch.softmax(model(tok, lens, cats, spatial, mask), dim=-1).cpu().numpy()
        out += [p[j, : len(data.object_ids[i])] for j, i in enumerate(idx)]
    return out
