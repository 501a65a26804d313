"""squidflow's Sherlock metrics against the leaderboard's own scorers, on the same scores (Sherlock §4.1–4.3).

The official scripts (tests/official_sherlock/, unchanged from allenai/sherlock `leaderboard_eval/`) read a float32
`.npy` of scores, its instance ids and an answer key. For each scorer below we write squidflow's scores of the real
Sherlock validation corpus in those formats, run each script's `main()` as the leaderboard does, capture what it
computes (its local variables at return, full precision) and what it prints, and require every number to equal
squidflow's `evaluate()`: random scores, a constant scorer, integer-valued scores (many ties), and a scorer that
cannot tell apart two instances drawn on the same box.
"""

from __future__ import annotations

import contextlib
import hashlib
import io as stdio
import json
import runpy
import subprocess
import sys
import unittest.mock
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from squidflow.comparison import corpus as sherlock
from squidflow.comparison.metrics_sherlock import assignment_accuracy
from squidflow.comparison.metrics_sherlock.report import (
    evaluate,
    gt_box_scores,
    image_groups,
    proposal_scores,
    rated_sets,
)
from squidflow.comparison.metrics_sherlock.retrieval import chunk_scores
from squidflow.comparison.plausibility import DualEmbeddings
from squidflow.contracts import io, schemas

ROOT = Path(__file__).resolve().parents[3]
OFFICIAL = ROOT / "tests" / "official_sherlock"
SHERLOCK_ZIP = "sherlock/sherlock_val_with_split_idxs_v1_1.json.zip"
UPSTREAM_BLOBS = {  # git blob ids at allenai/sherlock 6802669760582d533dbb815eef1adbd83065ba7b
    "score_retrieval.py": "e4e2321e26b168726a2eae139569ba8a4e794b01",
    "score_localization.py": "1afac2d88883bf263d003afa6465c60561d5ea56",
    "score_comparison.py": "eaf8fa5ca39632067ec443ea2dcf9050a21b82ca",
    "CODE_LICENSE": "261eeb9e9f8b2b4b0d119366dda99c6fd7d35c64",
}
SCORERS = ("random", "constant", "integer", "same_box")
BOX_KEYS = ("left", "top", "width", "height")


# --- running the official scripts -----------------------------------------------------------------------------------
def run_official(script: str, *args: object) -> tuple[dict, str]:
    """Run tests/official_sherlock/<script> as `python <script> args...`; return main()'s locals and its stdout."""
    path = str(OFFICIAL / script)
    captured: dict = {}

    def keep_main_locals(frame, event, _arg):
        if event == "return" and frame.f_code.co_name == "main" and frame.f_code.co_filename == path:
            captured.update(frame.f_locals)

    state, out = np.random.get_state(), stdio.StringIO()
    sys.setprofile(keep_main_locals)
    try:
        with contextlib.redirect_stdout(out), unittest.mock.patch.object(sys, "argv", [path, *map(str, args)]):
            runpy.run_path(path, run_name="__main__")
    finally:
        sys.setprofile(None)
        np.random.set_state(state)
    assert captured, f"{script}: main() did not run"
    return captured, out.getvalue()


def submission(folder: Path, name: str, predictions: dict[str, float], answer_key: dict) -> list[str]:
    """The leaderboard's files for one task: <name>.npy (float32, sorted test ids), its instance ids, the answer key;
    returns the scorer's command-line arguments."""
    ids = sorted(predictions)
    np.save(folder / f"{name}.npy", np.array([predictions[k] for k in ids], dtype=np.float32))
    (folder / f"{name}_instance_ids.json").write_text(json.dumps(ids))
    (folder / f"{name}_answer_key.json").write_text(json.dumps(answer_key))
    return [
        str(folder / f"{name}.npy"),
        str(folder / f"{name}_answer_key.json"),
        "--instance_ids",
        str(folder / f"{name}_instance_ids.json"),
    ]


# --- the same scores for both ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def corpus(shared_data: Path) -> pl.DataFrame:
    return sherlock.load_sherlock(shared_data / SHERLOCK_ZIP)


def _box_vectors(keys: list[str], dim: int) -> np.ndarray:
    """Small integer vectors that depend only on the key: equal keys, equal vectors."""
    return np.array(
        [np.random.default_rng(int(hashlib.sha1(k.encode()).hexdigest()[:8], 16)).integers(0, 3, dim) for k in keys],
        dtype=np.float32,
    )


def embeddings(corpus: pl.DataFrame, scorer: str, seed: int = 0) -> DualEmbeddings:
    """Unit-free dual-encoder vectors per corpus instance (corpus order) for one kind of scorer."""
    n, rng = len(corpus), np.random.default_rng(seed)
    if scorer == "random":
        region, inference = rng.normal(size=(n, 16)), rng.normal(size=(n, 16))
    elif scorer == "constant":  # every score exactly 1.0
        region, inference = np.ones((n, 1)), np.ones((n, 1))
    elif scorer == "integer":  # scores 0..8: most rows and columns hold ties
        region, inference = rng.integers(0, 3, (n, 2)), rng.integers(0, 3, (n, 2))
    elif scorer == "same_box":  # the region vector is a function of the image and box: shared boxes tie exactly
        keys = [f"{i}|{b}" for i, b in zip(corpus["image_id"].to_list(), corpus["bboxes"].to_list(), strict=True)]
        region, inference = _box_vectors(keys, 2), rng.integers(0, 3, (n, 2))
    else:
        raise ValueError(scorer)
    return DualEmbeddings(
        corpus["instance_id"].to_list(), np.asarray(region, np.float32), np.asarray(inference, np.float32)
    )


def proposals_for(corpus: pl.DataFrame, scorer: str, every: int = 7, seed: int = 0) -> pl.DataFrame:
    """Box proposals for every `every`-th image: a jittered copy of each instance's first box (IoU around 0.5, on
    both sides) and three random boxes, each with a region vector of the scorer's kind."""
    rng = np.random.default_rng(seed)
    rows = []
    first = corpus.select("image_id", "width", "height", "bboxes").with_row_index("_row")
    for k, (image_id, idx) in enumerate(image_groups(corpus)):
        if k % every:
            continue
        w, h = first["width"][int(idx[0])], first["height"][int(idx[0])]
        for r in idx:
            b = first["bboxes"][int(r)][0]
            dx, dy = rng.uniform(-0.35, 0.35, 2) * (b["width"], b["height"])
            rows.append({"image_id": image_id, "box": {**b, "left": b["left"] + dx, "top": b["top"] + dy}})
        for _ in range(3):
            x, y = rng.uniform(0, w * 0.7), rng.uniform(0, h * 0.7)
            rows.append(
                {
                    "image_id": image_id,
                    "box": {"left": x, "top": y, "width": rng.uniform(10, w - x), "height": rng.uniform(10, h - y)},
                }
            )
    n = len(rows)
    if scorer == "random":
        region = rng.normal(size=(n, 16))
    elif scorer == "constant":
        region = np.ones((n, 1))
    elif scorer == "integer":
        region = rng.integers(0, 3, (n, 2))
    else:
        region = _box_vectors([f"{r['image_id']}|{r['box']}" for r in rows], 2)
    region = np.asarray(region, np.float32)
    return pl.DataFrame(
        {"image_id": [r["image_id"] for r in rows], "box": [r["box"] for r in rows], "region": region},
        schema={
            "image_id": pl.Utf8,
            "box": pl.Struct({k: pl.Float64 for k in BOX_KEYS}),
            "region": pl.Array(pl.Float32, region.shape[1]),
        },
    )


def ratings_for(corpus: pl.DataFrame, n_sets: int = 400, seed: int = 0) -> pl.DataFrame:
    """Likert ratings (1–3) of comparison sets of 2–10 candidates from the corpus; two annotators who mostly agree,
    some sets where they rate everything alike (no informative pair)."""
    rng = np.random.default_rng(seed)
    ids = corpus["instance_id"].to_list()
    rows = []
    for q in rng.choice(len(ids), n_sets, replace=False):
        size = int(rng.integers(2, 11))
        cands = [c for c in rng.choice(len(ids), size + 1, replace=False) if c != q][:size]
        a1 = rng.integers(1, 4, size) if rng.random() > 0.1 else np.full(size, 2)
        a2 = np.clip(a1 + rng.integers(-1, 2, size) * (rng.random(size) < 0.4), 1, 3)
        rows += [
            {"query_id": ids[q], "candidate_id": ids[c], "annot1": int(x), "annot2": int(y)}
            for c, x, y in zip(cands, a1, a2, strict=True)
        ]
    return pl.DataFrame(rows)


# --- the leaderboard formats ----------------------------------------------------------------------------------------
def localization_files(folder: Path, corpus: pl.DataFrame, emb: DualEmbeddings, proposals: pl.DataFrame) -> list[str]:
    """val_localization: per image, an entry for every (box, inference) pair ('gt', box i = instance i's region) and
    for every (proposal, inference) pair ('auto', with the proposal's IoU)."""
    key, pred = {}, {}
    for image_id, rows, s in gt_box_scores(corpus, emb.region, emb.inference):
        ids = [emb.instance_id[r] for r in rows]
        for b in range(len(rows)):
            for j, inst in enumerate(ids):
                tid = f"g{len(key):07d}"
                key[tid] = {"image": image_id, "inst_id": inst, "bbox_idx": b, "correct": b == j, "type": "gt"}
                pred[tid] = s[b, j]
    for image_id, instances in proposal_scores(corpus, emb.inference, proposals):
        for inst, scores, ious in instances:
            for score, iou in zip(scores, ious, strict=True):
                tid = f"a{len(key):07d}"
                key[tid] = {"image": image_id, "inst_id": inst, "type": "auto", "IoU": float(iou)}
                pred[tid] = score
    return submission(folder, "localization", pred, key)


def retrieval_files(folder: Path, chunk: int, rows: np.ndarray, s: np.ndarray, ids: list[str]) -> list[str]:
    """val_retrieval_<chunk>: an entry for every (image+region, inference) pair of the chunk."""
    key, pred = {}, {}
    for i, a in enumerate(rows):
        for j, b in enumerate(rows):
            tid = f"r{len(key):07d}"
            key[tid] = [ids[a], ids[b]]
            pred[tid] = s[i, j]
    return submission(folder, f"retrieval_{chunk}", pred, key)


def comparison_files(folder: Path, sets: list) -> list[str]:
    """val_comparison: the test-id map of every (query, candidate) and the annotations of every set."""
    id_map, pred, annotations = {}, {}, []
    for qid, cand_ids, scores, a1, a2 in sets:
        for c, score in zip(cand_ids, scores, strict=True):
            tid = f"c{len(id_map):07d}"
            id_map[tid] = {"Input_iid": qid, "candidate": c}
            pred[tid] = score
        annotations.append(
            {
                "Input_iid": qid,
                "candidates": [
                    {"source_iid": c, "annot1": float(x), "annot2": float(y)}
                    for c, x, y in zip(cand_ids, a1, a2, strict=True)
                ],
            }
        )
    return submission(folder, "comparison", pred, {"test_id_map": id_map, "annotations": annotations})


# --- tests ----------------------------------------------------------------------------------------------------------
def test_vendored_scorers_are_the_upstream_files_unchanged() -> None:
    for name, blob in UPSTREAM_BLOBS.items():
        data = (OFFICIAL / name).read_bytes()
        assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob, f"{name} differs from upstream"


@pytest.mark.parametrize("scorer", SCORERS)
def test_localization_equals_the_leaderboard(tmp_path: Path, corpus: pl.DataFrame, scorer: str) -> None:
    emb = embeddings(corpus, scorer)
    proposals = proposals_for(corpus, scorer)
    ours = evaluate(corpus, emb, proposals=proposals)["localization"]
    theirs, printed = run_official("score_localization.py", *localization_files(tmp_path, corpus, emb, proposals))

    per_image = [assignment_accuracy(s) for _, _, s in gt_box_scores(corpus, emb.region, emb.inference)]
    assert [float(a) for a in theirs["gt_accs"]] == per_image  # image by image, ties included
    assert ours["n_images"] == len(theirs["gt_accs"]) == 6656  # every validation image, shared boxes too
    assert ours["gt_boxes"] == np.mean(theirs["gt_accs"]) * 100
    assert ours["n_images_auto"] == len(theirs["auto_accs"]) == 951
    assert ours["auto_boxes"] == np.mean(theirs["auto_accs"]) * 100
    assert ours["oracle_boxes"] == np.mean(theirs["oracle_auto_accs"]) * 100
    assert printed.strip() == (
        f"acc gt bbox = {ours['gt_boxes']:.4f} (n={ours['n_images']}), acc auto bbox = {ours['auto_boxes']:.4f} "
        f"(n={ours['n_images_auto']}), acc oracle bbox = {ours['oracle_boxes']:.4f} (n={ours['n_images_auto']})"
    )
    if scorer == "constant":  # lapjv's tie-break assigns no region its own inference; `lap` gave 2.17
        assert ours["gt_boxes"] == 0.0
    assert 0 < ours["oracle_boxes"] <= 100 and ours["auto_boxes"] <= ours["oracle_boxes"]


@pytest.mark.parametrize("scorer", SCORERS)
def test_retrieval_per_chunk_and_mean_equal_the_leaderboard(tmp_path: Path, corpus: pl.DataFrame, scorer: str) -> None:
    # three real chunks, the first 250 instances of each (the leaderboard's chunk files hold 1M pairs each)
    sub = corpus.filter(pl.col("chunk").is_in([0, 7, 22])).group_by("chunk", maintain_order=True).head(250)
    emb = embeddings(sub, scorer)
    ours = evaluate(sub, emb)["retrieval"]
    chunks = sub["chunk"].to_numpy()
    official = []
    for (chunk, rows, s), mine in zip(chunk_scores(emb.region, emb.inference, chunks), ours["per_chunk"], strict=True):
        theirs, printed = run_official(
            "score_retrieval.py", *retrieval_files(tmp_path, chunk, rows, s, emb.instance_id)
        )
        got = {
            "im2txt": float(np.mean(theirs["im2text_ranks"])),
            "txt2im": float(np.mean(theirs["text2im_ranks"])),
            "p_at_1": theirs["p_at_1"],
        }
        assert mine == {"chunk": chunk, "n": 250, **got}
        assert printed.split() == [
            "im2txt:",
            f"{mine['im2txt']:.3f}",
            "txt2im:",
            f"{mine['txt2im']:.3f}",
            "p_at_1:",
            f"{mine['p_at_1']:.3f}",
        ]
        official.append(got)
    assert ours["n_chunks"] == 3
    for k in ("im2txt", "txt2im", "p_at_1"):  # the paper's number: the mean over chunks
        assert ours[k] == float(np.mean([o[k] for o in official]))
    if scorer == "constant":
        assert ours["im2txt"] == ours["txt2im"] == 125.5 and ours["p_at_1"] == 0.0


@pytest.mark.parametrize("scorer", SCORERS)
def test_comparison_and_its_baselines_equal_the_leaderboard(tmp_path: Path, corpus: pl.DataFrame, scorer: str) -> None:
    emb = embeddings(corpus, scorer)
    ratings = ratings_for(corpus)
    ours = evaluate(corpus.head(0), emb, ratings=ratings)["comparison"]
    theirs, printed = run_official("score_comparison.py", *comparison_files(tmp_path, rated_sets(ratings, emb)))
    for k in ("human", "model", "random", "oracle"):
        assert ours[k] == np.mean(theirs["accuracy"][k]) * 100, k
    assert ours["n_sets"] == len(theirs["accuracy"]["model"]) == 400
    assert printed.splitlines() == [
        f"Human corr: {ours['human']:.2f}",
        f"Model corr: {ours['model']:.2f} (N=400)",
        f"Random corr: {ours['random']:.2f} (N=400)",
        f"Oracle corr: {ours['oracle']:.2f} (N=400)",
    ]
    assert ours["oracle"] > ours["human"] > abs(ours["random"])


@pytest.mark.slow  # runs Snakemake jobs
def test_comparison_metrics_rule_writes_every_number_and_reruns_nothing(tmp_path: Path, shared_data: Path) -> None:
    """The rule reads the corpus, the scorer's embeddings, ratings and proposals, and writes what evaluate() computes
    (the numbers checked against the leaderboard above): retrieval per chunk and mean, gt and auto boxes, baselines."""
    instances = sherlock.read_sherlock_json(shared_data / SHERLOCK_ZIP)
    sub = [i for i in instances if i["split_idx"] == 3][:150] + [i for i in instances if i["split_idx"] == 4][:150]
    (tmp_path / "sub.json").write_text(json.dumps(sub))
    corpus = sherlock.sherlock_corpus(sub)
    emb = embeddings(corpus, "integer")
    proposals, ratings = proposals_for(corpus, "integer", every=2), ratings_for(corpus, n_sets=30)
    (tmp_path / "results" / "comparison").mkdir(parents=True)
    # the upstream artifacts, oldest first, so that only comparison_metrics has to run
    io.write_parquet(corpus, tmp_path / "results/comparison/corpus.parquet", schemas.COMPARISON_CORPUS)
    io.write_parquet(
        pl.DataFrame(
            {"key": ["k"], "embedding": [[0.0]]}, schema={"key": pl.Utf8, "embedding": pl.Array(pl.Float32, 1)}
        ),
        tmp_path / "results/comparison/sbert.parquet",
        schemas.COMPARISON_SBERT,
    )
    io.write_parquet(emb.to_frame(), tmp_path / "results/comparison/embeddings.parquet", schemas.COMPARISON_EMBEDDINGS)
    io.write_parquet(proposals, tmp_path / "proposals.parquet", schemas.COMPARISON_PROPOSALS)
    ratings.write_csv(tmp_path / "ratings.csv")
    snakemake = str(Path(sys.executable).with_name("snakemake"))
    cmd = [
        snakemake,
        "--directory",
        str(tmp_path),
        "--configfile",
        str(ROOT / "config" / "sherlock.yaml"),
        "--config",
        f"sherlock={{annotations: {tmp_path / 'sub.json'}, split: val}}",
        f"comparison={{corpus: sherlock, ratings: {tmp_path / 'ratings.csv'}, proposals: {tmp_path / 'proposals.parquet'}}}",
        "--cores",
        "1",
        "results/comparison/metrics.json",
    ]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "rule comparison_metrics:" in res.stderr and "rule comparison_embed:" not in res.stderr
    written = json.loads((tmp_path / "results/comparison/metrics.json").read_text())
    assert written == json.loads(json.dumps(evaluate(corpus, emb, ratings, proposals)))
    assert written["localization"]["n_images_auto"] > 0 and len(written["retrieval"]["per_chunk"]) == 2
    assert set(written["comparison"]) == {"model", "human", "random", "oracle", "n_sets"}
    again = subprocess.run([*cmd, "-n"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
