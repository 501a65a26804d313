"""Benchmark of the comparison-set construction (Sherlock Appendix E) — time and peak memory, each phase in its own
process so that its peak RSS is its own.

1. The whole construction on the Sherlock validation set (22,737 instances, `text` scorer): cold (empty SBERT cache)
   and warm (cache filled). Baseline in the same run: the cold run's own SBERT encoding of the corpus' texts — the
   ratios say what the construction costs beyond encoding, and what the cache saves.
   Target: ≤ 2 min and ≤ 4 GB on 2 cores.
2. Soft dedup of 363,000 synthetic 384-d embeddings (the full Sherlock size) into round(0.8 N) clusters through the
   k-means partition. Baseline: exact agglomerative clustering of a subset, whose time per point × 363K shows what
   exact clustering would cost (and its n² memory: 363K² × 8 B ≈ 1 TB). Target: ≤ 4 GB.
3. Agreement of the partitioned clustering with exact clustering on a subset of real Sherlock inference embeddings
   (adjusted Rand index, 1 = identical partitions).
4. With --compare-batching: SBERT encoding of the corpus' ~40K distinct texts with text_embed.encode (sorted by
   exact token count, batches within a token budget: ~1% padding) against sentence-transformers' own batching
   (sorted by character count, batches of 256: ~40% padding), the baseline; and the largest difference between the
   two sets of vectors (1 - cosine).

    python -m benchmarks.comparison [--sherlock ../shared/data/sherlock/sherlock_val_with_split_idxs_v1_1.json.zip]
                                    [--n-synthetic 363000] [--skip-cold] [--construct-only] [--compare-batching]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SHERLOCK = (
    Path(os.environ.get("SQUIDFLOW_DATA", ROOT.parent / "shared" / "data"))
    / "sherlock"
    / "sherlock_val_with_split_idxs_v1_1.json.zip"
)  # the offline mirror (README)


def _phase_construct(args) -> dict:
    from squidflow.comparison import corpus as sherlock
    from squidflow.comparison import plausibility
    from squidflow.comparison import sets as comparison

    t0 = time.perf_counter()
    corpus = sherlock.load_sherlock(args.sherlock)
    emb = plausibility.text_scorer(corpus, encode=plausibility.sbert_encoder(args.cache))
    t_embed = time.perf_counter() - t0
    cfg = comparison.ComparisonConfig()
    pool = comparison.build_pool(corpus, emb.inference, cfg, progress=False)
    t_pool = time.perf_counter() - t0 - t_embed
    sets = comparison.build_sets(corpus, pool, emb, emb.inference, cfg, progress=False)
    total = time.perf_counter() - t0
    return {
        "total_s": total,
        "load_embed_s": t_embed,
        "pool_s": t_pool,
        "sets_s": total - t_embed - t_pool,
        "n_sets": sets["query_id"].n_unique(),
        "pool": len(pool),
        "clusters": int(pool["n_clusters"][0]),
    }


def _synthetic(n: int, d: int = 384, seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(max(1, n // 4), d)).astype(np.float32)
    x = centers[rng.integers(0, len(centers), n)]
    x += 0.3 * rng.normal(size=(n, d)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def _phase_dedup_synthetic(args) -> dict:
    import numpy as np

    from squidflow.comparison import dedup

    x = _synthetic(args.n_synthetic)
    k = dedup.n_soft_clusters(len(x))
    t0 = time.perf_counter()
    labels = dedup.soft_dedup_labels(x, k, exact_max=args.exact_max, progress=False)
    return {"total_s": time.perf_counter() - t0, "n": len(x), "clusters": int(len(np.unique(labels))), "k": k}


def _phase_dedup_exact_subset(args) -> dict:
    from squidflow.comparison import dedup

    x = _synthetic(args.exact_subset, seed=1)
    t0 = time.perf_counter()
    dedup.agglomerative_labels(x, dedup.n_soft_clusters(len(x)))
    return {"total_s": time.perf_counter() - t0, "n": len(x)}


def _phase_agreement(args) -> dict:
    import numpy as np

    from squidflow.comparison import corpus as sherlock
    from squidflow.comparison import dedup
    from squidflow.encoders import text_embed

    corpus = sherlock.load_sherlock(args.sherlock)
    texts = list(dict.fromkeys(corpus["inference"].to_list()))
    x = text_embed.encode_cached(texts, args.cache, progress=False)
    idx = np.random.default_rng(0).choice(len(x), size=min(args.exact_subset, len(x)), replace=False)
    sub = x[idx]
    k = dedup.n_soft_clusters(len(sub))
    exact = dedup.soft_dedup_labels(sub, k, exact_max=len(sub), progress=False)
    out = {"n": len(sub), "k": k}
    for part in (len(sub) // 2, len(sub) // 4):
        parted = dedup.soft_dedup_labels(sub, k, exact_max=part, progress=False)
        # same kept set? the share of exact clusters whose members all land in one partitioned cluster
        out[f"ari_parts_of_{part}"] = dedup.adjusted_rand_index(exact, parted)
    return out


def _phase_encode(args) -> dict:
    """SBERT-encode the corpus' distinct texts (no cache) with our token-count batching or sentence-transformers'."""
    import numpy as np

    from squidflow.comparison import corpus as sherlock
    from squidflow.encoders import text_embed

    corpus = sherlock.load_sherlock(args.sherlock)
    texts = list(dict.fromkeys(corpus["clue"].to_list() + corpus["inference"].to_list()))
    model = text_embed.load_sbert()
    t0 = time.perf_counter()
    if args.batching == "tokens":
        emb = text_embed.encode(texts)
    else:
        emb = model.encode(texts, batch_size=256, convert_to_numpy=True, normalize_embeddings=True)
    total = time.perf_counter() - t0
    np.save(args.emb_out, np.asarray(emb, dtype=np.float32))
    lengths = text_embed.token_lengths(texts)
    return {"total_s": total, "n": len(texts), "tokens": int(lengths.sum()), "max_tokens": int(lengths.max())}


PHASES = {
    "encode": _phase_encode,
    "construct": _phase_construct,
    "dedup_synthetic": _phase_dedup_synthetic,
    "dedup_exact_subset": _phase_dedup_exact_subset,
    "agreement": _phase_agreement,
}


def run_phase(name: str, args, extra: list[str] | None = None) -> dict:
    """Run one phase in a fresh process (2 threads) and return its result with its peak RSS in GB."""
    cmd = [
        sys.executable,
        __file__,
        "--phase",
        name,
        "--sherlock",
        str(args.sherlock),
        "--cache",
        str(args.cache),
        "--n-synthetic",
        str(args.n_synthetic),
        "--exact-subset",
        str(args.exact_subset),
        "--exact-max",
        str(args.exact_max),
        *(extra or []),
    ]
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "2",
        "MKL_NUM_THREADS": "2",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    t0 = time.perf_counter()
    with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
        proc = subprocess.Popen([*cmd, "--out", out.name], env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        if status != 0:
            raise SystemExit(f"phase {name} failed (status {status})")
        result = json.loads(Path(out.name).read_text())
    result["peak_gb"] = usage.ru_maxrss / 1e6  # KiB -> GB
    result["wall_s"] = time.perf_counter() - t0
    result["cpu_s"] = usage.ru_utime + usage.ru_stime
    return result


def compare_batching(args) -> None:
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        for batching in ("sentence-transformers", "tokens"):
            path = Path(tmp) / f"{batching}.npy"
            runs[batching] = run_phase("encode", args, ["--batching", batching, "--emb-out", str(path)])
            runs[batching]["emb"] = np.load(path)
    st, ours = runs["sentence-transformers"], runs["tokens"]
    cos = np.sum(st["emb"] * ours["emb"], axis=1)
    print(
        f"baseline: SBERT encoding of {st['n']} distinct texts ({st['tokens']} tokens, longest {st['max_tokens']}) "
        f"with sentence-transformers batching (256, by characters): {st['total_s']:.1f} s, peak {st['peak_gb']:.2f} GB"
    )
    print(
        f"SBERT encoding, token-count batches (text_embed.encode): {ours['total_s']:.1f} s, "
        f"peak {ours['peak_gb']:.2f} GB; largest 1 - cosine between the two: {1 - cos.min():.1e}"
    )
    print(f"  ratio token-count / sentence-transformers batching: {ours['total_s'] / st['total_s']:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sherlock", type=Path, default=DEFAULT_SHERLOCK)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "squidflow-bench-sbert.parquet")
    ap.add_argument("--n-synthetic", type=int, default=363_000)
    ap.add_argument("--exact-subset", type=int, default=8000)
    ap.add_argument("--exact-max", type=int, default=8000)
    ap.add_argument("--skip-cold", action="store_true", help="keep the SBERT cache (only the warm run)")
    ap.add_argument("--construct-only", action="store_true", help="only the Sherlock construction (1.), cold + warm")
    ap.add_argument(
        "--compare-batching",
        action="store_true",
        help="also time SBERT encoding with token-count vs sentence-transformers batching (4.)",
    )
    ap.add_argument("--phase", choices=sorted(PHASES))
    ap.add_argument("--batching", choices=["tokens", "sentence-transformers"], default="tokens")
    ap.add_argument("--emb-out")
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.phase:
        import torch

        torch.set_num_threads(2)
        res = PHASES[args.phase](args)
        Path(args.out).write_text(json.dumps(res))
        return

    print(f"cores available: {len(os.sched_getaffinity(0))}; load average {os.getloadavg()[0]:.1f}")
    if not args.skip_cold and args.cache.exists():
        args.cache.unlink()
    base = None
    if not args.skip_cold:
        cold = run_phase("construct", args)
        base = cold["load_embed_s"]
        print(f"baseline: loading + SBERT-encoding the corpus (cold cache): {base:.1f} s")
        print(
            f"Sherlock val construction, cold cache: {cold['wall_s']:.1f} s wall ({cold['cpu_s']:.0f} s CPU), "
            f"peak {cold['peak_gb']:.2f} GB; {cold['n_sets']} sets, pool {cold['pool']}, {cold['clusters']} clusters"
        )
        print(f"  ratio cold construction / its SBERT encoding: {cold['total_s'] / base:.2f}")
    warm = run_phase("construct", args)
    print(
        f"Sherlock val construction, warm cache: {warm['wall_s']:.1f} s wall ({warm['cpu_s']:.0f} s CPU), "
        f"peak {warm['peak_gb']:.2f} GB (load+embed {warm['load_embed_s']:.1f} s, pool {warm['pool_s']:.1f} s, "
        f"sets {warm['sets_s']:.1f} s); targets: <= 120 s, <= 4 GB"
    )
    if base:
        print(f"  ratio warm construction / cold SBERT encoding: {warm['total_s'] / base:.2f}")
    if args.compare_batching:
        compare_batching(args)
    if args.construct_only:
        return

    ex = run_phase("dedup_exact_subset", args)
    syn = run_phase("dedup_synthetic", args)
    per_point_exact = ex["total_s"] / ex["n"] ** 2
    print(
        f"baseline: exact agglomerative clustering of {ex['n']} points: {ex['total_s']:.1f} s, "
        f"peak {ex['peak_gb']:.2f} GB (O(n^2): {per_point_exact * syn['n'] ** 2 / 3600:.1f} h and "
        f"{syn['n'] ** 2 * 8 / 2 / 1e9:.0f} GB for {syn['n']} points)"
    )
    print(
        f"soft dedup of {syn['n']} synthetic 384-d embeddings -> {syn['clusters']} clusters (round(0.8 N) = "
        f"{syn['k']}): {syn['wall_s']:.1f} s wall, peak {syn['peak_gb']:.2f} GB; target <= 4 GB"
    )
    print(
        f"  ratio partitioned time / extrapolated exact time: {syn['total_s'] / (per_point_exact * syn['n'] ** 2):.4f}"
    )
    agr = run_phase("agreement", args)
    aris = ", ".join(f"{k.split('_of_')[1]}-point parts: ARI {v:.3f}" for k, v in agr.items() if k.startswith("ari"))
    print(f"agreement with exact clustering on {agr['n']} real Sherlock inferences ({agr['k']} clusters): {aris}")


if __name__ == "__main__":
    main()
