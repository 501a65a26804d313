"""Plausibility scorers: how well does inference c fit image+region q? (Sherlock §4, §5, Appendix E.)

Every scorer here is a dual encoder: it maps each instance's image+region to a vector (`region`) and each inference
to a vector (`inference`), and the plausibility of inference c for region q is their dot product (a cosine — the
vectors are L2-normalised). That is what lets the comparison stage score every (region, inference) pair of a 23K
corpus without the n×n matrix: `candidates_above_gold` multiplies blocks of queries by all candidates and keeps,
per query, only what scores above the query's own (gold) inference.

- `clip`: an open_clip model with the region drawn on the image the way Sherlock trained its CLIP models
  (magenta fill at alpha 60/255, 3-pixel opaque green outline; a wide image is seen as two overlapping squares whose
  embeddings are averaged).
- `probe`: two linear heads trained with InfoNCE on frozen image features (featurize stage) and frozen SBERT
  inference embeddings — a small learned image–text scorer that runs on CPU.
- `text`: image-free, region = SBERT(clue), inference = SBERT(inference). For corpora whose images are not at hand.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from squidflow.config.validation import defaults_from_schema, from_section
from squidflow.contracts.image_ids import image_id_expr
from squidflow.encoders import text_embed
from squidflow.encoders.clip import load_clip

log = logging.getLogger(__name__)

SCORERS = ("text", "probe", "clip")

# Sherlock's highlight (training_code: fill '#ff05cd3c', outline '#05ff37ff', width 3)
REGION_FILL = (255, 5, 205, 60)
REGION_OUTLINE = (5, 255, 55, 255)
REGION_OUTLINE_WIDTH = 3


def _normalise(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return np.ascontiguousarray(x / np.maximum(n, 1e-12), dtype=np.float32)


@dataclass
class DualEmbeddings:
    """Per corpus instance (in corpus order): the region's vector and the inference's vector, both unit length."""

    instance_id: list[str]
    region: np.ndarray
    inference: np.ndarray

    def gold(self) -> np.ndarray:
        """Each instance's plausibility for its own inference."""
        return np.einsum("ij,ij->i", self.region, self.inference)

    def to_frame(self) -> pl.DataFrame:
        d = self.region.shape[1]
        return pl.DataFrame(
            {"instance_id": self.instance_id, "region": self.region, "inference": self.inference},
            schema={"instance_id": pl.Utf8, "region": pl.Array(pl.Float32, d), "inference": pl.Array(pl.Float32, d)},
        )

    @classmethod
    def from_frame(cls, df: pl.DataFrame) -> DualEmbeddings:
        n = len(df)
        region = np.asarray(df["region"].to_numpy(), dtype=np.float32).reshape(n, -1)
        inference = np.asarray(df["inference"].to_numpy(), dtype=np.float32).reshape(n, -1)
        return cls(df["instance_id"].to_list(), region, inference)


# --- text ------------------------------------------------------------------------------------------------------
Encoder = Callable[[Sequence[str]], np.ndarray]


def sbert_encoder(cache_path: str | os.PathLike | None = None) -> Encoder:
    """SBERT through the on-disk cache (see text_embed.encode_cached)."""
    return lambda texts: text_embed.encode_cached(texts, cache_path)


def text_scorer(corpus: pl.DataFrame, *, encode: Encoder | None = None) -> DualEmbeddings:
    """region = SBERT(clue), inference = SBERT(inference): plausibility is clue–inference cosine similarity."""
    encode = encode or sbert_encoder()
    texts = corpus["clue"].to_list() + corpus["inference"].to_list()
    emb = encode(texts)
    n = len(corpus)
    return DualEmbeddings(corpus["instance_id"].to_list(), emb[:n], emb[n:])


# --- probe -----------------------------------------------------------------------------------------------------
@dataclass
@defaults_from_schema("comparison.probe")
class ProbeConfig:
    dim: int
    epochs: int
    batch_size: int
    lr: float
    weight_decay: float
    temperature: float
    seed: int


def image_features_for(corpus: pl.DataFrame, features: pl.DataFrame) -> np.ndarray:
    """The frozen image feature of each corpus instance (image_id = f"{video_id}_{frame_index}")."""
    feats = features.select(image_id_expr(), pl.col("feature")).unique("image_id", keep="first", maintain_order=True)
    joined = corpus.select("instance_id", "image_id").join(feats, on="image_id", how="left", maintain_order="left")
    missing = joined.filter(pl.col("feature").is_null())
    if len(missing):
        raise ValueError(
            f"probe scorer: {len(missing)} corpus image(s) have no row in the features file, e.g. "
            f"{missing['image_id'][:3].to_list()}; the features must come from the same frames (rule featurize)"
        )
    return np.asarray(joined["feature"].to_numpy(), dtype=np.float32).reshape(len(joined), -1)


def train_probe(image_feats: np.ndarray, text_feats: np.ndarray, cfg: ProbeConfig | None = None):
    """Two linear heads (image → dim, text → dim) trained with symmetric InfoNCE on matching rows; returns them."""
    import torch

    cfg = cfg or from_section(ProbeConfig, None)
    torch.manual_seed(cfg.seed)
    xi = torch.from_numpy(_normalise(image_feats))
    xt = torch.from_numpy(_normalise(text_feats))
    img_head = torch.nn.Linear(xi.shape[1], cfg.dim)
    txt_head = torch.nn.Linear(xt.shape[1], cfg.dim)
    params = list(img_head.parameters()) + list(txt_head.parameters())
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    n = len(xi)
    gen = torch.Generator().manual_seed(cfg.seed)
    loss_value = float("nan")
    for _epoch in range(cfg.epochs):
        perm = torch.randperm(n, generator=gen)
        for start in range(0, n, cfg.batch_size):
            idx = perm[start : start + cfg.batch_size]
            if len(idx) < 2:
                continue
            zi = torch.nn.functional.normalize(img_head(xi[idx]), dim=1)
            zt = torch.nn.functional.normalize(txt_head(xt[idx]), dim=1)
            logits = zi @ zt.T / cfg.temperature
            target = torch.arange(len(idx))
            loss = (
                torch.nn.functional.cross_entropy(logits, target) + torch.nn.functional.cross_entropy(logits.T, target)
            ) / 2
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss_value = float(loss.detach())
    log.info("probe: trained on %d pairs, final InfoNCE loss %.4f", n, loss_value)
    return img_head, txt_head


def probe_scorer(
    corpus: pl.DataFrame,
    features: pl.DataFrame,
    *,
    train_split: str = "train",
    cfg: ProbeConfig | None = None,
    encode: Encoder | None = None,
) -> DualEmbeddings:
    """Train the probe on the corpus' `train_split` instances, then embed every instance's image and inference."""
    import torch

    img = image_features_for(corpus, features)
    txt = (encode or sbert_encoder())(corpus["inference"].to_list())
    train = (corpus["split"] == train_split).to_numpy()
    if train.sum() < 2:
        raise ValueError(
            f"probe scorer: the corpus has {int(train.sum())} instance(s) in split {train_split!r}; it needs at least "
            "2 to train. Set comparison.probe.train_split to a split that exists, or use comparison.scorer: text"
        )
    img_head, txt_head = train_probe(img[train], txt[train], cfg)
    with torch.no_grad():
        zi = img_head(torch.from_numpy(_normalise(img))).numpy()
        zt = txt_head(torch.from_numpy(_normalise(txt))).numpy()
    return DualEmbeddings(corpus["instance_id"].to_list(), _normalise(zi), _normalise(zt))


# --- clip ------------------------------------------------------------------------------------------------------
def draw_region(image, bboxes: list[dict]):
    """The image (RGB) with each box filled magenta at alpha 60/255 and outlined in opaque green, 3 px (Sherlock)."""
    from PIL import Image, ImageDraw

    base = image.convert("RGBA")
    overlay = Image.new("RGBA", base.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay, "RGBA")
    for b in bboxes:
        x, y = float(b["left"]), float(b["top"])
        draw.rectangle(
            [(x, y), (x + float(b["width"]), y + float(b["height"]))],
            fill=REGION_FILL,
            outline=REGION_OUTLINE,
            width=REGION_OUTLINE_WIDTH,
        )
    return Image.alpha_composite(base, overlay).convert("RGB")


def widescreen_crops(image) -> list:
    """Two overlapping squares covering a non-square image (left/right or top/bottom); a square image once."""
    w, h = image.size
    if w == h:
        return [image]
    if w > h:
        return [image.crop((0, 0, h, h)), image.crop((w - h, 0, w, h))]
    return [image.crop((0, 0, w, w)), image.crop((0, h - w, w, h))]


def clip_scorer(
    corpus: pl.DataFrame,
    *,
    model_name: str,
    pretrained: str,
    cache_dir: str | None = None,
    device: str = "cpu",
    batch_size: int = 64,
    image_root: str | os.PathLike | None = None,
) -> DualEmbeddings:
    """CLIP embeddings of each instance's region-drawn image (widescreen: two squares, averaged) and inference."""
    import torch
    from PIL import Image
    from tqdm import tqdm

    model, preprocess, tokenizer = load_clip(model_name, pretrained, cache_dir=cache_dir, device=device)
    regions = []
    rows = corpus.select("image", "bboxes").to_dicts()
    with torch.no_grad():
        for start in tqdm(range(0, len(rows), batch_size), desc="clip images"):
            batch, owners = [], []
            for j, r in enumerate(rows[start : start + batch_size]):
                path = (
                    Path(image_root) / r["image"]
                    if image_root and not Path(r["image"]).is_absolute()
                    else Path(r["image"])
                )
                if not path.exists():
                    raise FileNotFoundError(
                        f"clip scorer: image {path} (corpus row {start + j}) not found; Sherlock images come from "
                        "Visual Genome/VCR — download them and set comparison.clip.image_root, or use scorer: text"
                    )
                with Image.open(path) as im:
                    drawn = draw_region(im, r["bboxes"])
                for crop in widescreen_crops(drawn):
                    batch.append(preprocess(crop))
                    owners.append(j)
            feats = model.encode_image(torch.stack(batch).to(device)).float()
            feats = torch.nn.functional.normalize(feats, dim=1).cpu().numpy()
            owners_a = np.asarray(owners)
            for j in range(owners_a.max() + 1):
                regions.append(feats[owners_a == j].mean(axis=0))
        texts = corpus["inference"].to_list()
        inf = []
        for start in tqdm(range(0, len(texts), 256), desc="clip texts"):
            tok = tokenizer(texts[start : start + 256]).to(device)
            inf.append(model.encode_text(tok).float().cpu().numpy())
    return DualEmbeddings(
        corpus["instance_id"].to_list(), _normalise(np.stack(regions)), _normalise(np.concatenate(inf))
    )


# --- scoring without the n×n matrix --------------------------------------------------------------------------------
def candidates_above_gold(
    region: np.ndarray,
    inference: np.ndarray,
    gold: np.ndarray,
    *,
    query_group: np.ndarray | None = None,
    cand_group: np.ndarray | None = None,
    query_text: np.ndarray | None = None,
    cand_text: np.ndarray | None = None,
    max_per_query: int = 100,
    block: int = 1024,
    progress: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query index, candidate index, plausibility) of every candidate scoring strictly above the query's gold.

    `region` (queries × d) is multiplied by `inference` (candidates × d) in blocks of `block` queries, so memory is
    block × candidates floats. Candidates of another group (split) or with the query's own inference text (integer
    text ids) are excluded. Per query at most `max_per_query` candidates are kept — the most plausible ones — so
    the output stays linear in the number of queries.
    """
    from tqdm import tqdm

    nq, nc = len(region), len(inference)
    out_q, out_c, out_s = [], [], []
    cand = np.ascontiguousarray(inference.T, dtype=np.float32)
    k = min(max_per_query, nc)
    for start in tqdm(range(0, nq, block), desc="plausibility blocks", disable=not progress):
        stop = min(start + block, nq)
        s = region[start:stop] @ cand
        keep = s > gold[start:stop, None]
        if query_group is not None and cand_group is not None:
            keep &= query_group[start:stop, None] == cand_group[None, :]
        if query_text is not None and cand_text is not None:
            keep &= query_text[start:stop, None] != cand_text[None, :]
        if k <= 0:
            continue
        masked = np.where(keep, s, -np.inf)
        if k < nc:
            top = np.argpartition(-masked, k - 1, axis=1)[:, :k]
        else:
            top = np.broadcast_to(np.arange(nc), (stop - start, nc))
        rows = np.repeat(np.arange(start, stop), top.shape[1])
        cols = top.reshape(-1)
        vals = masked[rows - start, cols]
        ok = np.isfinite(vals)
        out_q.append(rows[ok])
        out_c.append(cols[ok])
        out_s.append(vals[ok])
    if not out_q:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32)
    return np.concatenate(out_q), np.concatenate(out_c), np.concatenate(out_s).astype(np.float32)


def score_corpus(
    corpus: pl.DataFrame,
    scorer: str,
    *,
    encode: Encoder | None = None,
    features: pl.DataFrame | None = None,
    probe: dict | None = None,
    clip: dict | None = None,
    device: str = "cpu",
) -> DualEmbeddings:
    """Embeddings of the corpus under the configured scorer (`comparison.scorer`: text | probe | clip)."""
    if scorer == "text":
        return text_scorer(corpus, encode=encode)
    if scorer == "probe":
        if features is None:
            raise ValueError("comparison.scorer: probe needs the image features (results/features/{backbone}.parquet)")
        probe = dict(probe or {})
        train_split = probe.pop("train_split", "train")
        return probe_scorer(corpus, features, train_split=train_split, cfg=ProbeConfig(**probe), encode=encode)
    if scorer == "clip":
        clip = dict(clip or {})
        return clip_scorer(
            corpus,
            model_name=clip["model"],
            pretrained=clip["pretrained"],
            cache_dir=clip.get("cache_dir") or None,
            image_root=clip.get("image_root") or None,
            device=device,
        )
    raise ValueError(f"comparison.scorer = {scorer!r}: must be one of {SCORERS}")
