"""Comparison sets (Sherlock §4.3, Appendix E): corpora, scorers, filters, selection, export — on real data and tools."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from helpers.floats import assert_floats_close, float_tolerance
from helpers.test_cache import cached_run
from PIL import Image

from squidflow.comparison import corpus as sherlock
from squidflow.comparison import dedup, plausibility
from squidflow.comparison import sets as comparison
from squidflow.contracts import io, schemas
from squidflow.encoders import clip, text_embed
from squidflow.errors import EmptyError

ROOT = Path(__file__).resolve().parents[3]
SHERLOCK_ZIP = "sherlock/sherlock_val_with_split_idxs_v1_1.json.zip"


@pytest.fixture(scope="session")
def sherlock_instances(shared_data: Path) -> list[dict]:
    return sherlock.read_sherlock_json(shared_data / SHERLOCK_ZIP)


@pytest.fixture(scope="session")
def real_image(tmp_path_factory) -> Path:
    """A real JPEG decoded by ffmpeg from its test source (320×240, wide)."""
    out = tmp_path_factory.mktemp("img") / "frame.jpg"
    subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "testsrc=size=320x240:rate=1",
            "-frames:v",
            "1",
            "-q:v",
            "2",
            str(out),
        ],
        check=True,
    )
    return out


# --- corpus ------------------------------------------------------------------------------------------------------
def test_sherlock_loader_reads_every_instance(shared_data: Path) -> None:
    corpus = sherlock.load_sherlock(shared_data / SHERLOCK_ZIP)
    io.conform(corpus, schemas.COMPARISON_CORPUS)
    assert len(corpus) == 22737
    assert corpus["instance_id"].n_unique() == 22737
    assert sorted(corpus["chunk"].unique().to_list()) == list(range(23))
    assert corpus["inference"].n_unique() == 19209
    assert set(corpus["confidence"].unique().to_list()) == {1.0, 2.0, 3.0}
    assert corpus["bboxes"].list.len().min() >= 1
    assert (corpus["split"] == "val").all()


def test_sherlock_loader_names_the_bad_instance(tmp_path: Path, sherlock_instances: list[dict]) -> None:
    bad = [sherlock_instances[0], {"instance_id": "broken", "inputs": {"clue": "x"}}]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match=r"instance #1 \(broken\)"):
        sherlock.load_sherlock(path)


def test_frames_corpus_from_frames_and_video_text(tmp_path: Path, real_image: Path) -> None:
    frames = pl.DataFrame(
        {
            "image_id": ["v1_0", "v1_5", "v2_3"],
            "video_id": ["v1", "v1", "v2"],
            "frame_index": [0, 5, 3],
            "image_path": [str(real_image)] * 3,
            "split": ["train", "val", "val"],
        }
    )
    videos = pl.DataFrame(
        {
            "video_id": ["v1", "v2", "v3"],
            "status": ["ok", "ok", "failed"],
            "title": ["Street parade downtown", "", "x"],
            "description": [
                "A band marches past. People line the street to watch. Ok.",
                "Guests dance at the reception. The couple cuts the cake.",
                "Never used here at all.",
            ],
            "tags": [["parade"], ["wedding", "reception"], []],
        }
    )
    corpus = sherlock.frames_corpus(frames, videos)
    io.conform(corpus, schemas.COMPARISON_CORPUS)
    assert len(corpus) == 2 * 2 + 2  # "Ok." is too short to be an inference
    v2 = corpus.filter(pl.col("image_id") == "v2_3")
    assert v2["clue"].unique().to_list() == ["wedding, reception"]  # empty title -> tags
    assert v2["bboxes"][0].to_list() == [{"left": 0.0, "top": 0.0, "width": 320.0, "height": 240.0}]
    assert corpus["chunk"].null_count() == 0


# --- scorers -----------------------------------------------------------------------------------------------------
def test_region_is_drawn_as_sherlock_does(real_image: Path) -> None:
    with Image.open(real_image) as im:
        orig = np.asarray(im.convert("RGB")).astype(float)
        drawn = np.asarray(plausibility.draw_region(im, [{"left": 100, "top": 50, "width": 80, "height": 60}])).astype(
            float
        )
    inside = (drawn[80, 140], orig[80, 140])
    expected = inside[1] * (1 - 60 / 255) + np.array([255, 5, 205]) * 60 / 255
    assert np.abs(inside[0] - expected).max() <= 1.5  # magenta at alpha 60/255 over the image
    for y, x in [(50, 140), (52, 140), (80, 100), (80, 102), (110, 140), (80, 180)]:
        assert np.abs(drawn[y, x] - [5, 255, 55]).max() <= 1, (y, x)  # 3-px opaque green outline
    assert np.abs(drawn[80, 140] - [5, 255, 55]).max() > 50  # the inside is not outline
    assert np.array_equal(drawn[10, 10], orig[10, 10]) and np.array_equal(drawn[200, 300], orig[200, 300])
    assert np.abs(drawn[80, 103] - [5, 255, 55]).max() > 50  # the outline is 3 pixels wide, not 4


def test_wide_and_tall_images_become_two_overlapping_squares(real_image: Path) -> None:
    with Image.open(real_image) as im:
        crops = plausibility.widescreen_crops(im)
        assert [c.size for c in crops] == [(240, 240), (240, 240)]
        assert np.array_equal(np.asarray(crops[0])[:, 80:], np.asarray(crops[1])[:, :160])  # they overlap
        tall = plausibility.widescreen_crops(im.rotate(90, expand=True))
        assert [c.size for c in tall] == [(240, 240), (240, 240)]
        assert len(plausibility.widescreen_crops(im.crop((0, 0, 240, 240)))) == 1


def test_clip_without_weights_fails_naming_model_tag_and_cache(tmp_path: Path) -> None:
    with pytest.raises(clip.ClipWeightsUnavailable) as err:
        clip.load_clip("RN50x16", "openai", cache_dir=str(tmp_path / "clip-cache"))
    msg = str(err.value)
    assert "RN50x16" in msg and "openai" in msg and "clip-cache" in msg and "scorer: text" in msg


def test_blocked_candidates_equal_the_dense_computation() -> None:
    rng = np.random.default_rng(0)
    r = rng.normal(size=(57, 16)).astype(np.float32)
    c = rng.normal(size=(83, 16)).astype(np.float32)
    gold = rng.normal(size=57).astype(np.float32)
    qg, cg = rng.integers(0, 2, 57), rng.integers(0, 2, 83)
    qt, ct = rng.integers(0, 20, 57), rng.integers(0, 20, 83)
    qi, ci, s = plausibility.candidates_above_gold(
        r, c, gold, query_group=qg, cand_group=cg, query_text=qt, cand_text=ct, max_per_query=1000, block=8
    )
    # the reference in float64; Σ|term| of each product bounds the float32 rounding of either computation
    dense = r.astype(np.float64) @ c.T.astype(np.float64)
    scale = np.abs(r).astype(np.float64) @ np.abs(c).T.astype(np.float64)
    near = np.abs(dense - gold[:, None]) <= float_tolerance(np.float32, r.shape[1], scale)  # rounding decides these
    want = (dense > gold[:, None]) & (qg[:, None] == cg[None, :]) & (qt[:, None] != ct[None, :])
    got = np.zeros_like(want)
    got[qi, ci] = True
    assert np.array_equal(got[~near], want[~near])
    assert_floats_close(s, dense[qi, ci], dtype=np.float32, terms=r.shape[1], scale=scale[qi, ci])
    # capping keeps the most plausible per query
    qi2, ci2, s2 = plausibility.candidates_above_gold(r, c, gold, max_per_query=3, block=10)
    for q in range(57):
        if near[q].any():
            continue  # which candidates count as above gold is float32 rounding's choice for this query
        above = np.sort(dense[q][dense[q] > gold[q]])[::-1][:3]
        assert_floats_close(
            np.sort(s2[qi2 == q])[::-1],
            above,
            dtype=np.float32,
            terms=r.shape[1],
            scale=np.sort(scale[q])[::-1][:3].max(initial=0.0),
            what=f"query {q}",
        )


def test_token_count_batches_give_sentence_transformers_vectors_in_input_order() -> None:
    """encode() batches by exact token count (longest first, within a token budget) yet returns what
    SentenceTransformer.encode returns, row for row: texts of many lengths, duplicates, an empty string, and a
    budget so small that texts of one length span several batches."""
    words = "the man in the red coat is waiting for a late train while his dog sleeps under the wooden bench".split()
    texts = [" ".join(words[: 1 + (k * 7) % len(words)]) for k in range(40)] + ["", "The man", "the man", words[0]]
    lengths = text_embed.token_lengths(texts)
    assert lengths[texts.index("")] == 2 and lengths[texts.index("the man")] == 4  # [CLS] ... [SEP]
    assert len(set(lengths.tolist())) > 10
    model = text_embed.load_sbert()
    ref = model.encode(texts, batch_size=7, convert_to_numpy=True, normalize_embeddings=True)
    masks = []
    hook = model[0].register_forward_pre_hook(lambda _mod, args: masks.append(args[0]["attention_mask"].clone()))
    try:
        for budget in (20, 8192):
            masks.clear()
            got = text_embed.encode(texts, batch_size=5, max_batch_tokens=budget)
            assert got.shape == (len(texts), text_embed.SBERT_DIM) and got.dtype == np.float32
            assert np.min(np.sum(got * ref, axis=1)) > 1 - 1e-5
            seen = np.concatenate([m.sum(dim=1).numpy() for m in masks])  # each row's token count, in call order
            assert np.array_equal(seen, np.sort(lengths)[::-1])  # sorted by tokens: padding only where lengths change
            assert all(m.numel() <= budget for m in masks if len(m) > 1) and max(len(m) for m in masks) <= 5
    finally:
        hook.remove()
    assert text_embed.encode([]).shape == (0, text_embed.SBERT_DIM)


def test_probe_learns_an_image_text_alignment() -> None:
    """InfoNCE heads on frozen features: image features that carry the text's meaning are matched to it."""
    texts = [
        f"{a} {b} near the {c}"
        for a in ("a dog", "two children", "an old man", "a chef")
        for b in ("is running", "is sleeping", "is eating")
        for c in ("river", "kitchen", "station")
    ]
    txt = text_embed.encode(texts)
    rng = np.random.default_rng(0)
    img = txt @ rng.normal(size=(txt.shape[1], 64)).astype(np.float32) + 0.05 * rng.normal(size=(len(texts), 64))
    n = len(texts)
    split = np.where(np.arange(n) % 4 == 0, "val", "train")
    corpus = pl.DataFrame(
        {
            "instance_id": [f"i{k}" for k in range(n)],
            "image_id": [f"v_{k}" for k in range(n)],
            "inference": texts,
            "split": split,
        }
    )
    feats = pl.DataFrame({"video_id": ["v"] * n, "frame_index": list(range(n)), "feature": img.astype(np.float32)})
    emb = plausibility.probe_scorer(
        corpus, feats, cfg=plausibility.ProbeConfig(dim=32, epochs=150, batch_size=32), encode=text_embed.encode
    )
    val = split == "val"
    s = emb.region[val] @ emb.inference[val].T
    p_at_1 = np.mean(np.argmax(s, axis=1) == np.arange(val.sum()))
    assert p_at_1 > 0.5  # chance is 1/9 on the 9 held-out instances


# --- global filters ----------------------------------------------------------------------------------------------
def test_cut_gives_exactly_k_clusters_even_with_duplicates() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 8))
    x = np.concatenate([x, x[:20]])  # 20 exact duplicates merge at height 0
    for k in (1, 7, 40, 56, 70):
        assert len(np.unique(dedup.agglomerative_labels(x, k))) == k


def test_partitioned_soft_dedup_keeps_the_count_and_agrees_with_exact() -> None:
    rng = np.random.default_rng(1)
    centers = rng.normal(size=(300, 32))
    x = (centers[rng.integers(0, 300, 3000)] + 0.05 * rng.normal(size=(3000, 32))).astype(np.float32)
    k = dedup.n_soft_clusters(3000)
    exact = dedup.soft_dedup_labels(x, 300, exact_max=5000, progress=False)
    parted = dedup.soft_dedup_labels(x, 300, exact_max=800, progress=False)
    assert len(np.unique(parted)) == 300 and len(np.unique(exact)) == 300
    assert dedup.adjusted_rand_index(exact, parted) > 0.9
    assert len(np.unique(dedup.soft_dedup_labels(x, k, exact_max=700, progress=False))) == k == 2400


def test_hard_dedup_keeps_at_most_three_copies() -> None:
    df = pl.DataFrame({"instance_id": [str(i) for i in range(9)], "inference": list("aaaaabbcd")})
    out = dedup.hard_dedup(df, max_copies=3)
    assert out.group_by("inference").len().sort("inference")["len"].to_list() == [3, 2, 1, 1]


def test_adjusted_rand_index_hand_cases() -> None:
    assert dedup.adjusted_rand_index([0, 0, 1, 1], [5, 5, 2, 2]) == 1.0
    assert dedup.adjusted_rand_index([0, 0, 1, 1], [0, 1, 0, 1]) == pytest.approx(-0.5)


# --- local selection ---------------------------------------------------------------------------------------------
def test_greedy_trades_plausibility_for_diversity() -> None:
    emb = np.array([[1, 0], [1, 0], [0, 1.0]])
    plaus = np.array([0.50, 0.49, 0.40])
    # after picking 0: 1 scores 5×.49 − 1 = 1.45, 2 scores 5×.40 − 0 = 2.0 -> the diverse one
    assert comparison.greedy_diverse(plaus, emb, 2) == [0, 2]
    assert comparison.greedy_diverse(plaus, emb, 2, w_div=0.0) == [0, 1]


# --- Sherlock acceptance on the real validation file -------------------------------------------------------------
@pytest.fixture(scope="session")
def sherlock_built(shared_data: Path, tmp_path_factory):
    """The whole construction on the 22,737 validation instances, once per session. SBERT-encoding its ~40K distinct
    clues and inferences takes ~75 s on 2 idle cores, so the embeddings are kept between sessions in .test-cache/sbert/
    under a key of what makes them (the encoder's code, the lock files with the packaged model's version, the data's
    file list: tests/helpers/test_cache.py); SQUIDFLOW_TEST_SBERT_CACHE=<file.parquet> names another file. The
    construction itself then takes ~45 s."""
    corpus = sherlock.load_sherlock(shared_data / SHERLOCK_ZIP)
    cache = os.environ.get("SQUIDFLOW_TEST_SBERT_CACHE") or cached_run(
        "sbert",
        lambda folder: folder / "sbert.parquet",
        lambda folder: folder / "sbert.parquet",
        inputs=("src/squidflow/encoders", "src/squidflow/comparison/plausibility.py", "requirements.lock"),
    )
    emb = plausibility.text_scorer(corpus, encode=plausibility.sbert_encoder(cache))
    cfg = comparison.ComparisonConfig()
    pool = comparison.build_pool(corpus, emb.inference, cfg, progress=False)
    sets = comparison.build_sets(corpus, pool, emb, emb.inference, cfg, progress=False)
    return corpus, pool, sets, emb


@pytest.mark.slow
def test_sherlock_pool_soft_and_hard_dedup(sherlock_built) -> None:
    corpus, pool, _, _ = sherlock_built
    io.conform(pool, schemas.COMPARISON_POOL)
    n = corpus["inference"].n_unique()
    assert pool["n_clusters"][0] == round(0.8 * n) == 15367
    assert pool["cluster"].n_unique() == round(0.8 * n)  # one string per cluster survives
    assert pool.group_by("inference").len()["len"].max() <= 3
    assert pool.group_by("cluster").agg(pl.col("inference").n_unique())["inference"].max() == 1


@pytest.mark.slow
def test_sherlock_sets_are_plausible_distinct_hard_negatives(sherlock_built) -> None:
    corpus, pool, sets, emb = sherlock_built
    io.conform(sets, schemas.COMPARISON_SETS)
    per = sets.group_by("query_id").agg(
        pl.len(), pl.col("inference").n_unique().alias("distinct"), pl.col("rank").sort().alias("ranks")
    )
    assert len(per) == 500  # top 500 of the single (val) split
    assert (per["len"] == 10).all() and (per["distinct"] == 10).all()
    assert all(r == list(range(1, 11)) for r in per["ranks"].to_list())
    own = corpus.select(pl.col("instance_id").alias("query_id"), pl.col("inference").alias("own"))
    assert sets.join(own, on="query_id").filter(pl.col("inference") == pl.col("own")).is_empty()
    # every candidate comes from the pool, scores above the query's gold, and is used at most once
    assert sets["candidate_id"].is_in(pool["instance_id"].implode()).all()
    assert sets["candidate_id"].n_unique() == len(sets)
    pos = {iid: i for i, iid in enumerate(emb.instance_id)}
    gold = emb.gold()
    q = np.array([pos[i] for i in sets["query_id"].to_list()])
    assert (sets["plausibility"].to_numpy() > gold[q]).all()
    assert sets.group_by("inference").len()["len"].max() <= 3
    assert sorted(sets["set_rank"].unique().to_list()) == list(range(1, 501))


@pytest.mark.slow
def test_sherlock_hits_and_html(sherlock_built, tmp_path: Path) -> None:
    corpus, _, sets, _ = sherlock_built
    hits = comparison.hits_table(sets, corpus)
    assert len(hits) == 500 and hits["inference_10"].null_count() == 0
    assert json.loads(hits["bboxes"][0])[0].keys() == {"left", "top", "width", "height"}
    page = comparison.hits_html(hits, max_hits=3)
    assert page.count('class="hit"') == 3 and page.count('type="radio"') == 3 * 10 * 3
    assert "the highlighted region supports it" in page and "verifiably incorrect" in page
    assert "rgba(255, 5, 205" in page


# --- the rules, end to end on a Sherlock subset ------------------------------------------------------------------
@pytest.mark.slow
def test_rules_build_the_stage_on_a_sherlock_subset(tmp_path: Path, sherlock_instances: list[dict]) -> None:
    chunk = [i for i in sherlock_instances if i["split_idx"] == 0][:300]
    chunk += [i for i in sherlock_instances if i["split_idx"] == 1][:300]
    (tmp_path / "sub.json").write_text(json.dumps(chunk))
    snakemake = str(Path(sys.executable).with_name("snakemake"))
    res = subprocess.run(
        [
            snakemake,
            "--directory",
            str(tmp_path),
            "--configfile",
            str(ROOT / "config" / "sherlock.yaml"),
            "--config",
            f"sherlock={{annotations: {tmp_path / 'sub.json'}, split: val}}",
            "--cores",
            "2",
            "--quiet",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    r = tmp_path / "results"
    corpus = io.read_parquet(r / "comparison" / "corpus.parquet", schemas.COMPARISON_CORPUS)
    pool = io.read_parquet(r / "comparison" / "pool.parquet", schemas.COMPARISON_POOL)
    sets = io.read_parquet(r / "comparison" / "sets.parquet", schemas.COMPARISON_SETS)
    assert len(corpus) == 600
    assert pool["cluster"].n_unique() == round(0.8 * corpus["inference"].n_unique())
    assert len(sets) and (sets.group_by("query_id").len()["len"] == 10).all()
    hits = pl.read_csv(r / "annotation" / "comparison_hits.csv")
    assert len(hits) == sets["query_id"].n_unique()
    metrics = json.loads((r / "comparison" / "metrics.json").read_text())
    assert metrics["retrieval"]["n_chunks"] == 2 and 1 <= metrics["retrieval"]["im2txt"] <= 300
    assert 0 <= metrics["localization"]["gt_boxes"] <= 100
    assert (tmp_path / "results" / "comparison" / "cache" / "sbert.parquet").exists()


def test_small_frames_corpus_through_every_step(tmp_path: Path, real_image: Path) -> None:
    """Our own frames: corpus -> text scorer -> pool -> sets -> HITs page whose images resolve from its folder."""
    events = {
        "parade": [
            "A marching band plays drums on the main street.",
            "Floats decorated with flowers roll past.",
            "Children wave small flags from the sidewalk.",
            "A clown juggles in front of the crowd.",
        ],
        "wedding": [
            "The bride walks down the aisle with her father.",
            "Guests throw rice as the couple leaves.",
            "A string quartet plays during the ceremony.",
            "The couple cuts a tall white cake.",
        ],
        "protest": [
            "Demonstrators hold handwritten signs above their heads.",
            "Police officers stand in a line.",
            "A speaker shouts into a megaphone.",
            "Marchers chant slogans near city hall.",
        ],
    }
    img_dir = tmp_path / "results" / "dataset" / "images"
    img_dir.mkdir(parents=True)
    frames, videos = [], []
    for e, sents in events.items():
        videos.append(
            {"video_id": e, "status": "ok", "title": f"{e} video", "description": " ".join(sents), "tags": [e]}
        )
        for f in range(4):
            path = img_dir / f"{e}_{f}.jpg"
            path.write_bytes(real_image.read_bytes())
            frames.append(
                {"image_id": f"{e}_{f}", "video_id": e, "frame_index": f, "image_path": str(path), "split": "val"}
            )
    corpus = sherlock.frames_corpus(pl.DataFrame(frames), pl.DataFrame(videos))
    assert len(corpus) == 3 * 4 * 4
    emb = plausibility.text_scorer(corpus, encode=text_embed.encode)
    cfg = comparison.ComparisonConfig(min_candidates=3, set_size=3, top_n=5)
    pool = comparison.build_pool(corpus, emb.inference, cfg, progress=False)
    assert pool["cluster"].n_unique() == round(0.8 * 12)
    assert pool.group_by("inference").len()["len"].max() <= 3
    sets = comparison.build_sets(corpus, pool, emb, emb.inference, cfg, progress=False)
    io.conform(sets, schemas.COMPARISON_SETS)
    assert 1 <= sets["query_id"].n_unique() <= 5
    own = dict(zip(corpus["instance_id"].to_list(), corpus["inference"].to_list(), strict=True))
    assert all(own[q] != t for q, t in zip(sets["query_id"].to_list(), sets["inference"].to_list(), strict=True))
    hits = comparison.hits_table(sets, corpus)
    page_dir = tmp_path / "results" / "annotation"
    page = comparison.hits_html(hits, html_dir=str(page_dir))
    src = page.split('<img src="', 1)[1].split('"', 1)[0]
    assert not Path(src).is_absolute() and (page_dir / src).resolve().exists()


def test_an_empty_corpus_gives_empty_outputs_not_a_crash() -> None:
    corpus = pl.DataFrame(schema={**schemas.COMPARISON_CORPUS.columns})
    emb = plausibility.DualEmbeddings([], np.zeros((0, 4), np.float32), np.zeros((0, 4), np.float32))
    cfg = comparison.ComparisonConfig()
    pool = comparison.build_pool(corpus, emb.inference, cfg, progress=False)
    with pytest.raises(EmptyError, match="no comparison set"):  # said where it happens (on_empty: error)
        comparison.build_sets(corpus, pool, emb, emb.inference, cfg, progress=False)
    sets = comparison.build_sets(corpus, pool, emb, emb.inference, cfg, progress=False, on_empty="skip")
    assert pool.is_empty() and sets.is_empty()
    io.conform(sets, schemas.COMPARISON_SETS)
    assert comparison.hits_table(sets, corpus).is_empty()
