"""Comparison sets of plausible hard negatives (Sherlock §4.3 and Appendix E).

For each image+region (a query: one corpus instance) we want 10 inferences that a strong model rates *above* the
true one, not repetitive, and diverse, which humans then rate on a 3-point Likert scale. The steps, as in the paper:

1. global filters on the pool of inferences: soft dedup (SBERT clustering into round(0.8 × N) clusters, one inference
   kept per cluster) and hard dedup (no verbatim string more than 3 times) — `build_pool`;
2. plausibility: only candidates scoring above the query's gold inference (this drops the gold itself) —
   `plausibility.candidates_above_gold`;
3. local selection: queries with fewer than 20 candidates are skipped; 10 are picked greedily maximising
   5 × plausibility − max cosine similarity to those already picked; a picked inference is disqualified for every
   later query, so each pool inference is shown once (a verbatim string at most 3 times, one per pool copy) —
   `select_sets`;
4. ranking: a weighted sum of global ranks of the set's average inference length, its diversity (mean pairwise SBERT
   cosine, lower is better) and 5 × its average plausibility; the top N per split are exported — `rank_sets`.

N, the soft-dedup population, is the number of *distinct* inference strings: verbatim copies have identical
embeddings, and leaving them to the hard dedup is what lets "three verbatim copies" survive at all.
"""

from __future__ import annotations

import html
import json
import logging
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import cast

import numpy as np
import polars as pl
from tqdm import tqdm

from squidflow.comparison import dedup
from squidflow.comparison.plausibility import DualEmbeddings, candidates_above_gold
from squidflow.config.validation import defaults_from_schema, from_section

log = logging.getLogger(__name__)


@dataclass
@defaults_from_schema("comparison")
class ComparisonConfig:
    """The `comparison` config section's selection keys (defaults = Sherlock Appendix E)."""

    soft_dedup_ratio: float
    soft_dedup_exact_max: int
    soft_dedup_linkage: str
    max_verbatim: int
    max_candidates_per_query: int
    min_candidates: int
    set_size: int
    plausibility_weight: float
    diversity_weight: float
    rank_weights: dict
    top_n: int
    seed: int

    @classmethod
    def from_config(cls, section: dict) -> ComparisonConfig:
        return from_section(cls, section)


# --- 1. global filters -----------------------------------------------------------------------------------------
def build_pool(
    corpus: pl.DataFrame, sbert: np.ndarray, cfg: ComparisonConfig, *, progress: bool = True, device: str = "cpu"
) -> pl.DataFrame:
    """schemas.COMPARISON_POOL: the corpus instances whose inference survives soft and hard dedup.

    `sbert` holds the SBERT embedding of each corpus row's inference (corpus order). Distinct strings are clustered
    into round(ratio × N) clusters; one string per cluster is kept (seeded sample); then at most `max_verbatim`
    instances per kept string. `cluster` is the soft-dedup cluster of the row's string. `device` is the job's GPU
    slot: the k-means partition of a large set runs there (see `dedup.faiss_uses_gpu`).
    """
    texts = corpus["inference"].to_list()
    uniq: dict[str, int] = {}
    for i, t in enumerate(texts):
        uniq.setdefault(t, i)
    first_rows = np.fromiter(uniq.values(), dtype=np.int64, count=len(uniq))
    strings = list(uniq)
    k = dedup.n_soft_clusters(len(strings), cfg.soft_dedup_ratio)
    labels = dedup.soft_dedup_labels(
        sbert[first_rows],
        k,
        exact_max=cfg.soft_dedup_exact_max,
        method=cfg.soft_dedup_linkage,
        seed=cfg.seed,
        progress=progress,
        device=device,
    )
    kept = dedup.pick_one_per_cluster(labels, seed=cfg.seed)
    log.info("soft dedup: %d distinct inferences -> %d clusters, one string kept per cluster", len(strings), k)
    kept_strings = pl.DataFrame(
        {"inference": [strings[i] for i in kept], "cluster": labels[kept]},
        schema={"inference": pl.Utf8, "cluster": pl.Int64},
    )
    pool = corpus.select("instance_id", "inference").join(
        kept_strings, on="inference", how="inner", maintain_order="left"
    )
    pool = dedup.hard_dedup(pool, column="inference", max_copies=cfg.max_verbatim, seed=cfg.seed)
    log.info("hard dedup: pool of %d instances (at most %d copies of a string)", len(pool), cfg.max_verbatim)
    return pool.with_columns(pl.lit(k, dtype=pl.Int64).alias("n_clusters"))


# --- 2. plausibility filter ------------------------------------------------------------------------------------
def plausible_candidates(
    corpus: pl.DataFrame, pool: pl.DataFrame, emb: DualEmbeddings, cfg: ComparisonConfig, *, progress: bool = True
) -> pl.DataFrame:
    """(query_id, candidate_id, plausibility): pool candidates of the same split scoring above the query's gold."""
    pos = {iid: i for i, iid in enumerate(emb.instance_id)}
    missing = [i for i in corpus["instance_id"].to_list()[:5] if i not in pos]
    if missing or len(emb.instance_id) != len(corpus):
        raise ValueError(
            f"comparison: the scorer's embeddings do not cover the corpus (e.g. {missing}); delete "
            "results/comparison/embeddings.parquet and rerun (rule comparison_embed)"
        )
    q_idx = np.array([pos[i] for i in corpus["instance_id"].to_list()], dtype=np.int64)
    split_of = dict(zip(corpus["instance_id"].to_list(), corpus["split"].to_list(), strict=True))
    c_ids = pool["instance_id"].to_list()
    c_idx = np.array([pos[i] for i in c_ids], dtype=np.int64)
    text_codes: dict[str, int] = {}
    q_text = np.array(
        [text_codes.setdefault(t, len(text_codes)) for t in corpus["inference"].to_list()], dtype=np.int64
    )
    c_text = np.array([text_codes.setdefault(t, len(text_codes)) for t in pool["inference"].to_list()], dtype=np.int64)
    split_codes: dict[str, int] = {}
    q_group = np.array([split_codes.setdefault(s, len(split_codes)) for s in corpus["split"].to_list()], dtype=np.int64)
    c_group = np.array([split_codes.setdefault(split_of[i], len(split_codes)) for i in c_ids], dtype=np.int64)
    gold = emb.gold()[q_idx]
    qi, ci, score = candidates_above_gold(
        emb.region[q_idx],
        emb.inference[c_idx],
        gold,
        query_group=q_group,
        cand_group=c_group,
        query_text=q_text,
        cand_text=c_text,
        max_per_query=cfg.max_candidates_per_query,
        progress=progress,
    )
    q_ids = corpus["instance_id"].to_numpy()
    return pl.DataFrame(
        {
            "query_id": q_ids[qi] if len(qi) else np.array([], dtype=str),
            "candidate_id": np.asarray(c_ids, dtype=object)[ci] if len(ci) else np.array([], dtype=str),
            "plausibility": score.astype(np.float64),
        },
        schema={"query_id": pl.Utf8, "candidate_id": pl.Utf8, "plausibility": pl.Float64},
    )


# --- 3. local selection ----------------------------------------------------------------------------------------
def greedy_diverse(plaus: np.ndarray, emb: np.ndarray, k: int, w_plaus: float = 5.0, w_div: float = 1.0) -> list[int]:
    """Indices of k rows picked one at a time maximising w_plaus × plausibility − w_div × max cos to those picked."""
    picked: list[int] = []
    max_sim = np.zeros(len(plaus), dtype=np.float64)
    available = np.ones(len(plaus), dtype=bool)
    for _ in range(min(k, len(plaus))):
        obj = np.where(available, w_plaus * plaus - w_div * max_sim, -np.inf)
        j = int(np.argmax(obj))
        picked.append(j)
        available[j] = False
        max_sim = np.maximum(max_sim, emb @ emb[j]) if picked[1:] else emb @ emb[j]
    return picked


def _unused(
    candidate_ids: list[str], plausibility: list[float], used: set[str], text_of: dict[str, str]
) -> tuple[list[str], list[float]]:
    """A query's candidates not yet in a set, each inference text once (the most plausible first, as given)."""
    ids, pl_ = [], []
    seen_text: set[str] = set()
    for cid, p in zip(candidate_ids, plausibility, strict=True):
        t = text_of[cid]
        if cid in used or t in seen_text:
            continue
        seen_text.add(t)
        ids.append(cid)
        pl_.append(p)
    return ids, pl_


def select_sets(
    candidates: pl.DataFrame,
    pool: pl.DataFrame,
    sbert_by_instance: dict[str, np.ndarray],
    splits: dict[str, str],
    cfg: ComparisonConfig,
    *,
    progress: bool = True,
) -> pl.DataFrame:
    """Greedy diverse sets: per query (seeded random order) `set_size` candidates among those still unused.

    Queries with fewer than `min_candidates` unused candidates are skipped. Within a set the inferences are distinct
    strings; a picked pool instance is disqualified for all later queries.
    """
    text_of = dict(zip(pool["instance_id"].to_list(), pool["inference"].to_list(), strict=True))
    used: set[str] = set()
    grouped = (
        candidates.sort("query_id", "plausibility", descending=[False, True])
        .group_by("query_id", maintain_order=True)
        .agg("candidate_id", "plausibility")
    )
    order = np.random.default_rng(cfg.seed).permutation(len(grouped))
    q_ids = grouped["query_id"].to_list()
    cand_lists = grouped["candidate_id"].to_list()
    plaus_lists = grouped["plausibility"].to_list()
    rows = []
    for gi in tqdm(order, desc="greedy selection", disable=not progress):
        ids, pl_ = _unused(cand_lists[gi], plaus_lists[gi], used, text_of)
        if len(ids) < max(cfg.min_candidates, cfg.set_size):
            continue
        emb = np.stack([sbert_by_instance[c] for c in ids])
        picks = greedy_diverse(np.asarray(pl_), emb, cfg.set_size, cfg.plausibility_weight, cfg.diversity_weight)
        qid = q_ids[gi]
        for r, j in enumerate(picks, start=1):
            used.add(ids[j])
            rows.append(
                {
                    "query_id": qid,
                    "split": splits[qid],
                    "rank": r,
                    "candidate_id": ids[j],
                    "inference": text_of[ids[j]],
                    "plausibility": float(pl_[j]),
                }
            )
    return pl.DataFrame(
        rows,
        schema={
            "query_id": pl.Utf8,
            "split": pl.Utf8,
            "rank": pl.Int64,
            "candidate_id": pl.Utf8,
            "inference": pl.Utf8,
            "plausibility": pl.Float64,
        },
    )


# --- 4. ranking --------------------------------------------------------------------------------------------------
def set_statistics(sets: pl.DataFrame, sbert_by_instance: dict[str, np.ndarray]) -> pl.DataFrame:
    """Per query: split, mean inference length (words), diversity (mean pairwise SBERT cosine), mean plausibility."""
    rows = []
    for (qid,), part in sets.group_by("query_id", maintain_order=True):
        emb = np.stack([sbert_by_instance[c] for c in part["candidate_id"].to_list()])
        sim = emb @ emb.T
        n = len(emb)
        div = float((sim.sum() - np.trace(sim)) / (n * (n - 1))) if n > 1 else 1.0
        rows.append(
            {
                "query_id": qid,
                "split": part["split"][0],
                "length": float(np.mean([len(t.split()) for t in part["inference"].to_list()])),
                "diversity": div,
                "plausibility": float(cast(float, part["plausibility"].mean())),
            }
        )
    return pl.DataFrame(
        rows,
        schema={
            "query_id": pl.Utf8,
            "split": pl.Utf8,
            "length": pl.Float64,
            "diversity": pl.Float64,
            "plausibility": pl.Float64,
        },
    )


def rank_sets(sets: pl.DataFrame, sbert_by_instance: dict[str, np.ndarray], cfg: ComparisonConfig) -> pl.DataFrame:
    """The top `top_n` sets per split by w_len·rank(longer) + w_div·rank(more diverse) + w_pl·rank(more plausible)
    (global ranks, 1 = best); adds `set_rank` (1 = most promising within its split)."""
    if sets.is_empty():
        return sets.with_columns(pl.lit(None, dtype=pl.Int64).alias("set_rank"))
    stats = set_statistics(sets, sbert_by_instance)
    w = {"length": 1.0, "diversity": 1.0, "plausibility": 5.0, **(cfg.rank_weights or {})}
    stats = stats.with_columns(
        (
            w["length"] * pl.col("length").rank("average", descending=True)
            + w["diversity"] * pl.col("diversity").rank("average")
            + w["plausibility"] * pl.col("plausibility").rank("average", descending=True)
        ).alias("score")
    ).sort("score", "query_id")
    stats = stats.with_columns(pl.int_range(1, pl.len() + 1).over("split").alias("set_rank"))
    top = stats.filter(pl.col("set_rank") <= cfg.top_n).select("query_id", pl.col("set_rank").cast(pl.Int64))
    return sets.join(top, on="query_id", how="inner", maintain_order="left").sort("split", "set_rank", "rank")


def build_sets(
    corpus: pl.DataFrame,
    pool: pl.DataFrame,
    emb: DualEmbeddings,
    sbert: np.ndarray,
    cfg: ComparisonConfig,
    *,
    progress: bool = True,
    on_empty: str = "error",
) -> pl.DataFrame:
    """Steps 2–4 on a built pool: schemas.COMPARISON_SETS rows of the top sets per split.

    A pool too small for a single set is an EmptyError saying how far it is from one (unless `on_empty="skip"`).
    """
    cands = plausible_candidates(corpus, pool, emb, cfg, progress=progress)
    log.info(
        "plausibility: %d (query, candidate) pairs above gold for %d queries", len(cands), cands["query_id"].n_unique()
    )
    sbert_by_instance = dict(zip(corpus["instance_id"].to_list(), sbert, strict=True))
    splits = dict(zip(corpus["instance_id"].to_list(), corpus["split"].to_list(), strict=True))
    sets = select_sets(cands, pool, sbert_by_instance, splits, cfg, progress=progress)
    log.info("selection: %d complete sets of %d", sets["query_id"].n_unique() if len(sets) else 0, cfg.set_size)
    if sets.is_empty() and on_empty != "skip":
        from squidflow.errors import EmptyError

        best = (
            int(cast(int, cands.group_by("query_id", maintain_order=True).len()["len"].max()) or 0) if len(cands) else 0
        )
        need = max(cfg.min_candidates, cfg.set_size)
        raise EmptyError(
            f"no comparison set: the pool has {len(pool)} inference(s) for {len(corpus)} queries and the best query has "
            f"{best} candidate(s) more plausible than its gold, fewer than the {need} a set needs "
            f"(comparison.min_candidates = {cfg.min_candidates}, comparison.set_size = {cfg.set_size}). Lower those, "
            "use a bigger corpus (results/comparison/pool.parquet is the pool), or set `on_empty: skip`."
        )
    return rank_sets(sets, sbert_by_instance, cfg)


# --- 5. export: the Likert task ----------------------------------------------------------------------------------
LIKERT = {
    1: "irrelevant or verifiably incorrect",
    2: "statement is probably true but there is a better highlighted region to support it",
    3: "statement is probably true and the highlighted region supports it",
}


def hits_table(sets: pl.DataFrame, corpus: pl.DataFrame) -> pl.DataFrame:
    """One Likert HIT per exported set: the image, its region(s) as JSON, and the inferences with their ids."""
    if sets.is_empty():
        cols = ["query_id", "split", "set_rank", "image", "width", "height", "bboxes"]
        return pl.DataFrame(schema={c: pl.Utf8 for c in cols})
    wide = (
        sets.sort("query_id", "rank")
        .group_by("query_id", maintain_order=True)
        .agg(pl.col("split").first(), pl.col("set_rank").first(), pl.col("candidate_id"), pl.col("inference"))
    )
    info = corpus.filter(pl.col("instance_id").is_in(wide["query_id"].implode())).select(
        pl.col("instance_id").alias("query_id"), "image", "width", "height", "bboxes"
    )
    info = info.with_columns(pl.Series("bboxes", [json.dumps(b) for b in info["bboxes"].to_list()], dtype=pl.Utf8))
    df = wide.join(info, on="query_id", how="left", maintain_order="left").sort("split", "set_rank")
    n = int(cast(int, df["candidate_id"].list.len().max()))
    return df.with_columns(
        *[pl.col("inference").list.get(i, null_on_oob=True).alias(f"inference_{i + 1}") for i in range(n)],
        *[pl.col("candidate_id").list.get(i, null_on_oob=True).alias(f"candidate_id_{i + 1}") for i in range(n)],
    ).drop("inference", "candidate_id")


def _image_src(image: str, html_dir: str | Path | None) -> str:
    """URLs as they are; local paths relative to the page's folder so the page opens from disk."""
    if "://" in image or html_dir is None:
        return image
    from squidflow.contracts.paths import job_file  # the image where this job sees it, as the page is (object storage)

    return os.path.relpath(os.path.abspath(job_file(image)), os.path.abspath(html_dir))


def hits_html(hits: pl.DataFrame, *, max_hits: int | None = 20, html_dir: str | Path | None = None) -> str:
    """A self-contained task page: each image with its region highlighted as Sherlock drew it, and a 1–3 scale.
    `html_dir`: the folder the page is written to (local image paths are made relative to it)."""
    template = resources.files("squidflow").joinpath("templates/comparison_hit.html").read_text(encoding="utf-8")
    rows = hits.head(max_hits).to_dicts() if max_hits else hits.to_dicts()
    blocks = []
    for h in rows:
        boxes = json.loads(h["bboxes"]) if h.get("bboxes") else []
        w, hgt = float(h["width"] or 1), float(h["height"] or 1)
        regions = "".join(  # numbers only (float() refuses anything else): the style attribute cannot carry markup
            f'<div class="region" style="left:{100 * float(b["left"]) / w:.3f}%;top:{100 * float(b["top"]) / hgt:.3f}%;'
            f'width:{100 * float(b["width"]) / w:.3f}%;height:{100 * float(b["height"]) / hgt:.3f}%"></div>'
            for b in boxes
        )
        items = []
        for i in range(1, 100):
            key = f"inference_{i}"
            if key not in h or h[key] is None:
                break
            name = f"{h['query_id']}__{h[f'candidate_id_{i}']}"
            scale = "".join(
                f'<label title="{html.escape(LIKERT[v])}"><input type="radio" name="{html.escape(name)}" value="{v}" '
                f"required> {v}</label>"
                for v in (1, 2, 3)
            )
            items.append(
                f'<li><span class="inference">{html.escape(h[key])}</span><span class="scale">{scale}</span></li>'
            )
        blocks.append(
            f'<section class="hit" data-query="{html.escape(h["query_id"])}"><div class="frame">'
            f'<img src="{html.escape(_image_src(h["image"], html_dir))}" alt="image {html.escape(h["query_id"])}">{regions}</div>'
            f"<ol>{''.join(items)}</ol></section>"
        )
    scale_text = "".join(f"<li><b>{k}</b>: {html.escape(v)}</li>" for k, v in LIKERT.items())
    return template.replace("{{SCALE}}", scale_text).replace("{{HITS}}", "\n".join(blocks))
